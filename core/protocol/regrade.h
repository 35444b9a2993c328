// `mkb regrade`: every stored submission of the selected trials graded again by our grader under one boundary, through
// the warm grader pool `mkb run` uses, each verdict filed beside the submission's own (an imported corpus's "kbx"
// verdicts stay as they are). Convergent: a submission already regraded under the boundary with the same grader and
// problem fingerprints is skipped, so running the command again changes nothing and an interrupted run resumes.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/records/verdict.h"
#include "core/util/result.h"
#include "core/wire/grade_request.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

struct RegradeJob {
    std::optional<std::string> model; // only this model's live trials; unset: every model
    std::string problems = "*";       // a glob over "NNN", "NNN_slug", "family/NNN_slug" or the task id
    std::vector<std::string> devices = {"cuda:0"};
    int workers = 0;                  // gradings in flight at once; 0: one per device
    std::optional<double> timeLimitS; // no grading starts after this many seconds; the rest waits for a rerun
    GradeSettings grade;              // its boundary is the regrade's ("mkb" or "strict")
    std::optional<std::string> dsl;   // grade as this DSL instead of each trial's (a corpus in another DSL)
    std::function<Result<std::string>(const std::string&)> dslDescriptor; // a DSL id's descriptor JSON
    bool dryRun = false;                             // list what would be graded (and write the kernels); grade nothing
    std::optional<std::filesystem::path> kernelsOut; // keep the kernel.py of every round here (else a temp folder)
};

/// How one submission fared.
enum class RegradeStatus {
    Graded,         // graded now and filed
    Current,        // already regraded under this boundary, grader and problem: skipped
    NoProblem,      // the store holds no problem file for its trial: skipped, with the reason
    NotAdapted,     // its code could not be made a kernel.py (no code, no reference call): skipped, with the reason
    WouldGrade,     // a dry run's "to grade"
    Infrastructure, // the grader failed (not the kernel): nothing filed, a rerun tries again
    Left,           // not started: the time limit or an interrupt came first
};

const char* toString(RegradeStatus status);

/// A verdict in a few words for a round's line: "passed 1.23x", "correct, not passed: ...", "failed (load): ...".
std::string verdictInWords(const Verdict& verdict);

/// One stored submission as the regrade saw it.
struct RegradeRound {
    std::int64_t trialId = 0;
    std::int64_t submissionId = 0;
    std::string task;  // "Activation/gelu_bf16" for a corpus trial, else "family/NNN_slug"
    std::string round; // "round_1" for a corpus trial (submission index - 1), else "submission 2"
    RegradeStatus status = RegradeStatus::Left;
    std::string reason;           // why it was skipped or failed to grade
    std::optional<Verdict> ours;  // our verdict (graded now, or the current one found in the store)
    Verdict theirs;               // the submission's own verdict (KernelBench-X's for a corpus round)
    std::filesystem::path kernel; // the kernel.py graded (or that would be)
};

struct RegradeSummary {
    std::vector<RegradeRound> rounds; // in trial then submission order
    std::string graderFingerprint;    // with the boundary
    double seconds = 0;               // the whole regrade
    double gradingSeconds = 0;        // summed over the rounds graded now
    bool cancelled = false;
    bool timeLimitReached = false;
    int count(RegradeStatus status) const;
};

struct RegradeCallbacks {
    std::function<void()> graderStarted;                // the pool runs (install a Ctrl+C handler now)
    std::function<void(const RegradeRound&)> roundDone; // each round once its status is known, as it happens
};

/// Where a regrade stopped when it could not finish.
enum class RegradeStage { OpeningStore, Selecting, StartingGrader, Filing };

struct RegradeRun {
    std::optional<RegradeSummary> summary;
    RegradeStage failedAt = RegradeStage::Filing;
    std::string error; // one line when summary is unset
};

/// Regrades the store at storePath: opens it (read-only for a dry run), selects the live trials and their submissions,
/// starts one grader server per device, grades what is missing with job.workers in flight and files each verdict as
/// it arrives (a stop keeps what was filed).
RegradeRun regradeStore(const std::filesystem::path& storePath, const GraderLaunch& launch, const RegradeJob& job,
                        const RegradeCallbacks& callbacks, const std::atomic<bool>* cancel);

} // namespace mkb
