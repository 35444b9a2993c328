// Suite validation through one grader session: each problem validated, its shipped solutions graded, every passing
// solution graded again for flakiness; the results as plain data (renderings: suite_report.h; the loop: suite_run.h).
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/records/problem.h"
#include "core/records/verdict.h"
#include "core/suite/suite_validation.h"
#include "core/util/result.h"
#include "core/wire/grade_request.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// True when every correctness draw of the grading held: the flakiness criterion. A correctness-only grading
/// (timing_draws 0) ends in "timing did not complete", so `correct` alone cannot say it.
bool correctnessHeld(const Verdict& verdict);

/// How a solution's flakiness gradings ("20/20") are run (`mkb suite check --flakiness`).
enum class FlakinessMode {
    Separate, // the full grading, then each repeat its own correctness-only evaluation in a fresh child
    Pooled,   // the full grading, then the gradings-1 repeats as one evaluation of (gradings-1) × draws
    Single,   // one evaluation per solution: gradings × draws correctness draws, then the timing
};
/// "separate", "pooled" or "single": the --flakiness word and the report's "flakiness_mode".
const char* flakinessModeName(FlakinessMode mode);
/// The mode a --flakiness word or a report's "flakiness_mode" names; Separate for anything else.
FlakinessMode flakinessModeFromName(const std::string& name);

/// The repeated correctness-only gradings of one solution ("20/20").
struct FlakinessCheck {
    std::string dsl;
    int gradings = 0; // including the full grading
    int held = 0;
    std::vector<std::string> failures; // the first few failures, one line each
    bool pooled = false;               // the repeats' draws ran in one evaluation (FlakinessMode Pooled or Single)
    int drawsPerGrading = 0;           // correctness draws that make up one grading
    // The repeats' draws were shared with the problem's other solutions (FlakinessMode Single on a slow reference):
    // each draw's reference and anchor computed once for all of them (kShareDrawsFromEagerMs).
    bool sharedDraws = false;
};

/// --flakiness single shares the repeats' draws across a problem's solutions when its eager reference takes at least
/// this long (validation's median): each solution's full grading keeps its own draws and its timing, and the other
/// gradings' draws run in one pool for all of them, each draw's reference and float64 anchor computed once. Below it,
/// the reference is cheap and a pool child (a process that imports and compiles every solution again, some 3-4 s on
/// an H100) costs more than it saves. At 5 ms the two break even, by estimate: a draw's reference and its float64
/// anchor (usually slower than the reference) are saved for three of four solutions' 95 draws, 285 x 2 x 5 ms.
/// bench/README.md (seventeenth batch) measures the problems on either side.
inline constexpr double kShareDrawsFromEagerMs = 5.0;

/// Below kShareDrawsFromEagerMs, a problem whose draws are costly anyway (large inputs, a slow make_inputs, a slow
/// float64 anchor) shares the repeats of the solutions after the first one whose evaluation ran every draw, when that
/// evaluation's correctness stage took at least this long per draw (the compile of its first call included) and two
/// solutions or more come after it. With three solutions sharing, 95 draws' inputs, reference and anchor computed
/// once instead of three times save more than the pool's own 3-4 s once they take about 20 ms a draw; the measured
/// draw also holds the solution's own call and its compile, hence twice that (an estimate; H100, seventeenth batch of
/// bench/README.md: kv_cache/43 and 44 took 55-74 ms a draw with eager references of 4.6 and 0.55 ms). Measured once
/// since, it saved nothing: kv_cache/44 took 43.3 s under it against 37.1 s without (eighteenth batch), most likely
/// because its solutions' own share of a draw (the cache's clone, the call, the comparison) is most of the draw
/// (inferred, not profiled); 43 is not yet measured. The rule stands until a per-draw split of that time says where the
/// bound belongs.
inline constexpr double kShareDrawsFromDrawMs = 40.0;

/// One shipped solution of one DSL, graded once with full timing, then (when it passed) repeated for flakiness.
struct SolutionCheck {
    std::string dsl;
    std::filesystem::path path;
    bool present = false;
    std::string sha256;  // of the solution file's bytes, when present
    std::string problem; // one line when this solution could not be graded or failed ("" when it passed)
    std::optional<Verdict> verdict;
    std::optional<FlakinessCheck> flakiness; // the repeats; none when it did not pass or repeats are off
    bool prestarted = false; // its grading ran in a child the grader had pre-started (and warmed) for it
};

/// The order a problem's DSLs are checked in: `dsls`, or reversed when the grader's pre-started child is for the last
/// of them (`warmDsl`, GraderProcess::prestartedDsl), so that a problem starts with the DSL the one before ended with.
std::vector<std::string> checkingOrder(const std::vector<std::string>& dsls, const std::string& warmDsl);

/// SHA-256 of a solution file's bytes; "" when it cannot be read.
std::string solutionFileSha256(const std::filesystem::path& path);

/// Credits `gradings` pooled gradings of `drawsPerGrading` draws each from one correctness-only evaluation that ran
/// gradings × drawsPerGrading draws: grading g holds when none of its draws is in verdict.failedDraws and the
/// evaluation itself completed its draws (a timeout, crash or compliance failure fails every draw it did not report).
/// Grading numbers in the failure lines start at `firstNumber`.
void creditPooledGradings(const Verdict& pooled, int gradings, int drawsPerGrading, int firstNumber,
                          FlakinessCheck& into);

struct ProblemCheck {
    Problem problem;
    ProblemValidation validation;
    std::vector<SolutionCheck> solutions; // in the order of SuiteCheckOptions::dsls, each with its flakiness repeats
    std::vector<std::string> problems;    // every issue, one line each, naming the problem (and DSL where one applies)
    bool infrastructureError = false;
    bool reused = false; // taken from an earlier report (--resume) rather than checked in this run
    std::string device;  // the device it was checked on (--devices: the pool device); "" when not recorded
    std::optional<double> checkSeconds; // wall time of the whole check (validation, gradings, repeats); none when the
                                        // report that holds it did not record one

    bool clean() const { return problems.empty(); }
};

struct SuiteCheckOptions {
    std::vector<std::string> dsls = {"triton", "cuda"};
    std::map<std::string, std::string> descriptors;      // DSL id → descriptor JSON; a DSL missing here is reported
    std::map<std::string, std::string> descriptorErrors; // DSL id → why its descriptor could not be loaded
    int gradings = 20;                                   // flakiness gradings per solution, the full one included
    FlakinessMode flakiness = FlakinessMode::Separate;
    std::string device = "cuda:0";
    double eagerTargetMs = 0.05;
    GradeSettings settings; // the full grading's settings
    std::string peaksJson;  // "" when unknown
    bool lockDevice = true;
    // This run's devices by name as probed ("cuda:0" → "NVIDIA H200"), so that a resumed check made on another model
    // of GPU at the same index is not reused; a device missing here (the CPU, a failed probe) is not compared.
    std::map<std::string, std::string> deviceNames;
    // Validation only (`mkb suite check --validate-only`): no solution is graded or repeated (dsls empty, gradings 0),
    // and the report's table is the validation table (validationTableMarkdown).
    bool validateOnly = false;
};

/// Checks one problem through the session: validate, then for each DSL grade its solution once and, when it passed,
/// repeat it gradings-1 times correctness-only (FlakinessMode Single: one evaluation holds both, or the repeats are
/// shared across the solutions, kShareDrawsFromEagerMs), in checkingOrder.
/// `progress` hears short status words.
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
    std::string boundary = "mkb"; // the implementation boundary the solutions were graded under
    std::string peaksJson;
    std::string peaksNote; // where the peaks came from
    std::string date;      // UTC, ISO 8601
    std::string command;   // the exact command line that produced the report
    // What the markdown table must not print as they are (they name this machine): the suite root, the store, and
    // the command's words (shown with paths relative to the suite, other paths by their file name only).
    std::filesystem::path suiteRoot;
    std::filesystem::path storePath;
    std::vector<std::string> commandWords;
    double eagerTargetMs = 0.05;
    FlakinessMode flakiness = FlakinessMode::Separate;
    int drawsPerGrading = 5;
    std::vector<std::string> unchecked; // selected problems not (yet) checked: the report is partial when any
    bool validateOnly = false;          // the problems were validated alone (SuiteCheckOptions::validateOnly)

    bool clean() const;
    bool anyInfrastructureError() const;
};

} // namespace mkb
