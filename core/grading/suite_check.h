// Suite validation through one grader session: each problem validated, its shipped solutions graded, one solution
// graded again for flakiness; the results as plain data, in words, as JSON and as the generated suite table.
#pragma once

#include "core/grading/grade_request.h"
#include "core/grading/grader_process.h"
#include "core/records/problem.h"
#include "core/records/verdict.h"
#include "core/util/result.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// What redrawing one input alone did to the reference's output (the grader's "validation.inputs" entry).
struct InputSensitivity {
    int index = 0;
    std::string name;        // the reference's parameter name
    std::string description; // "input 2 (seq_lens, int32[8])"
    bool tensor = false;     // only tensors are redrawn
    std::optional<bool> changed;
    bool exempt = false; // listed in MKB_META["insensitive"]
    std::optional<double> maxDiff;
    std::optional<double> allowance;
    std::string note;    // "output changed, max |diff| 0.83 > allowance 0.004"
    std::string skipped; // why this input was not checked ("its float64 anchor needs 28.8 GiB and ...")
    bool error = false;  // the reference failed with this input redrawn alone ("cannot be redrawn alone")
};

/// The grader's validation of one problem (docs/grader-protocol.md, "validate").
struct ProblemValidation {
    bool clean = false;
    std::string error;                // "" unless validation could not finish
    bool infrastructureError = false; // the grader session failed (crash, silence, refusal), not the problem
    std::optional<bool> deterministic;
    std::string determinismNote;
    std::optional<bool> nearZero;
    std::vector<std::string> nearZeroOutputs;
    std::optional<bool> sensitive;
    std::vector<InputSensitivity> inputs;
    std::optional<double> eagerMedianMs;
    std::optional<double> eagerIqrMs;
    double eagerTargetMs = 0.05;
    std::optional<bool> eagerOk;
    std::vector<std::string> issues; // one line each, as the grader worded them
    std::string deviceName;
    double seconds = 0;
    std::string json; // the validation object as the grader wrote it
};

/// Parses the "validation" object of a validation reply; strict on "clean" and "issues", tolerant otherwise.
Result<ProblemValidation> validationFromJson(const std::string& objectText);

/// A validation that could not be obtained from the grader: infrastructureError set, the message as error and issue.
ProblemValidation failedValidation(const std::string& message);

struct ValidateRequest {
    std::filesystem::path problemPath; // absolute
    std::string device = "cuda:0";
    GradeSettings settings;      // warmupDraws, timingDraws and timeoutS apply
    double eagerTargetMs = 0.05; // the eager median a problem must reach
    std::string problemMetaJson; // as for grading ("" when none)
};

/// The request line (no trailing newline).
std::string validateRequestJson(const ValidateRequest& request, const std::string& id);

/// Sends one validate request through the session, holding the device's GpuLock when lockDevice. Never fails as a
/// call: session failures come back as failedValidation(...).
ProblemValidation validateProblem(GraderProcess& grader, const ValidateRequest& request, bool lockDevice,
                                  const std::atomic<bool>* cancel = nullptr);

/// True when every correctness draw of the grading held: the flakiness criterion. A correctness-only grading
/// (timing_draws 0) ends in "timing did not complete", so `correct` alone cannot say it.
bool correctnessHeld(const Verdict& verdict);

/// One shipped solution of one DSL, graded once with full timing.
struct SolutionCheck {
    std::string dsl;
    std::filesystem::path path;
    bool present = false;
    std::string sha256;  // of the solution file's bytes, when present
    std::string problem; // one line when this solution could not be graded or failed ("" when it passed)
    std::optional<Verdict> verdict;
};

/// SHA-256 of a solution file's bytes; "" when it cannot be read.
std::string solutionFileSha256(const std::filesystem::path& path);

/// The repeated correctness-only gradings of one solution ("20/20").
struct FlakinessCheck {
    std::string dsl;
    int gradings = 0; // including the full grading
    int held = 0;
    std::vector<std::string> failures; // the first few failures, one line each
    bool pooled = false;               // the repeats' draws ran in one evaluation (SuiteCheckOptions::pooledFlakiness)
    int drawsPerGrading = 0;           // correctness draws that make up one grading
};

/// Credits `gradings` pooled gradings of `drawsPerGrading` draws each from one correctness-only evaluation that ran
/// gradings × drawsPerGrading draws: grading g holds when none of its draws is in verdict.failedDraws and the
/// evaluation itself completed its draws (a timeout, crash or compliance failure fails every draw it did not report).
/// Grading numbers in the failure lines start at `firstNumber`.
void creditPooledGradings(const Verdict& pooled, int gradings, int drawsPerGrading, int firstNumber,
                          FlakinessCheck& into);

struct ProblemCheck {
    Problem problem;
    ProblemValidation validation;
    std::vector<SolutionCheck> solutions; // in the order of SuiteCheckOptions::dsls
    std::optional<FlakinessCheck> flakiness;
    std::vector<std::string> problems; // every issue, one line each, naming the problem (and DSL where one applies)
    bool infrastructureError = false;
    bool reused = false; // taken from an earlier report (--resume) rather than checked in this run

    bool clean() const { return problems.empty(); }
};

struct SuiteCheckOptions {
    std::vector<std::string> dsls = {"triton", "cuda"};
    std::map<std::string, std::string> descriptors;      // DSL id → descriptor JSON; a DSL missing here is reported
    std::map<std::string, std::string> descriptorErrors; // DSL id → why its descriptor could not be loaded
    int gradings = 20;                                   // flakiness gradings per problem, the full grading included
    bool pooledFlakiness = false; // the gradings-1 repeats as one evaluation of (gradings-1) × correctness draws
    std::string device = "cuda:0";
    double eagerTargetMs = 0.05;
    GradeSettings settings; // the full grading's settings
    std::string peaksJson;  // "" when unknown
    bool lockDevice = true;
};

/// Checks one problem through the session: validate, grade each DSL's solution once, then gradings-1
/// correctness-only gradings of the first DSL whose solution passed. `progress` hears short status words.
ProblemCheck checkProblem(GraderProcess& grader, const Problem& problem, const SuiteCheckOptions& options,
                          const std::function<void(const std::string&)>& progress = {},
                          const std::atomic<bool>* cancel = nullptr);

/// The whole run, for the summary, the JSON and the table.
struct SuiteCheckReport {
    std::vector<ProblemCheck> problems;
    std::vector<std::string> catalogIssues; // malformed problem files, one line each
    std::vector<std::string> dsls;
    int gradings = 0;
    std::string device;
    std::string deviceName;
    std::string graderFingerprint;
    std::string peaksJson;
    std::string peaksNote; // where the peaks came from
    std::string date;      // UTC, ISO 8601
    std::string command;   // the exact command line that produced the report
    double eagerTargetMs = 0.05;
    bool pooledFlakiness = false;
    int drawsPerGrading = 5;
    std::vector<std::string> unchecked; // selected problems not (yet) checked: the report is partial when any

    bool clean() const;
    bool anyInfrastructureError() const;
};

/// One line per problem: validation figures, each solution's outcome and speedup, flakiness.
std::string problemLine(const ProblemCheck& check, int gradings);

/// The closing summary ("36 problems: 36 deterministic, 35 sensitive (1 issue: ...), ...").
std::string suiteSummary(const SuiteCheckReport& report);

/// Everything machine-readably: the grader's own validation and verdict objects inside.
std::string suiteReportJson(const SuiteCheckReport& report);

/// How the flakiness gradings were made, in words (the table's heading line).
std::string flakinessMethod(const SuiteCheckReport& report);

/// The markdown suite table (generated; docs/suite.md): problem, family, tags, eager ms, speedup and IOU/MFU per
/// DSL, validation, with device, date, grader fingerprint and the command in its heading.
std::string suiteTableMarkdown(const SuiteCheckReport& report);

} // namespace mkb
