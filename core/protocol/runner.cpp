// Executing a plan: scheduling solos before skill arms, one attempt per entry in named steps, recording every trial.
// Longer than 600 lines because Runner is one state machine (entries, ready queue, counts, cells) whose steps share its
// two locks; the gate (trial_gate), the re-timing thread (cell_retimer) and the planner have files of their own.
#include "core/protocol/runner.h"

#include "core/agents/workspace.h"
#include "core/grader_client/grader_pool.h"
#include "core/protocol/cell_retimer.h"
#include "core/protocol/cells.h"
#include "core/protocol/retimer.h"
#include "core/protocol/trial_gate.h"
#include "core/util/text.h"
#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <unistd.h>

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

/// How an entry ended in this invocation: its state, the status its progress line shows, and the attempt's time.
struct Settlement {
    EntryState state = EntryState::Failed;
    TrialStatus status = TrialStatus::InfrastructureError;
    std::optional<bool> passed;
    std::optional<double> speedup;
    std::string message;
    bool attempted = false; // an attempt ran (it counts for the ETA and leaves the running count)
    double seconds = 0;

    /// The workbench failed before any attempt started (no driver, the store refused the trial).
    static Settlement failedBeforeAttempt(std::string message) {
        return {EntryState::Failed, TrialStatus::InfrastructureError, {}, {}, std::move(message), false, 0};
    }
    /// The attempt ran but broke (driver, endpoint, grader or store): rerun next time.
    static Settlement brokeDuringAttempt(std::string message, double seconds) {
        return {EntryState::Failed, TrialStatus::InfrastructureError, {}, {}, std::move(message), true, seconds};
    }
    /// A skill arm whose source did not finish in this run: nothing recorded, it runs next time.
    static Settlement blocked(std::string message) {
        return {EntryState::Failed, TrialStatus::Running, {}, {}, std::move(message), false, 0};
    }
    static Settlement skipped(std::string why) {
        return {EntryState::Done, TrialStatus::Skipped, {}, {}, std::move(why), false, 0};
    }
    static Settlement interrupted(double seconds) {
        return {EntryState::Interrupted, TrialStatus::Interrupted, {}, {}, "stopped by the user", true, seconds};
    }
    static Settlement finished(const Verdict& verdict, std::string message, double seconds) {
        return {EntryState::Done,
                TrialStatus::Finished,
                verdict.passed,
                verdict.passed ? std::optional<double>(verdict.speedupVsEager) : std::nullopt,
                std::move(message),
                true,
                seconds};
    }
};

/// The skill a skill arm is given: its source trial (this run's solo or a live one) and the SKILL.md it wrote.
struct SourceSkill {
    std::optional<std::int64_t> trialId;
    std::optional<std::string> text;
};

/// A cell of the run with the plan entries of its three arms (source, base, skill).
struct RunCell {
    Cell cell;
    std::array<std::size_t, 3> entries{};
    bool queued = false; // handed to the re-timer
};

Verdict noKernelVerdict(const std::string& why, const std::string& boundary) {
    Verdict verdict;
    verdict.boundary = boundary; // judged under the run's boundary, like every verdict the run records
    verdict.stage = "no_kernel";
    verdict.error = "the attempt left no kernel.py" + (why.empty() ? std::string() : ": " + why);
    verdict.json = verdictToJson(verdict);
    return verdict;
}

class Runner {
public:
    Runner(const RunSettings& settings, Store* store, const DriverFactory& makeDriver, ProgressSink& progress,
           const std::atomic<bool>& cancel)
        : settings_(settings), store_(store), makeDriver_(makeDriver), progress_(progress), cancel_(cancel),
          started_(Clock::now()) {}

    Result<RunSummary> run();

private:
    // The run's phases.
    Status loadHistory();
    Status planRun(const PlanRequest& request);
    Status recordInvocation(const PlanRequest& request);
    void runWorkers(const GraderLaunch& launch, std::unique_ptr<GraderProcess> firstGrader);
    RetimeJob retimeJob(const PlanRequest& request) const;
    void startRetimer(const GraderLaunch& launch, const PlanRequest& request);
    void queueFinalCellsLocked();
    void emitRetimed(const RetimeOutcome& outcome);

    Status startGrading(GraderProcess& firstGrader, const GraderLaunch& launch);
    /// Every grading of the run goes through here: on the run's pool when it has one, else on the worker's grader;
    /// the verdict names the device that judged it.
    Verdict gradeWith(GraderProcess& grader, const GradeRequest& request, const std::atomic<bool>* cancel);
    bool stopping() const { return cancel_.load() || poolLost_.load(); }
    std::string poolLostReasons() const;

    // One entry's steps.
    void worker(std::unique_ptr<GraderProcess> grader);
    void process(std::size_t index, GraderProcess& grader, AgentDriver& driver);
    std::optional<SourceSkill> resolveSource(std::size_t index);
    std::optional<std::int64_t> startTrial(std::size_t index, const SourceSkill& source);
    AttemptResult runAttempt(std::size_t index, std::int64_t trialId, const SourceSkill& source, GraderProcess& grader,
                             AgentDriver& driver);
    Verdict gradeFinalKernel(std::size_t index, std::int64_t trialId, const AttemptResult& result,
                             GraderProcess& grader);
    void recordOutcome(std::size_t index, std::int64_t trialId, const AttemptResult& result, const Verdict& verdict,
                       Clock::time_point attemptStarted);
    void recordSkipped(std::size_t index, std::optional<std::int64_t> sourceTrialId, const std::string& why);
    void settle(std::size_t index, const Settlement& settlement);

    // Building blocks.
    TrialRecord trialRecordFor(const PlanEntry& entry, std::optional<std::int64_t> sourceTrialId,
                               std::string sourceSkillSha256) const;
    Result<std::int64_t> replaceLiveTrial(const PlanEntry& entry, const TrialRecord& record,
                                          const std::function<Status(std::int64_t)>& thenInSameTransaction = {});
    GradeRequest gradeRequestFor(const Problem& problem, const RunDsl& dsl, const fs::path& kernelPath) const;
    fs::path attemptDir(const PlanEntry& entry, std::int64_t trialId) const {
        return settings_.workspaceRoot / settings_.model / (entry.coordinateText + "-t" + std::to_string(trialId));
    }
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
    const Problem& problemOf(const PlanEntry& entry) const {
        return *problemsByNumber_.at(entry.coordinate.problemNumber);
    }
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
    std::vector<TrialRecord> historyList_;
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
    std::vector<RunCell> cells_;
    std::unique_ptr<CellRetimer> retimer_; // set when the run re-times (DESIGN §5.5)
    std::unique_ptr<GraderPool> pool_;     // set for --devices (DESIGN §11): the only grader of the run
    std::atomic<bool> poolLost_{false};    // every device of the pool left the rotation: no new attempt starts
    std::atomic<bool> halted_{false};      // cancel_ or poolLost_ seen: the attempts in flight stop (rerun next time)
};

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

TrialRecord Runner::trialRecordFor(const PlanEntry& entry, std::optional<std::int64_t> sourceTrialId,
                                   std::string sourceSkillSha256) const {
    const Problem& problem = problemOf(entry);
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
    record.status = TrialStatus::Running;
    record.problemFingerprint = problem.fingerprint;
    record.graderFingerprint = graderFingerprint_;
    record.sourceSkillSha256 = std::move(sourceSkillSha256);
    record.invocationId = invocationId_;
    return record;
}

Result<std::int64_t> Runner::replaceLiveTrial(const PlanEntry& entry, const TrialRecord& record,
                                              const std::function<Status(std::int64_t)>& thenInSameTransaction) {
    std::lock_guard<std::mutex> lock(storeMutex_);
    std::int64_t trialId = 0;
    Status written = store_->transaction([&]() -> Status {
        // The planner gives a scheduled entry a live trial only when it reruns, redoes or marks skipped that trial,
        // so a live trial here is always the one this entry replaces.
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
        return thenInSameTransaction ? thenInSameTransaction(trialId) : Status(Ok{});
    });
    if (!written) {
        return written.error();
    }
    return trialId;
}

GradeRequest Runner::gradeRequestFor(const Problem& problem, const RunDsl& dsl, const fs::path& kernelPath) const {
    GradeSettings grade = settings_.grade;
    grade.maxKernelBytes = settings_.budget.maxKernelBytes;
    return makeGradeRequest(problem, kernelPath, dsl.descriptor.id, dsl.descriptorJson, settings_.device, grade,
                            settings_.peaksJson);
}

void Runner::settle(std::size_t index, const Settlement& settlement) {
    ProgressEvent event;
    event.kind = ProgressEventKind::TrialFinished;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        EntryProgress& progress = entries_[index];
        progress.state = settlement.state;
        progress.status = settlement.status;
        event.trialId = progress.trialId;
        if (settlement.attempted) {
            --running_;
            attemptSecondsSum_ += settlement.seconds;
            ++attemptsTimed_;
        }
        --outstanding_;
        if (settlement.state == EntryState::Done && settlement.status == TrialStatus::Skipped) {
            ++summary_.skipped;
        } else if (settlement.state == EntryState::Done) {
            ++summary_.finished;
            summary_.passed += settlement.passed.value_or(false) ? 1 : 0;
        } else if (settlement.state == EntryState::Interrupted) {
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
        queueFinalCellsLocked();
    }
    wake_.notify_all();
    event.coordinate = coordinateOf(index);
    event.status = settlement.state == EntryState::Failed && settlement.status != TrialStatus::InfrastructureError
                       ? "blocked"
                       : toString(settlement.status);
    event.passed = settlement.passed;
    event.speedup = settlement.speedup;
    event.message = settlement.message;
    emit(event);
}

void Runner::recordSkipped(std::size_t index, std::optional<std::int64_t> sourceTrialId, const std::string& why) {
    const PlanEntry& entry = summary_.plan.entries[index];
    TrialRecord record = trialRecordFor(entry, sourceTrialId, "");
    record.status = TrialStatus::Skipped;
    record.skipped = true;
    auto trialId = replaceLiveTrial(entry, record, [&](std::int64_t id) {
        TrialOutcome outcome;
        outcome.status = TrialStatus::Skipped;
        outcome.skipped = true;
        outcome.error = why;
        return store_->finishTrial(id, outcome);
    });
    {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[index].trialId = trialId ? *trialId : 0;
    }
    settle(index, trialId ? Settlement::skipped(why) : Settlement::failedBeforeAttempt(trialId.error().message));
}

std::optional<SourceSkill> Runner::resolveSource(std::size_t index) {
    const PlanEntry& entry = summary_.plan.entries[index];
    if (!entry.coordinate.arm.isSkill()) {
        if (entry.status == PlanStatus::Skip) {
            recordSkipped(index, std::nullopt, "skipped by the plan");
            return std::nullopt;
        }
        return SourceSkill{};
    }
    SourceSkill source;
    const std::size_t sourceIndex = *entry.sourceEntry;
    const PlanEntry& sourceEntry = summary_.plan.entries[sourceIndex];
    if (startsAttempt(sourceEntry.status)) {
        EntryProgress sourceProgress;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            sourceProgress = entries_[sourceIndex];
        }
        if (sourceProgress.state != EntryState::Done) {
            settle(index, Settlement::blocked("its source " + sourceEntry.coordinateText +
                                              " did not finish; it runs next time"));
            return std::nullopt;
        }
        source.trialId = sourceProgress.trialId;
        source.text = sourceProgress.skill;
    } else if (sourceEntry.liveTrialId) {
        source.trialId = sourceEntry.liveTrialId;
        auto found = history_.find(*sourceEntry.liveTrialId);
        if (found != history_.end()) {
            source.text = found->second.skillText;
        }
    }
    if (entry.status == PlanStatus::Skip || skillSha256(source.text).empty()) {
        recordSkipped(index, source.trialId, "source " + sourceEntry.coordinateText + " wrote no skill");
        return std::nullopt;
    }
    return source;
}

std::optional<std::int64_t> Runner::startTrial(std::size_t index, const SourceSkill& source) {
    const PlanEntry& entry = summary_.plan.entries[index];
    auto trialId = replaceLiveTrial(entry, trialRecordFor(entry, source.trialId, skillSha256(source.text)));
    if (!trialId) {
        settle(index, Settlement::failedBeforeAttempt(trialId.error().message));
        return std::nullopt;
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
    return *trialId;
}

AttemptResult Runner::runAttempt(std::size_t index, std::int64_t trialId, const SourceSkill& source,
                                 GraderProcess& grader, AgentDriver& driver) {
    const PlanEntry& entry = summary_.plan.entries[index];
    const Problem& problem = problemOf(entry);
    const Arm& arm = entry.coordinate.arm;
    const RunDsl& dsl = dslOf(arm.dsl);
    AttemptTask task;
    task.problem = problem;
    task.dsl = dsl.descriptor;
    task.armName = arm.name();
    if (arm.isSkill()) {
        task.skillWithHeader = skillWithTransferHeader(*source.text, dslOf(arm.sourceDsl).descriptor.displayName);
    }
    task.budget = settings_.budget;
    task.boundary = settings_.grade.boundary; // the prompt states the boundary the grader enforces
    const fs::path dir = attemptDir(entry, trialId);
    task.workspace = dir / "workspace";
    task.instruction = instructionText(task, driver.name() == "command"
                                                 ? "Run `./submit` (or `mkb submit`) to grade the current kernel.py; "
                                                   "it prints the grader report and the budget left."
                                                 : "");
    AttemptResult result;
    if (auto prepared = prepareWorkspace(task); !prepared) {
        result.error = prepared.error().message;
        result.infrastructureError = true;
        return result;
    }
    TrialGateContext context;
    context.budget = settings_.budget;
    context.request = gradeRequestFor(problem, dsl, {});
    context.problemName = problem.name();
    context.coordinate = entry.coordinateText;
    context.trialId = trialId;
    context.submissionsDir = dir / "submissions";
    context.cancel = &halted_;
    context.recordSubmission = [this](const SubmissionRecord& submission) { return recordSubmission(submission); };
    context.emit = [this](ProgressEvent event) { emit(std::move(event)); };
    TrialGate gate(std::move(context), [this, &grader](const GradeRequest& request, const std::atomic<bool>* stop) {
        return gradeWith(grader, request, stop);
    });
    AttemptResult attempt = driver.attempt(task, gate, halted_);
    if (std::string unstored = gate.unstoredSubmission(); !unstored.empty() && !attempt.infrastructureError) {
        // The attempt is not whole in the store (a full disk): filed as an infrastructure error, it runs again.
        attempt.infrastructureError = true;
        attempt.error = unstored + "; the trial is run again";
    }
    return attempt;
}

Verdict Runner::gradeFinalKernel(std::size_t index, std::int64_t trialId, const AttemptResult& result,
                                 GraderProcess& grader) {
    if (result.finalKernel.empty()) {
        return noKernelVerdict(result.error, settings_.grade.boundary);
    }
    const PlanEntry& entry = summary_.plan.entries[index];
    const fs::path dir = attemptDir(entry, trialId);
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path finalPath = dir / "final_kernel.py";
    if (Status written = writeFileAtomically(finalPath, result.finalKernel); !written) {
        return infrastructureVerdict(written.error().message, "final");
    }
    return gradeWith(grader, gradeRequestFor(problemOf(entry), dslOf(entry.coordinate.arm.dsl), finalPath), &halted_);
}

void Runner::recordOutcome(std::size_t index, std::int64_t trialId, const AttemptResult& result, const Verdict& verdict,
                           Clock::time_point attemptStarted) {
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
            if (!result.finalKernel.empty()) {
                SubmissionRecord final;
                final.trialId = trialId;
                final.index = 0;
                final.kernelSource = result.finalKernel;
                final.verdict = verdict;
                final.evalSeconds = verdict.evalSeconds;
                if (auto added = store_->addSubmission(final); !added) {
                    return added.error();
                }
            }
            return store_->finishTrial(trialId, outcome);
        });
    }();
    if (!written) {
        settle(index, Settlement::brokeDuringAttempt(written.error().message, secondsSince(attemptStarted)));
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_[index].skill = outcome.skillText;
    }
    if (infrastructure) {
        settle(index, Settlement::brokeDuringAttempt(outcome.error, secondsSince(attemptStarted)));
        return;
    }
    settle(index, Settlement::finished(
                      verdict, verdict.passed ? outcome.error : (verdict.error.empty() ? outcome.error : verdict.error),
                      secondsSince(attemptStarted)));
}

void Runner::process(std::size_t index, GraderProcess& grader, AgentDriver& driver) {
    const std::optional<SourceSkill> source = resolveSource(index);
    if (!source) {
        return; // settled as blocked or skipped
    }
    const std::optional<std::int64_t> trialId = startTrial(index, *source);
    if (!trialId) {
        return;
    }
    const auto attemptStarted = Clock::now();
    auto stopped = [&]() {
        if (!halted_.load()) {
            return false;
        }
        Settlement interrupted = Settlement::interrupted(secondsSince(attemptStarted));
        if (!cancel_.load()) {
            interrupted.message = "stopped: every grading device was lost";
        }
        {
            std::lock_guard<std::mutex> lock(storeMutex_);
            (void)store_->updateTrialStatus(*trialId, TrialStatus::Interrupted, interrupted.message);
        }
        settle(index, interrupted);
        return true;
    };
    const AttemptResult result = runAttempt(index, *trialId, *source, grader, driver);
    if (stopped()) {
        return;
    }
    // The final fresh evaluation of the last kernel.py.
    const Verdict verdict = gradeFinalKernel(index, *trialId, result, grader);
    if (stopped()) {
        return;
    }
    recordOutcome(index, *trialId, result, verdict, attemptStarted);
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
            wake_.wait(lock, [&]() { return !ready_.empty() || outstanding_ <= 0 || stopping(); });
            if (stopping() || ready_.empty()) {
                break;
            }
            index = ready_.front();
            ready_.pop_front();
            entries_[index].state = EntryState::Running;
        }
        if (!driver) {
            settle(index, Settlement::failedBeforeAttempt(driverError));
            continue;
        }
        process(index, *grader, *driver);
    }
    grader->stop();
    wake_.notify_all();
}

Status Runner::loadHistory() {
    for (const Problem& problem : settings_.problems) {
        problemsByNumber_.emplace(problem.number, &problem);
    }
    if (store_) {
        TrialFilter filter;
        filter.model = settings_.model;
        auto loaded = store_->loadTrials(filter);
        if (!loaded) {
            return loaded.error();
        }
        historyList_ = std::move(loaded).value();
    }
    for (const TrialRecord& record : historyList_) {
        history_.emplace(record.id, record);
    }
    return Ok{};
}

Status Runner::planRun(const PlanRequest& request) {
    if (Status valid = validatePlanRequest(request); !valid) {
        return valid;
    }
    summary_.plan = makePlan(request, historyList_, contextFromTrials(historyList_));
    const Plan& plan = summary_.plan;
    entries_.assign(plan.entries.size(), EntryProgress{});
    for (std::size_t i = 0; i < plan.entries.size(); ++i) {
        const PlanEntry& entry = plan.entries[i];
        if (!startsAttempt(entry.status) && entry.status != PlanStatus::Skip) {
            continue;
        }
        if (!settings_.onlyCoordinates.empty() && !settings_.onlyCoordinates.count(entry.coordinateText)) {
            continue; // mkb run-shard: one Slurm job runs one trial of the plan
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
    std::vector<int> numbers;
    for (const Problem& problem : settings_.problems) {
        numbers.push_back(problem.number);
    }
    for (const Cell& cell : cellsFor(numbers, request.dslA, request.dslB, request.replicates)) {
        RunCell run{cell, {}, false};
        bool complete = true;
        const Coordinate arms[] = {cell.source(), cell.base(), cell.skill()};
        for (std::size_t arm = 0; arm < 3; ++arm) {
            const PlanEntry* found = plan.find(formatCoordinate(arms[arm]));
            complete = complete && found;
            run.entries[arm] = found ? static_cast<std::size_t>(found - plan.entries.data()) : 0;
        }
        if (complete) {
            cells_.push_back(run);
        }
    }
    ProgressEvent planEvent;
    planEvent.kind = ProgressEventKind::Plan;
    planEvent.plan = &plan;
    emit(planEvent);
    return Ok{};
}

Status Runner::recordInvocation(const PlanRequest& request) {
    std::lock_guard<std::mutex> lock(storeMutex_);
    return store_->transaction([&]() -> Status {
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
        if (!settings_.devices.empty()) {
            effective["devices"] = settings_.devices;
        }
        effective["wall_clock_s"] = settings_.budget.wallSeconds;
        effective["submissions"] = settings_.budget.maxSubmissions;
        effective["max_kernel_bytes"] = settings_.budget.maxKernelBytes;
        effective["concurrency"] = settings_.concurrency;
        effective["rerun_stale"] = settings_.rerunStale;
        effective["boundary"] = settings_.grade.boundary;
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
}

void Runner::runWorkers(const GraderLaunch& launch, std::unique_ptr<GraderProcess> firstGrader) {
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
            if (stopping()) {
                halted_.store(true); // the attempts in flight stop too
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
}

RetimeJob Runner::retimeJob(const PlanRequest& request) const {
    RetimeJob job;
    job.scope.model = settings_.model;
    job.scope.problems = settings_.problems;
    job.scope.directions = directionsForPair(request.dslA, request.dslB);
    for (int k = 1; k <= settings_.replicates; ++k) {
        job.scope.replicates.push_back(k);
    }
    job.device = settings_.device;
    for (const std::string& device : settings_.devices) {
        job.sameDevices.push_back(graderDeviceFor(device)); // a cell re-timed on any device of the run is current
    }
    job.retime = settings_.retimeSettings;
    job.grade = settings_.grade;
    const RunDsl dslA = settings_.dslA;
    const RunDsl dslB = settings_.dslB;
    job.dslDescriptor = [dslA, dslB](const std::string& id) -> Result<std::string> {
        if (id == dslA.descriptor.id) {
            return dslA.descriptorJson;
        }
        if (id == dslB.descriptor.id) {
            return dslB.descriptorJson;
        }
        return makeError("not a DSL of this run");
    };
    return job;
}

void Runner::emitRetimed(const RetimeOutcome& outcome) {
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
}

void Runner::startRetimer(const GraderLaunch& launch, const PlanRequest& request) {
    retimer_ = std::make_unique<CellRetimer>(
        *store_, storeMutex_, launch, retimeJob(request),
        [this](const RetimeOutcome& outcome) { emitRetimed(outcome); },
        [this](const std::string& message) {
            ProgressEvent event;
            event.kind = ProgressEventKind::Retimed;
            event.status = "error";
            event.message = message;
            emit(event);
        },
        cancel_, pool_.get());
    retimer_->start();
    std::lock_guard<std::mutex> lock(mutex_);
    queueFinalCellsLocked(); // cells none of whose arms run now: re-timed while the attempts go on
}

void Runner::queueFinalCellsLocked() {
    if (!retimer_ || cancel_.load()) {
        return;
    }
    const auto isFinal = [&](std::size_t index) {
        const EntryState state = entries_[index].state;
        return state == EntryState::NotScheduled || state == EntryState::Done || state == EntryState::Failed ||
               state == EntryState::Interrupted;
    };
    for (RunCell& cell : cells_) {
        if (!cell.queued && std::all_of(cell.entries.begin(), cell.entries.end(), isFinal)) {
            cell.queued = true;
            retimer_->enqueue(cell.cell);
        }
    }
}

Verdict Runner::gradeWith(GraderProcess& grader, const GradeRequest& request, const std::atomic<bool>* cancel) {
    if (!pool_) {
        Verdict verdict = grader.grade(request, {}, cancel);
        verdict.device = request.device;
        return verdict;
    }
    Verdict verdict = pool_->grade(request, {}, cancel);
    if (pool_->inRotation() == 0) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            poolLost_.store(true);
            halted_.store(true); // the attempts in flight stop: their gradings could only fail now
        }
        wake_.notify_all(); // no new attempt starts; the run ends with an error once the running ones have settled
    }
    return verdict;
}

std::string Runner::poolLostReasons() const {
    std::string reasons;
    for (const PoolDeviceState& state : pool_->devices()) {
        reasons += (reasons.empty() ? "" : "; ") + state.device + ": " + state.lostReason;
    }
    return reasons;
}

Status Runner::startGrading(GraderProcess& firstGrader, const GraderLaunch& launch) {
    if (settings_.devices.empty()) {
        if (Status started = firstGrader.start(); !started) {
            return makeError("the grader could not start: " + started.error().message);
        }
        graderFingerprint_ = firstGrader.hello().graderFingerprint;
        return Ok{};
    }
    // One server per device; a lost device says so once, on a line of its own, and its gradings go elsewhere.
    pool_ = std::make_unique<GraderPool>(settings_.devices, launch,
                                         [this](const std::string& device, const std::string& message) {
                                             ProgressEvent note;
                                             note.kind = ProgressEventKind::Note;
                                             note.coordinate = device;
                                             note.message = message;
                                             emit(note);
                                         });
    for (const auto& [device, peaks] : settings_.peaksByDevice) {
        pool_->setPeaks(device, peaks);
    }
    if (Status started = pool_->start(); !started) {
        return makeError("the grader could not start: " + started.error().message);
    }
    graderFingerprint_ = pool_->hello().graderFingerprint;
    return Ok{};
}

Result<RunSummary> Runner::run() {
    GraderLaunch launch = settings_.grader;
    auto firstGrader = std::make_unique<GraderProcess>(launch); // with a pool, the workers' graders never start
    if (Status started = startGrading(*firstGrader, launch); !started) {
        return started.error();
    }
    summary_.graderFingerprint = graderFingerprint_;

    if (Status loaded = loadHistory(); !loaded) {
        return loaded.error();
    }
    PlanRequest request;
    request.model = settings_.model;
    request.problems = settings_.problems;
    request.dslA = settings_.dslA.descriptor.id;
    request.dslB = settings_.dslB.descriptor.id;
    request.replicates = settings_.replicates;
    request.graderFingerprint = graderFingerprint_;
    request.boundary = settings_.grade.boundary;
    request.rerunStale = settings_.rerunStale;
    if (Status planned = planRun(request); !planned) {
        return planned.error();
    }
    if (settings_.dryRun) {
        firstGrader->stop();
        summary_.seconds = secondsSince(started_);
        return summary_;
    }
    if (!store_) {
        return makeError("run: no store to record trials in");
    }
    // The run's own records: problems, model, invocation.
    if (Status recorded = recordInvocation(request); !recorded) {
        firstGrader->stop();
        return recorded.error();
    }
    // Paired re-timing (DESIGN §5.5) on the run's device, beside the attempts: each cell as soon as its three arms
    // are final, then a sweep of the selection; missing or stale cells only, so no cell is re-timed twice.
    if (settings_.retime) {
        startRetimer(launch, request);
    }
    runWorkers(launch, std::move(firstGrader));
    summary_.cancelled = cancel_.load();
    if (retimer_) {
        const CellRetimeCounts counts = retimer_->finish(!summary_.cancelled && !poolLost_.load());
        summary_.retimed = counts.retimed;
        summary_.retimeErrors = counts.errors;
        summary_.cancelled = cancel_.load();
    }
    {
        std::lock_guard<std::mutex> lock(storeMutex_);
        (void)store_->finishInvocation(invocationId_);
    }
    summary_.seconds = secondsSince(started_);
    if (poolLost_.load() && !summary_.cancelled) {
        return makeError("every grading device was lost (" + poolLostReasons() + "); " +
                         std::to_string(summary_.finished + summary_.skipped) +
                         " trials finished and are stored, the rest were not run or ended with an infrastructure "
                         "error: check the devices and run the same command again to complete the run");
    }
    return summary_;
}

} // namespace

Result<RunSummary> runProtocol(const RunSettings& settings, Store* store, const DriverFactory& makeDriver,
                               ProgressSink& progress, const std::atomic<bool>& cancel) {
    Runner runner(settings, store, makeDriver, progress, cancel);
    return runner.run();
}

} // namespace mkb
