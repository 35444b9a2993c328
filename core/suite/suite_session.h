// One `mkb suite check` from its settings to the finished report: the suite's selection, the DSL descriptors, the
// report files checked up front, the store for peaks, the grader (one session or a pool), the earlier reports to
// resume from, the loop (suite_run.h) and the report files rewritten after it. The CLI parses and prints around it.
#pragma once

#include "core/grader_client/grader_pool.h"
#include "core/suite/suite_check.h"
#include "core/suite/suite_run.h"

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// What one suite check is to do, as plain settings.
struct SuiteCheckJob {
    std::filesystem::path suiteRoot; // as given; made absolute once it is known to be a folder
    std::string problemsGlob = "*";
    std::vector<std::string> devices; // several devices, one grader server each; empty: options.device alone
    SuiteCheckOptions options;        // dsls, gradings, flakiness, device, eager target, grade settings (the
                                      // descriptors and peaks are filled in by the check)
    std::vector<std::filesystem::path> dslDirs;
    std::filesystem::path storePath;
    bool storeNamed = false; // the store was named, so it is opened (created) even where no file is yet
    std::optional<std::filesystem::path> jsonPath;
    std::optional<std::filesystem::path> tablePath;
    std::vector<std::filesystem::path> resumeFrom; // earlier --json reports, the first holding a problem is used
    GraderLaunch launch;
    std::string command;                   // the command line recorded in the report
    std::vector<std::string> commandWords; // its words, for the table
};

/// Where a suite check stopped before its loop, each with its own exit code in the CLI.
enum class SuiteCheckStage {
    Selecting,      // the suite folder is missing or the glob selected nothing
    Descriptors,    // no DSL descriptor could be loaded
    Outputs,        // --json or --table cannot be written
    OpeningStore,   // the store for peaks could not be opened
    StartingGrader, // the grader (or the pool) did not start
    Resuming,       // an earlier report could not be read
};

struct SuiteCheckCallbacks {
    /// Just before the grader starts (the CLI installs its interrupt handler there).
    std::function<void()> graderStarting;
    /// A line worth printing while peaks are found (that a probe runs, or why it failed).
    std::function<void(const std::string&)> say;
    /// A pool device left the rotation.
    std::function<void(const std::string& device, const std::string& message)> deviceLost;
    /// The grader runs and the peaks are known: the report's header, the options (descriptorErrors included) and how
    /// many problems were selected, before the earlier reports are read and the first problem is checked.
    std::function<void(const SuiteCheckReport&, const SuiteCheckOptions&, std::size_t selected)> started;
    /// As SuiteRunHooks: a problem's status words, and each problem once done or reused.
    std::function<void(const Problem&, const std::string&)> onStage;
    std::function<void(const ProblemCheck&)> onProblem;
};

struct SuiteCheckRun {
    std::optional<SuiteCheckStage> failedAt; // set when the check stopped before its loop
    std::string error;                       // the one line saying why
    SuiteCheckReport report;
    SuiteCheckOptions options;
    std::size_t selected = 0;
    SuiteRunOutcome outcome;
    std::string resumedFrom;  // the earlier reports' paths, ", "-separated ("" without --resume)
    Status finalWrite = Ok{}; // the report files written once the loop ended (interrupted or not)
};

/// Runs the whole check. Report files are written after every problem and once more at the end; an interrupt (cancel)
/// ends the loop after the problem at hand, leaving a partial report that says what is left.
SuiteCheckRun runSuiteCheck(const SuiteCheckJob& job, const SuiteCheckCallbacks& callbacks,
                            const std::atomic<bool>& cancel);

} // namespace mkb
