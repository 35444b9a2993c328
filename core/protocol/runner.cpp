// Executing a plan: scheduling solos before skill arms, gating submissions under the budget, recording every trial.
#include "core/protocol/runner.h"

#include "core/agents/workspace.h"
#include "core/grading/report_text.h"
#include "core/grading/verdict_json.h"
#include "core/protocol/retimer.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace mkb {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

enum class EntryState { NotScheduled, Waiting, Ready, Running, Done, Failed, Interrupted };

/// What happened to one plan entry during this invocation.
struct EntryProgress {
    EntryState state = EntryState::NotScheduled;
    std::int64_t trialId = 0;
    std::optional<std::string> skill; // the SKILL.md the attempt wrote (solos feed their skill arms)
    TrialStatus status = TrialStatus::Running;
};

Verdict noKernelVerdict(const std::string& why) {
    Verdict verdict;
    verdict.stage = "no_kernel";
    verdict.error = "the attempt left no kernel.py" + (why.empty() ? std::string() : ": " + why);
    verdict.json = verdictToJson(verdict);
    return verdict;
}

class Runner;

/// The gate of one attempt: budget checks, grading on the worker's grader, and recording counted submissions.
class TrialGate final : public SubmissionGate {
public:
    TrialGate(Runner& runner, std::size_t entryIndex, std::int64_t trialId, GraderProcess& grader,
              const Problem& problem, const RunDsl& dsl, fs::path submissionsDir)
        : runner_(runner), entryIndex_(entryIndex), trialId_(trialId), grader_(grader), problem_(problem), dsl_(dsl),
          submissionsDir_(std::move(submissionsDir)), started_(Clock::now()) {}

    SubmitOutcome submit(const std::string& kernelSource) override;
    int submissionsLeft() const override;
    double secondsLeft() const override;

private:
    Runner& runner_;
    std::size_t entryIndex_;
    std::int64_t trialId_;
    GraderProcess& grader_;
    const Problem& problem_;
    const RunDsl& dsl_;
    fs::path submissionsDir_;
    Clock::time_point started_;
    mutable std::mutex mutex_;
    int used_ = 0;
};

class Runner {
public:
    Runner(const RunSettings& settings, Store* store, const DriverFactory& makeDriver, ProgressSink& progress,
           const std::atomic<bool>& cancel)
        : settings_(settings), store_(store), makeDriver_(makeDriver), progress_(progress), cancel_(cancel),
          started_(Clock::now()) {}

    Result<RunSummary> run();

    // Used by TrialGate.
    const RunSettings& settings() const { return settings_; }
    const std::atomic<bool>& cancel() const { return cancel_; }
    const std::string& graderFingerprint() const { return graderFingerprint_; }
    Status recordSubmission(const SubmissionRecord& submission) {
        std::lock_guard<std::mutex> lock(storeMutex_);
        auto added = store_->addSubmission(submission);
        return added ? Status(Ok{}) : Status(added.error());
    }
    void emit(ProgressEvent event) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            event.counts = countsLocked();
        }
        progress_.onEvent(event);
    }
    const std::string& coordinateOf(std::size_t index) const { return summary_.plan.entries[index].coordinateText; }

private:
    void worker(std::unique_ptr<GraderProcess> grader);
    void process(std::size_t index, GraderProcess& grader, AgentDriver& driver);
    void recordSkipped(std::size_t index, std::optional<std::int64_t> sourceTrialId, const std::string& why);
    void settle(std::size_t index, EntryState state, TrialStatus status, std::optional<bool> passed,
                std::optional<double> speedup, const std::string& message, bool attempted, double seconds);
    Result<std::int64_t> insertRunningTrial(const PlanEntry& entry, TrialRecord record);
    ProgressCounts countsLocked() const;
    const RunDsl& dslOf(const std::string& id) const {
        return id == settings_.dslA.descriptor.id ? settings_.dslA : settings_.dslB;
    }

    const RunSettings& settings_;
    Store* store_;
    const DriverFactory& makeDriver_;
    ProgressSink& progress_;
    const std::atomic<bool>& cancel_;
    Clock::time_point started_;

    std::string graderFingerprint_;
    std::int64_t invocationId_ = 0;
    std::map<int, const Problem*> problemsByNumber_;
    std::map<std::int64_t, TrialRecord> history_;

    std::mutex storeMutex_;
    std::mutex mutex_; // guards everything below
    std::condition_variable wake_;
    RunSummary summary_;
    std::vector<EntryProgress> entries_;
    std::deque<std::size_t> ready_;
    int outstanding_ = 0; // scheduled entries not yet settled
    int total_ = 0;
    int running_ = 0;
    double attemptSecondsSum_ = 0;
    int attemptsTimed_ = 0;
};

SubmitOutcome TrialGate::submit(const std::string& kernelSource) {
    std::lock_guard<std::mutex> lock(mutex_);
    SubmitOutcome outcome;
    const AttemptBudget& budget = runner_.settings().budget;
    auto finish = [&](std::string report) {
        outcome.reportText = std::move(report);
        outcome.submissionsLeft = budget.maxSubmissions - used_;
        outcome.secondsLeft = std::max(0.0, budget.wallSeconds - secondsSince(started_));
        return outcome;
    };
    if (runner_.cancel().load()) {
        return finish("The run was stopped; nothing was graded.\n");
    }
    if (used_ >= budget.maxSubmissions) {
        return finish("No feedback submissions left (all " + std::to_string(budget.maxSubmissions) +
                      " used); nothing was graded. Your last kernel.py is graded at the end.\n");
    }
    if (secondsSince(started_) >= budget.wallSeconds) {
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
    fs::create_directories(submissionsDir_, ec);
    const fs::path kernelPath = submissionsDir_ / ("submission_" + std::to_string(used_ + 1) + ".py");
    if (Status written = writeFileAtomically(kernelPath, kernelSource); !written) {
        return finish("The workbench could not write the kernel for grading (" + written.error().message +
                      "); the submission is not counted.\n");
    }
    GradeRequest request;
    request.problemPath = problem_.path;
    request.kernelPath = kernelPath;
    request.dsl = dsl_.descriptor.id;
    request.dslDescriptorJson = dsl_.descriptorJson;
    request.device = runner_.settings().device;
    request.settings = runner_.settings().grade;
    request.settings.maxKernelBytes = budget.maxKernelBytes;
    request.peaksJson = runner_.settings().peaksJson;
    request.problemMetaJson = problemMetaJson(problem_.meta);
    // The wall clock includes grading: a grading still running when it runs out is abandoned (and not counted).
    std::atomic<bool> stopGrading{false};
    std::atomic<bool> gradingDone{false};
    std::atomic<bool> deadlineHit{false};
    std::thread watchdog([&]() {
        while (!gradingDone.load()) {
            if (runner_.cancel().load()) {
                stopGrading.store(true);
            } else if (secondsSince(started_) >= budget.wallSeconds) {
                deadlineHit.store(true);
                stopGrading.store(true);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    Verdict verdict = grader_.grade(request, {}, &stopGrading);
    gradingDone.store(true);
    watchdog.join();
    const ReportHeading heading{problem_.name(), dsl_.descriptor.id, "kernel.py", runner_.settings().device};
    if (deadlineHit.load()) {
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
    record.trialId = trialId_;
    record.index = used_;
    record.kernelSource = kernelSource;
    record.verdict = verdict;
    record.evalSeconds = verdict.evalSeconds;
    std::string note;
    if (Status saved = runner_.recordSubmission(record); !saved) {
        note = "(the workbench could not store this submission: " + saved.error().message + ")\n";
    }
    finish(verdictReport(verdict, heading) + note);
    char tail[128];
    std::snprintf(tail, sizeof tail, "Submissions left: %d. Seconds left: %.0f.\n", outcome.submissionsLeft,
                  outcome.secondsLeft);
    outcome.reportText += tail;

    ProgressEvent event;
    event.kind = ProgressEventKind::Submission;
    event.coordinate = runner_.coordinateOf(entryIndex_);
    event.trialId = trialId_;
    event.submissionIndex = used_;
    event.counted = true;
    event.passed = verdict.passed;
    event.speedup = verdict.speedupVsEager;
    event.submissionsLeft = outcome.submissionsLeft;
    event.secondsLeft = outcome.secondsLeft;
    event.message = verdict.error;
    runner_.emit(event);
    return outcome;
}

int TrialGate::submissionsLeft() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runner_.settings().budget.maxSubmissions - used_;
}

double TrialGate::secondsLeft() const {
    return std::max(0.0, runner_.settings().budget.wallSeconds - secondsSince(started_));
}

ProgressCounts Runner::countsLocked() const {
    ProgressCounts counts;
    counts.total = total_;
    counts.running = running_;
    counts.done = summary_.finished + summary_.skipped;
    counts.failed = summary_.failed;
    counts.interrupted = summary_.interrupted;
    counts.passed = summary_.passed;
    counts.elapsedSeconds = secondsSince(started_);
    if (attemptsTimed_ > 0) {
        const int remaining = std::max(0, outstanding_);
        const int parallel = std::max(1, std::min(settings_.concurrency, remaining));
        counts.etaSeconds = attemptSecondsSum_ / attemptsTimed_ * remaining / parallel;
    }
    return counts;
}

Result<std::int64_t> Runner::insertRunningTrial(const PlanEntry& entry, TrialRecord record) {
    std::lock_guard<std::mutex> lock(storeMutex_);
    std::int64_t trialId = 0;
    Status written = store_->transaction([&]() -> Status {
        const bool replaces =
            entry.status == PlanStatus::Rerun || entry.status == PlanStatus::Redo || entry.status == PlanStatus::Skip;
        if (entry.liveTrialId && replaces) {
            if (Status archived = store_->archiveTrial(*entry.liveTrialId); !archived) {
                return archived;
            }
        }
        auto inserted = store_->insertTrial(record);
        if (!inserted) {
            return inserted.error();
        }
        trialId = *inserted;
        return Ok{};
    });
    if (!written) {
        return written.error();
    }
    return trialId;
}

void Runner::settle(std::size_t index, EntryState state, TrialStatus status, std::optional<bool> passed,
                    std::optional<double> speedup, const std::string& message, bool attempted, double seconds) {
    ProgressEvent event;
    event.kind = ProgressEventKind::TrialFinished;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        EntryProgress& progress = entries_[index];
        progress.state = state;
        progress.status = status;
        event.trialId = progress.trialId;
        if (attempted) {
            --running_;
            attemptSecondsSum_ += seconds;
            ++attemptsTimed_;
        }
        --outstanding_;
        if (state == EntryState::Done && status == TrialStatus::Skipped) {
            ++summary_.skipped;
        } else if (state == EntryState::Done) {
            ++summary_.finished;
            summary_.passed += passed.value_or(false) ? 1 : 0;
        } else if (state == EntryState::Interrupted) {
            ++summary_.interrupted;
        } else {
            ++summary_.failed;
        }
        // Release the skill arms waiting for this solo (they look at its outcome themselves).
        for (std::size_t other = 0; other < summary_.plan.entries.size(); ++other) {
            const PlanEntry& waiting = summary_.plan.entries[other];
            if (waiting.waitsForSource && waiting.sourceEntry == index &&
                entries_[other].state == EntryState::Waiting) {
                entries_[other].state = EntryState::Ready;
                ready_.push_back(other);
            }
        }
    }
    wake_.notify_all();
    event.coordinate = coordinateOf(index);
    event.status =
        state == EntryState::Failed && status != TrialStatus::InfrastructureError ? "blocked" : toString(status);
    event.passed = passed;
    event.speedup = speedup;
    event.message = message;
    emit(event);
}

void Runner::recordSkipped(std::size_t index, std::optional<std::int64_t> sourceTrialId, const std::string& why) {
    const PlanEntry& entry = summary_.plan.entries[index];
    const Problem& problem = *problemsByNumber_.at(entry.coordinate.problemNumber);
    TrialRecord record;
    record.model = settings_.model;
    record.suite = problem.suite;
    record.problemNumber = problem.number;
    record.problemSlug = problem.slug;
    record.family = problem.family;
    record.replicate = entry.coordinate.replicate;
    record.arm = entry.coordinate.arm.name();
    record.dsl = entry.coordinate.arm.dsl;
    record.coordinate = entry.coordinateText;
    record.sourceTrialId = sourceTrialId;
    record.status = TrialStatus::Skipped;
    record.skipped = true;
    record.problemFingerprint = problem.fingerprint;
    record.graderFingerprint = graderFingerprint_;
    record.invocationId = invocationId_;
    std::int64_t trialId = 0;
    Status written = [&]() -> Status {
        std::lock_guard<std::mutex> lock(storeMutex_);
        return store_->transaction([&]() -> Status {
            if (entry.liveTrialId) {
                if (Status archived = store_->archiveTrial(*entry.liveTrialId); !archived) {
                    return archived;
                }
            }
            auto inserted = store_->insertTrial(record);
            if (!inserted) {
                return inserted.error();
            }
            trialId = *inserted;
            TrialOutcome outcome;
            outcome.status = TrialStatus::Skipped;
            outcome.skipped = true;
            outcome.error = why;
            return store_->finishTrial(trialId, outcome);
        });
    }();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[index].trialId = trialId;
    }
    if (!written) {
        settle(index, EntryState::Failed, TrialStatus::InfrastructureError, std::nullopt, std::nullopt,
               written.error().message, false, 0);
        return;
    }
    settle(index, EntryState::Done, TrialStatus::Skipped, std::nullopt, std::nullopt, why, false, 0);
}

void Runner::process(std::size_t index, GraderProcess& grader, AgentDriver& driver) {
    const PlanEntry& entry = summary_.plan.entries[index];
    const Problem& problem = *problemsByNumber_.at(entry.coordinate.problemNumber);
    const Arm& arm = entry.coordinate.arm;
    const RunDsl& dsl = dslOf(arm.dsl);

    // Skill arms: find the source trial and the skill it wrote.
    std::optional<std::int64_t> sourceTrialId;
    std::optional<std::string> sourceSkill;
    if (arm.isSkill()) {
        const std::size_t sourceIndex = *entry.sourceEntry;
        const PlanEntry& source = summary_.plan.entries[sourceIndex];
        if (startsAttempt(source.status)) {
            EntryProgress sourceProgress;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                sourceProgress = entries_[sourceIndex];
            }
            if (sourceProgress.state != EntryState::Done) {
                settle(index, EntryState::Failed, TrialStatus::Running, std::nullopt, std::nullopt,
                       "its source " + source.coordinateText + " did not finish; it runs next time", false, 0);
                return;
            }
            sourceTrialId = sourceProgress.trialId;
            sourceSkill = sourceProgress.skill;
        } else if (source.liveTrialId) {
            sourceTrialId = source.liveTrialId;
            auto found = history_.find(*source.liveTrialId);
            if (found != history_.end()) {
                sourceSkill = found->second.skillText;
            }
        }
        if (entry.status == PlanStatus::Skip || skillSha256(sourceSkill).empty()) {
            recordSkipped(index, sourceTrialId, "source " + source.coordinateText + " wrote no skill");
            return;
        }
    } else if (entry.status == PlanStatus::Skip) {
        recordSkipped(index, std::nullopt, "skipped by the plan");
        return;
    }

    TrialRecord record;
    record.model = settings_.model;
    record.suite = problem.suite;
    record.problemNumber = problem.number;
    record.problemSlug = problem.slug;
    record.family = problem.family;
    record.replicate = entry.coordinate.replicate;
    record.arm = arm.name();
    record.dsl = arm.dsl;
    record.coordinate = entry.coordinateText;
    record.sourceTrialId = sourceTrialId;
    record.status = TrialStatus::Running;
    record.problemFingerprint = problem.fingerprint;
    record.graderFingerprint = graderFingerprint_;
    record.sourceSkillSha256 = skillSha256(sourceSkill);
    record.invocationId = invocationId_;
    auto trialId = insertRunningTrial(entry, record);
    if (!trialId) {
        settle(index, EntryState::Failed, TrialStatus::InfrastructureError, std::nullopt, std::nullopt,
               trialId.error().message, false, 0);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[index].trialId = *trialId;
        entries_[index].state = EntryState::Running;
        ++running_;
        ++summary_.attempted;
    }
    ProgressEvent startedEvent;
    startedEvent.kind = ProgressEventKind::TrialStarted;
    startedEvent.coordinate = entry.coordinateText;
    startedEvent.trialId = *trialId;
    emit(startedEvent);
    const auto attemptStarted = Clock::now();

    AttemptTask task;
    task.problem = problem;
    task.dsl = dsl.descriptor;
    task.armName = arm.name();
    if (arm.isSkill()) {
        task.skillWithHeader = skillWithTransferHeader(*sourceSkill, dslOf(arm.sourceDsl).descriptor.displayName);
    }
    task.budget = settings_.budget;
    const fs::path attemptDir =
        settings_.workspaceRoot / settings_.model / (entry.coordinateText + "-t" + std::to_string(*trialId));
    task.workspace = attemptDir / "workspace";
    task.instruction = instructionText(task, driver.name() == "command"
                                                 ? "Run `./submit` (or `mkb submit`) to grade the current kernel.py; "
                                                   "it prints the grader report and the budget left."
                                                 : "");

    AttemptResult result;
    if (auto prepared = prepareWorkspace(task); !prepared) {
        result.error = prepared.error().message;
        result.infrastructureError = true;
    } else {
        TrialGate gate(*this, index, *trialId, grader, problem, dsl, attemptDir / "submissions");
        result = driver.attempt(task, gate, cancel_);
    }

    auto markInterrupted = [&]() {
        std::lock_guard<std::mutex> lock(storeMutex_);
        (void)store_->updateTrialStatus(*trialId, TrialStatus::Interrupted, "stopped by the user");
    };
    if (cancel_.load()) {
        markInterrupted();
        settle(index, EntryState::Interrupted, TrialStatus::Interrupted, std::nullopt, std::nullopt,
               "stopped by the user", true, secondsSince(attemptStarted));
        return;
    }

    // The final fresh evaluation of the last kernel.py.
    Verdict verdict;
    const bool hasKernel = !result.finalKernel.empty();
    if (hasKernel) {
        std::error_code ec;
        fs::create_directories(attemptDir, ec);
        const fs::path finalPath = attemptDir / "final_kernel.py";
        if (Status written = writeFileAtomically(finalPath, result.finalKernel); !written) {
            verdict = infrastructureVerdict(written.error().message, "final");
        } else {
            GradeRequest request;
            request.problemPath = problem.path;
            request.kernelPath = finalPath;
            request.dsl = dsl.descriptor.id;
            request.dslDescriptorJson = dsl.descriptorJson;
            request.device = settings_.device;
            request.settings = settings_.grade;
            request.settings.maxKernelBytes = settings_.budget.maxKernelBytes;
            request.peaksJson = settings_.peaksJson;
            request.problemMetaJson = problemMetaJson(problem.meta);
            verdict = grader.grade(request, {}, &cancel_);
        }
    } else {
        verdict = noKernelVerdict(result.error);
    }
    if (cancel_.load()) {
        markInterrupted();
        settle(index, EntryState::Interrupted, TrialStatus::Interrupted, std::nullopt, std::nullopt,
               "stopped by the user", true, secondsSince(attemptStarted));
        return;
    }

    TrialOutcome outcome;
    const bool infrastructure = result.infrastructureError || verdict.infrastructureError;
    outcome.status = infrastructure ? TrialStatus::InfrastructureError : TrialStatus::Finished;
    outcome.verdict = verdict;
    outcome.usage = result.usage;
    outcome.error = result.infrastructureError    ? result.error
                    : verdict.infrastructureError ? verdict.error
                                                  : result.error;
    outcome.skillText = result.skill && !trimmed(*result.skill).empty() ? result.skill : std::nullopt;
    outcome.timedOut = result.timedOut;
    Status written = [&]() -> Status {
        std::lock_guard<std::mutex> lock(storeMutex_);
        return store_->transaction([&]() -> Status {
            if (hasKernel) {
                SubmissionRecord final;
                final.trialId = *trialId;
                final.index = 0;
                final.kernelSource = result.finalKernel;
                final.verdict = verdict;
                final.evalSeconds = verdict.evalSeconds;
                if (auto added = store_->addSubmission(final); !added) {
                    return added.error();
                }
            }
            return store_->finishTrial(*trialId, outcome);
        });
    }();
    if (!written) {
        settle(index, EntryState::Failed, TrialStatus::InfrastructureError, std::nullopt, std::nullopt,
               written.error().message, true, secondsSince(attemptStarted));
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[index].skill = outcome.skillText;
    }
    if (infrastructure) {
        settle(index, EntryState::Failed, TrialStatus::InfrastructureError, std::nullopt, std::nullopt, outcome.error,
               true, secondsSince(attemptStarted));
        return;
    }
    settle(index, EntryState::Done, TrialStatus::Finished, verdict.passed,
           verdict.passed ? std::optional<double>(verdict.speedupVsEager) : std::nullopt,
           verdict.passed ? outcome.error : (verdict.error.empty() ? outcome.error : verdict.error), true,
           secondsSince(attemptStarted));
}

void Runner::worker(std::unique_ptr<GraderProcess> grader) {
    std::unique_ptr<AgentDriver> driver;
    std::string driverError;
    if (auto made = makeDriver_(); made) {
        driver = std::move(made).value();
    } else {
        driverError = made.error().message;
    }
    while (true) {
        std::size_t index = 0;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&]() { return !ready_.empty() || outstanding_ <= 0 || cancel_.load(); });
            if (cancel_.load() || ready_.empty()) {
                break;
            }
            index = ready_.front();
            ready_.pop_front();
            entries_[index].state = EntryState::Running;
        }
        if (!driver) {
            settle(index, EntryState::Failed, TrialStatus::InfrastructureError, std::nullopt, std::nullopt, driverError,
                   false, 0);
            continue;
        }
        process(index, *grader, *driver);
    }
    grader->stop();
    wake_.notify_all();
}

Result<RunSummary> Runner::run() {
    GraderLaunch launch = settings_.grader;
    auto firstGrader = std::make_unique<GraderProcess>(launch);
    if (Status started = firstGrader->start(); !started) {
        return makeError("the grader could not start: " + started.error().message);
    }
    graderFingerprint_ = firstGrader->hello().graderFingerprint;
    summary_.graderFingerprint = graderFingerprint_;

    for (const Problem& problem : settings_.problems) {
        problemsByNumber_.emplace(problem.number, &problem);
    }
    std::vector<TrialRecord> history;
    if (store_) {
        TrialFilter filter;
        filter.model = settings_.model;
        auto loaded = store_->loadTrials(filter);
        if (!loaded) {
            return loaded.error();
        }
        history = std::move(loaded).value();
    }
    for (const TrialRecord& record : history) {
        history_.emplace(record.id, record);
    }
    PlanRequest request;
    request.model = settings_.model;
    request.problems = settings_.problems;
    request.dslA = settings_.dslA.descriptor.id;
    request.dslB = settings_.dslB.descriptor.id;
    request.replicates = settings_.replicates;
    request.graderFingerprint = graderFingerprint_;
    request.rerunStale = settings_.rerunStale;
    if (Status valid = validatePlanRequest(request); !valid) {
        return valid.error();
    }
    summary_.plan = makePlan(request, history, contextFromTrials(history));
    const Plan& plan = summary_.plan;
    entries_.assign(plan.entries.size(), EntryProgress{});
    for (std::size_t i = 0; i < plan.entries.size(); ++i) {
        const PlanEntry& entry = plan.entries[i];
        if (!startsAttempt(entry.status) && entry.status != PlanStatus::Skip) {
            continue;
        }
        ++total_;
        ++outstanding_;
        if (entry.waitsForSource) {
            entries_[i].state = EntryState::Waiting;
        } else {
            entries_[i].state = EntryState::Ready;
            ready_.push_back(i);
        }
    }
    ProgressEvent planEvent;
    planEvent.kind = ProgressEventKind::Plan;
    planEvent.plan = &plan;
    emit(planEvent);
    if (settings_.dryRun) {
        firstGrader->stop();
        summary_.seconds = secondsSince(started_);
        return summary_;
    }
    if (!store_) {
        return makeError("run: no store to record trials in");
    }

    // The run's own records: problems, model, invocation.
    {
        std::lock_guard<std::mutex> lock(storeMutex_);
        Status recorded = store_->transaction([&]() -> Status {
            for (const Problem& problem : settings_.problems) {
                if (auto stored = store_->upsertProblem(problem); !stored) {
                    return stored.error();
                }
            }
            if (auto model = store_->ensureModel(settings_.model, settings_.driverKind, settings_.driverSettingsJson);
                !model) {
                return model.error();
            }
            InvocationRecord invocation;
            invocation.commandLine = settings_.commandLine;
            nlohmann::json effective;
            effective["model"] = settings_.model;
            effective["driver"] = settings_.driverKind;
            effective["dsls"] = {request.dslA, request.dslB};
            effective["replicates"] = settings_.replicates;
            effective["device"] = settings_.device;
            effective["wall_clock_s"] = settings_.budget.wallSeconds;
            effective["submissions"] = settings_.budget.maxSubmissions;
            effective["max_kernel_bytes"] = settings_.budget.maxKernelBytes;
            effective["concurrency"] = settings_.concurrency;
            effective["rerun_stale"] = settings_.rerunStale;
            invocation.settingsJson = effective.dump();
            invocation.graderFingerprint = graderFingerprint_;
            invocation.pid = static_cast<std::int64_t>(::getpid());
            auto begun = store_->beginInvocation(invocation);
            if (!begun) {
                return begun.error();
            }
            invocationId_ = *begun;
            return Ok{};
        });
        if (!recorded) {
            firstGrader->stop();
            return recorded.error();
        }
    }

    const int slots = std::max(1, std::min(settings_.concurrency, std::max(1, total_)));
    std::vector<std::thread> workers;
    for (int slot = 0; slot < slots; ++slot) {
        auto grader = slot == 0 ? std::move(firstGrader) : std::make_unique<GraderProcess>(launch);
        workers.emplace_back(&Runner::worker, this, std::move(grader));
    }
    // Wake the workers when cancel is raised (a signal handler cannot notify a condition variable).
    std::thread watcher([&]() {
        while (true) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (outstanding_ <= 0 && running_ == 0) {
                    break;
                }
            }
            if (cancel_.load()) {
                wake_.notify_all();
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    for (std::thread& worker : workers) {
        worker.join();
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        outstanding_ = 0; // wakes the watcher when the run ended by cancel
    }
    watcher.join();
    summary_.cancelled = cancel_.load();
    // Paired re-timing (DESIGN §5.5) of every cell of the selection whose arms are final, on the run's device;
    // missing or stale ones only, so cells reused from earlier runs are re-timed once.
    if (settings_.retime && !summary_.cancelled) {
        RetimeJob job;
        job.scope.model = settings_.model;
        job.scope.problems = settings_.problems;
        job.scope.directions = directionsForPair(request.dslA, request.dslB);
        for (int k = 1; k <= settings_.replicates; ++k) {
            job.scope.replicates.push_back(k);
        }
        job.device = settings_.device;
        job.retime = settings_.retimeSettings;
        job.grade = settings_.grade;
        job.dslDescriptor = [&](const std::string& id) -> Result<std::string> {
            if (id == settings_.dslA.descriptor.id || id == settings_.dslB.descriptor.id) {
                return dslOf(id).descriptorJson;
            }
            return makeError("not a DSL of this run");
        };
        const auto onOutcome = [&](const RetimeOutcome& outcome) {
            ProgressEvent event;
            event.kind = ProgressEventKind::Retimed;
            event.coordinate = outcome.entry->cell.name();
            if (outcome.result) {
                event.status = outcome.result->ok ? outcome.result->stop : "failed";
                event.message = retimeResultLine(*outcome.result);
                event.rounds = outcome.result->rounds;
                if (auto pair = outcome.result->pair("base", "skill"); pair && outcome.result->ok) {
                    event.ratio = pair->ratio;
                    event.ciLow = pair->ciLow;
                    event.ciHigh = pair->ciHigh;
                }
            } else {
                event.status = "error";
                event.message = outcome.error;
            }
            emit(event);
        };
        GraderProcess retimer(launch);
        Status started = retimer.start();
        auto retimed = started ? runRetimes(*store_, retimer, job, {}, onOutcome, &cancel_)
                               : Result<RetimeSummary>(started.error());
        retimer.stop();
        if (retimed) {
            summary_.retimed = retimed->retimed + retimed->kernelFailed;
            summary_.retimeErrors = retimed->errors;
        } else {
            ++summary_.retimeErrors;
            ProgressEvent event;
            event.kind = ProgressEventKind::Retimed;
            event.status = "error";
            event.message = "re-timing: " + retimed.error().message;
            emit(event);
        }
        summary_.cancelled = cancel_.load();
    }
    {
        std::lock_guard<std::mutex> lock(storeMutex_);
        (void)store_->finishInvocation(invocationId_);
    }
    summary_.seconds = secondsSince(started_);
    return summary_;
}

} // namespace

Result<RunSummary> runProtocol(const RunSettings& settings, Store* store, const DriverFactory& makeDriver,
                               ProgressSink& progress, const std::atomic<bool>& cancel) {
    Runner runner(settings, store, makeDriver, progress, cancel);
    return runner.run();
}

} // namespace mkb
