// One attempt's gate: budget checks, grading under the attempt's wall clock, and recording counted submissions.
#include "core/protocol/trial_gate.h"

#include "core/grader_client/report_text.h"
#include "core/util/text.h"

#include <algorithm>
#include <cstdio>
#include <thread>

namespace mkb {

namespace fs = std::filesystem;

TrialGate::TrialGate(TrialGateContext context, GradeFunction grade)
    : context_(std::move(context)), grade_(std::move(grade)), started_(Clock::now()) {}

double TrialGate::secondsSinceStart() const {
    return std::chrono::duration<double>(Clock::now() - started_).count();
}

Verdict TrialGate::gradeWithinWallClock(const GradeRequest& request, bool& deadlineHit) {
    // The wall clock includes grading: a grading still running when it runs out is abandoned (and not counted).
    std::atomic<bool> stopGrading{false};
    std::atomic<bool> gradingDone{false};
    std::atomic<bool> hit{false};
    std::thread watchdog([&]() {
        while (!gradingDone.load()) {
            if (context_.cancel && context_.cancel->load()) {
                stopGrading.store(true);
            } else if (secondsSinceStart() >= context_.budget.wallSeconds) {
                hit.store(true);
                stopGrading.store(true);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    Verdict verdict = grade_(request, &stopGrading);
    gradingDone.store(true);
    watchdog.join();
    deadlineHit = hit.load();
    return verdict;
}

SubmitOutcome TrialGate::submit(const std::string& kernelSource) {
    std::lock_guard<std::mutex> lock(mutex_);
    SubmitOutcome outcome;
    const AttemptBudget& budget = context_.budget;
    auto finish = [&](std::string report) {
        outcome.reportText = std::move(report);
        outcome.submissionsLeft = budget.maxSubmissions - used_;
        outcome.secondsLeft = std::max(0.0, budget.wallSeconds - secondsSinceStart());
        return outcome;
    };
    if (context_.cancel && context_.cancel->load()) {
        return finish("The run was stopped; nothing was graded.\n");
    }
    if (used_ >= budget.maxSubmissions) {
        return finish("No feedback submissions left (all " + std::to_string(budget.maxSubmissions) +
                      " used); nothing was graded. Your last kernel.py is graded at the end.\n");
    }
    if (secondsSinceStart() >= budget.wallSeconds) {
        return finish("The wall clock of " + std::to_string(static_cast<long>(budget.wallSeconds)) +
                      " s is spent; nothing was graded.\n");
    }
    if (kernelSource.size() > static_cast<std::size_t>(budget.maxKernelBytes)) {
        return finish("kernel.py is " + std::to_string(kernelSource.size()) + " bytes, over the limit of " +
                      std::to_string(budget.maxKernelBytes) +
                      "; nothing was graded and the submission is not "
                      "counted. Make it smaller.\n");
    }
    std::error_code ec;
    fs::create_directories(context_.submissionsDir, ec);
    const fs::path kernelPath = context_.submissionsDir / ("submission_" + std::to_string(used_ + 1) + ".py");
    if (Status written = writeFileAtomically(kernelPath, kernelSource); !written) {
        return finish("The workbench could not write the kernel for grading (" + written.error().message +
                      "); the submission is not counted.\n");
    }
    GradeRequest request = context_.request;
    request.kernelPath = kernelPath;
    bool deadlineHit = false;
    Verdict verdict = gradeWithinWallClock(request, deadlineHit);
    const ReportHeading heading{context_.problemName, request.dsl, "kernel.py",
                                verdict.device.empty() ? request.device : verdict.device};
    if (deadlineHit) {
        return finish("The wall clock of " + std::to_string(static_cast<long>(budget.wallSeconds)) +
                      " s ran out while this kernel was being graded; the submission is not counted.\n");
    }
    if (verdict.infrastructureError) {
        outcome.verdict = verdict;
        return finish("The grader failed before judging this kernel (not your fault); the submission is not "
                      "counted.\n" +
                      verdictReport(verdict, heading));
    }
    ++used_;
    outcome.counted = true;
    outcome.verdict = verdict;
    SubmissionRecord record;
    record.trialId = context_.trialId;
    record.index = used_;
    record.kernelSource = kernelSource;
    record.verdict = verdict;
    record.evalSeconds = verdict.evalSeconds;
    std::string note;
    Status saved = context_.recordSubmission(record);
    if (!saved) {
        note = "(the workbench could not store this submission: " + saved.error().message + ")\n";
        if (unstored_.empty()) { // submit holds mutex_ throughout
            unstored_ = "submission " + std::to_string(used_) + " could not be stored: " + saved.error().message;
        }
    }
    finish(verdictReport(verdict, heading) + note);
    char tail[128];
    std::snprintf(tail, sizeof tail, "Submissions left: %d. Seconds left: %.0f.\n", outcome.submissionsLeft,
                  outcome.secondsLeft);
    outcome.reportText += tail;

    ProgressEvent event;
    event.kind = ProgressEventKind::Submission;
    event.coordinate = context_.coordinate;
    event.trialId = context_.trialId;
    event.submissionIndex = used_;
    event.counted = true;
    event.passed = verdict.passed;
    event.speedup = verdict.speedupVsEager;
    event.submissionsLeft = outcome.submissionsLeft;
    event.secondsLeft = outcome.secondsLeft;
    event.message = verdict.error;
    if (!saved) {
        // The event must not read as a stored submission: a watcher (the soak, a dashboard) would count it as kept.
        event.stored = false;
        event.message = saved.error().message;
    }
    context_.emit(event);
    return outcome;
}

std::string TrialGate::unstoredSubmission() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return unstored_;
}

int TrialGate::submissionsLeft() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return context_.budget.maxSubmissions - used_;
}

double TrialGate::secondsLeft() const {
    return std::max(0.0, context_.budget.wallSeconds - secondsSinceStart());
}

} // namespace mkb
