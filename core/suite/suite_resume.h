// Resuming `mkb suite check` from an earlier --json report: which problems' results still hold and can be reused.
#pragma once

#include "core/records/problem.h"
#include "core/suite/suite_check.h"
#include "core/util/result.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// An earlier suite report: what resuming needs, and the heading facts its table shows (`mkb suite table`).
struct EarlierSuiteReport {
    std::filesystem::path path;
    std::string graderFingerprint;
    std::string boundary; // "legacy" for a report written before boundaries existed
    std::string device;
    std::vector<std::string> dsls;
    int gradings = 0;
    FlakinessMode flakiness = FlakinessMode::Separate;
    bool everySolutionRepeated = false;         // "flakiness_scope" is kFlakinessEverySolution
    bool validateOnly = false;                  // "validate_only": made by `mkb suite check --validate-only`
    std::map<std::string, std::string> entries; // problem name → its entry (JSON text)
    std::vector<std::string> names;             // the entries' problem names in the report's order

    // Heading facts, as SuiteCheckReport has them; "" or empty when the report does not say.
    std::string deviceName;
    std::string date;
    std::string command;
    std::vector<std::string> commandWords; // older reports: the recorded command line split into words
    std::string storePath;                 // older reports: the command's --store
    std::string suiteRoot;                 // the suite's folder where the report was made
    std::string peaksJson;
    std::string peaksNote;
    std::optional<double> eagerTargetMs;
    std::optional<int> drawsPerGrading; // from the first repeat the report holds
    std::vector<std::string> catalogIssues;
    std::vector<std::string> unchecked;
};

/// Reads a report written by `mkb suite check --json` (complete or partial). The error names the file, as `label`
/// ("--resume FILE", "report FILE"), and what is wrong with it.
Result<EarlierSuiteReport> loadEarlierSuiteReport(const std::filesystem::path& path,
                                                  const std::string& label = "--resume");

/// The earlier report's check of `problem` as it was recorded (infrastructure errors included), when the problem file
/// and every solution file are still those it checked; otherwise an error saying in a few words what changed.
Result<ProblemCheck> checkFromReport(const EarlierSuiteReport& earlier, const Problem& problem);

/// The earlier check of `problem`, when it still holds for this run: same grader fingerprint, implementation boundary,
/// DSLs, number of gradings and flakiness method, checked on this run's device (with --devices, on one of its
/// devices) and on the same model of GPU where both names are known, the same problem fingerprint, every solution file
/// unchanged, and no infrastructure error. Solution files are looked up where this run's catalog has them, so a report
/// carries over to another checkout of the same suite. Otherwise an error saying in a few words why it must be checked
/// again.
Result<ProblemCheck> reusableCheck(const EarlierSuiteReport& earlier, const Problem& problem,
                                   const SuiteCheckOptions& options, const std::string& graderFingerprint);

} // namespace mkb
