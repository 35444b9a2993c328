// The gate of one attempt (DESIGN §6): the budget checks, grading each counted submission through the run's grading
// (the worker's grader, or the run's pool of devices), and recording it, with the submission's progress event.
#pragma once

#include "core/agents/driver.h"
#include "core/protocol/progress.h"
#include "core/records/trial.h"
#include "core/wire/grade_request.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>

namespace mkb {

/// What a gate needs from the run that owns it.
struct TrialGateContext {
    AttemptBudget budget;
    GradeRequest request;    // the attempt's request (makeGradeRequest); each submission sets its own kernel path
    std::string problemName; // for the report heading
    std::string coordinate;  // for the progress event
    std::int64_t trialId = 0;
    std::filesystem::path submissionsDir; // submission_N.py goes here
    const std::atomic<bool>* cancel = nullptr;
    std::function<Status(const SubmissionRecord&)> recordSubmission;
    std::function<void(ProgressEvent)> emit;
};

/// Grades one request and says which device judged it (Verdict::device); stops when *cancel turns true.
using GradeFunction = std::function<Verdict(const GradeRequest& request, const std::atomic<bool>* cancel)>;

class TrialGate final : public SubmissionGate {
public:
    TrialGate(TrialGateContext context, GradeFunction grade);

    SubmitOutcome submit(const std::string& kernelSource) override;
    int submissionsLeft() const override;
    double secondsLeft() const override;

    /// The first store error a counted submission met ("" when every one was stored). An attempt with a submission
    /// the store lost is not whole: the runner files it as an infrastructure error, so it is run again.
    std::string unstoredSubmission() const;

private:
    using Clock = std::chrono::steady_clock;
    double secondsSinceStart() const;
    Verdict gradeWithinWallClock(const GradeRequest& request, bool& deadlineHit);

    TrialGateContext context_;
    GradeFunction grade_;
    Clock::time_point started_;
    mutable std::mutex mutex_;
    int used_ = 0;
    std::string unstored_; // guarded by mutex_
};

} // namespace mkb
