// Progress of a run as events: the terminal display (stderr), the JSON-lines stream the GUI follows (stdout), and
// the one reader of that stream.
#pragma once

#include "core/protocol/planner.h"

#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mkb {

enum class ProgressEventKind { Plan, TrialStarted, Submission, TrialFinished, RunFinished, Retimed, JobState, Note };

/// "plan", "trial_started", "submission", "trial_finished", "run_finished", "retimed" (a cell's paired re-timing
/// ended: coordinate names the cell, status is the stop or "failed"/"error"), "job_state" (the Slurm job of a trial
/// got a new state: coordinate, job_id and job_state say which and what), "note" (one line about the run itself, e.g.
/// a device that left the rotation: coordinate names the device, message says what and why). Readers ignore events
/// they don't know.
const char* toString(ProgressEventKind kind);

/// Running totals, carried by every event.
struct ProgressCounts {
    int total = 0; // trials the run attempts or records (run, rerun, redo, skip)
    int done = 0;  // finished or skipped
    int running = 0;
    int failed = 0; // infrastructure errors and skill arms left waiting for a source that failed
    int interrupted = 0;
    int passed = 0; // done trials whose final verdict passed
    double elapsedSeconds = 0;
    std::optional<double> etaSeconds; // from the mean attempt duration, once one attempt finished
};

/// One entry of a plan event as the JSON stream carries it: a trial the run will run, rerun, reuse, keep stale or skip.
struct PlannedTrial {
    std::string coordinate;
    std::string problem;
    std::string arm;
    std::string status; // the plan status in words (run, rerun, reuse, stale, redo, skip)
    std::string reason;
};

struct ProgressEvent {
    ProgressEventKind kind = ProgressEventKind::Plan;
    ProgressCounts counts;
    const Plan* plan = nullptr;        // kind Plan, when writing
    std::vector<PlannedTrial> planned; // kind Plan, when read back by parseProgressEventJson
    std::string coordinate;            // trial events
    std::int64_t trialId = 0;
    std::string status;  // trial_finished: "finished", "skipped", ...; run_finished: "complete", ...
    std::string message; // one line: error, reason, or what a submission came to
    // submissions and finished trials
    int submissionIndex = 0;
    bool counted = false;
    bool stored = true; // submission: false when the store refused it (a full disk); message then says why
    std::optional<bool> passed;
    std::optional<double> speedup;
    int submissionsLeft = 0;
    double secondsLeft = 0;
    int exitCode = 0; // run_finished
    // retimed: the base -> skill paired ratio with its 95% CI and the rounds it took
    std::optional<double> ratio;
    std::optional<double> ciLow;
    std::optional<double> ciHigh;
    int rounds = 0;
    // a trial run as a Slurm job (--executor slurm; empty for local runs): the job's id ("1234_5" for task 5 of array
    // 1234) and its state word as Slurm reports it (PENDING, RUNNING, COMPLETED, CANCELLED, …; "" when not known)
    std::string jobId;
    std::string jobState;
};

/// Receives events from several threads; implementations serialise themselves.
class ProgressSink {
public:
    virtual ~ProgressSink();
    virtual void onEvent(const ProgressEvent& event) = 0;
};

/// One JSON object (no newline) for the event: {"event": "...", ...}. A trial event with a jobId carries "job_id" and
/// "job_state"; events of local runs carry neither.
std::string progressEventJson(const ProgressEvent& event);

/// The event on one line of progressEventJson's output, or nullopt for a line that is not a progress event (blank,
/// foreign output, broken JSON, an event kind this version does not know). Unknown fields are ignored, so the output
/// of a newer mkb stays readable. A retimed event's cell is read into coordinate.
std::optional<ProgressEvent> parseProgressEventJson(std::string_view line);

/// One human line for the event, prefixed with the counts, e.g.
/// "[3/12 done, 2 running, 0 failed | 00:41 elapsed, ETA 01:10] p01_r1_solo_triton finished: passed 1.23x".
std::string progressEventLine(const ProgressEvent& event);

/// "01:10" or "1:02:03".
std::string formatDuration(double seconds);

/// Writes progressEventLine to a stream (stderr for the terminal display).
class TextProgress final : public ProgressSink {
public:
    explicit TextProgress(std::FILE* stream) : stream_(stream) {}
    void onEvent(const ProgressEvent& event) override;

private:
    std::FILE* stream_;
    std::mutex mutex_;
};

/// Writes progressEventJson lines to a stream (stdout for --progress json), flushed per event.
class JsonProgress final : public ProgressSink {
public:
    explicit JsonProgress(std::FILE* stream) : stream_(stream) {}
    void onEvent(const ProgressEvent& event) override;

private:
    std::FILE* stream_;
    std::mutex mutex_;
};

} // namespace mkb
