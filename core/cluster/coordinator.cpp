// The Slurm coordinator's loop, one named step each: lock the shared folder, merge shards, plan, follow the jobs,
// submit what is runnable, and finally account for what this invocation set out to do.
#include "core/cluster/coordinator.h"

#include "core/cluster/batch.h"
#include "core/grader_client/grader_fingerprint.h"
#include "core/util/paths.h"
#include "core/util/sha256.h"
#include "core/util/utc_time.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace mkb::cluster {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

bool fileExists(const fs::path& path) {
    std::error_code ec;
    return fs::exists(path, ec);
}

/// Where a task stands for this coordinator.
struct Tracked {
    std::size_t batch = 0;
    int index = 0;
    JobPhase phase = JobPhase::Queued;
    bool announced = false; // trial_started was emitted
    std::string jobState;   // the last Slurm state reported in the progress stream
};

class Coordinator {
public:
    Coordinator(const RunSettings& settings, const ClusterSettings& cluster, Store& store, SlurmClient& slurm,
                ProgressSink& progress, const std::atomic<bool>& cancel)
        : settings_(settings), cluster_(cluster), folder_(cluster.folder), store_(store), slurm_(slurm),
          progress_(progress), cancel_(cancel), jobName_(jobNameFor(cluster.folder)), started_(Clock::now()) {}

    ~Coordinator() {
        if (lockFd_ >= 0) {
            ::close(lockFd_); // releases the flock
        }
    }

    Result<RunSummary> run() {
        if (Status locked = lockFolder(); !locked) {
            return locked.error();
        }
        auto fingerprint =
            graderFingerprintOf(settings_.grader.packageDir.empty() ? graderPackageDir() : settings_.grader.packageDir);
        if (!fingerprint) {
            return makeError("the grader's fingerprint: " + fingerprint.error().message);
        }
        summary_.graderFingerprint = *fingerprint;
        std::vector<std::string> issues;
        batches_ = readBatches(folder_, issues);
        note(issues);
        trackUnsettled();
        merge(); // shards that finished while no coordinator was running
        auto first = plan();
        if (!first) {
            return first.error();
        }
        summary_.plan = std::move(first).value();
        for (const PlanEntry& entry : summary_.plan.entries) {
            if (startsAttempt(entry.status) || entry.status == PlanStatus::Skip) {
                selected_.insert(entry.coordinateText);
            }
        }
        counting_ = true;
        ProgressEvent planEvent;
        planEvent.kind = ProgressEventKind::Plan;
        planEvent.plan = &summary_.plan;
        emit(planEvent);
        if (settings_.dryRun) {
            summary_.seconds = seconds();
            return summary_;
        }
        if (Status recorded = recordInvocation(); !recorded) {
            return recorded.error();
        }
        Plan current = summary_.plan;
        while (true) {
            if (Status followed = follow(); !followed) {
                finishInvocation();
                return followed.error();
            }
            if (cancel_.load()) {
                break;
            }
            if (Status submitted = submit(current); !submitted) {
                finishInvocation();
                return submitted.error();
            }
            if (tracked_.empty()) {
                break;
            }
            pause();
            merge();
            auto next = plan();
            if (!next) {
                finishInvocation();
                return next.error();
            }
            current = std::move(next).value();
        }
        summary_.cancelled = cancel_.load();
        account(current);
        finishInvocation();
        summary_.seconds = seconds();
        return summary_;
    }

private:
    /// One coordinator per shared folder: a second one would submit the same trials again.
    Status lockFolder() {
        std::error_code ec;
        fs::create_directories(folder_.shards(), ec);
        if (ec) {
            return makeError("cannot create " + folder_.shards().string() + ": " + ec.message() +
                             " (give --shared a folder every node and this host can write)");
        }
        const fs::path lockPath = folder_.root / "coordinator.lock";
        lockFd_ = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (lockFd_ < 0) {
            return makeError("cannot open " + lockPath.string() + ": " + std::strerror(errno));
        }
        if (::flock(lockFd_, LOCK_EX | LOCK_NB) != 0) {
            return makeError("another mkb run is coordinating " + folder_.root.string() +
                             " (it holds coordinator.lock); wait for it, or stop it and run again");
        }
        return Ok{};
    }

    Result<Plan> plan() {
        TrialFilter filter;
        filter.model = settings_.model;
        auto history = store_.loadTrials(filter);
        if (!history) {
            return history.error();
        }
        PlanRequest request;
        request.model = settings_.model;
        request.problems = settings_.problems;
        request.dslA = settings_.dslA.descriptor.id;
        request.dslB = settings_.dslB.descriptor.id;
        request.replicates = settings_.replicates;
        request.graderFingerprint = summary_.graderFingerprint;
        request.boundary = settings_.grade.boundary;
        request.rerunStale = settings_.rerunStale;
        if (Status valid = validatePlanRequest(request); !valid) {
            return valid.error();
        }
        return makePlan(request, *history, contextFromTrials(*history));
    }

    Status recordInvocation() {
        return store_.transaction([&]() -> Status {
            for (const Problem& problem : settings_.problems) {
                if (auto stored = store_.upsertProblem(problem); !stored) {
                    return stored.error();
                }
            }
            if (auto model = store_.ensureModel(settings_.model, settings_.driverKind, settings_.driverSettingsJson);
                !model) {
                return model.error();
            }
            InvocationRecord invocation;
            invocation.commandLine = settings_.commandLine;
            nlohmann::json effective;
            effective["model"] = settings_.model;
            effective["driver"] = settings_.driverKind;
            effective["dsls"] = {settings_.dslA.descriptor.id, settings_.dslB.descriptor.id};
            effective["replicates"] = settings_.replicates;
            effective["device"] = settings_.device;
            effective["executor"] = "slurm";
            effective["boundary"] = settings_.grade.boundary;
            effective["shared"] = folder_.root.string();
            effective["wall_clock_s"] = settings_.budget.wallSeconds;
            effective["submissions"] = settings_.budget.maxSubmissions;
            effective["max_kernel_bytes"] = settings_.budget.maxKernelBytes;
            effective["rerun_stale"] = settings_.rerunStale;
            invocation.settingsJson = effective.dump();
            invocation.graderFingerprint = summary_.graderFingerprint;
            invocation.pid = static_cast<std::int64_t>(::getpid());
            auto begun = store_.beginInvocation(invocation);
            if (!begun) {
                return begun.error();
            }
            invocationId_ = *begun;
            return Ok{};
        });
    }

    void finishInvocation() {
        if (invocationId_ != 0) {
            (void)store_.finishInvocation(invocationId_);
            invocationId_ = 0;
        }
    }

    void trackUnsettled() {
        for (std::size_t b = 0; b < batches_.size(); ++b) {
            for (int i = 0; i < static_cast<int>(batches_[b].tasks.size()); ++i) {
                if (!batches_[b].settled.count(i)) {
                    tracked_[batches_[b].tasks[i].coordinate] = Tracked{b, i, JobPhase::Queued, false, ""};
                }
            }
        }
    }

    /// Files the finished shards; each newly filed one is a finished trial of this run.
    void merge() {
        MergeSummary merged = mergeShards(store_, folder_, invocationId_);
        note(merged.issues);
        for (const MergedShard& one : merged.merged) {
            if (one.filed == FiledAs::Unchanged || !counting_) {
                continue;
            }
            std::string jobState;
            if (auto it = tracked_.find(one.shard.trial.coordinate); it != tracked_.end()) {
                it->second.phase = JobPhase::Ended; // its job is done; follow() settles it
                jobState = it->second.jobState;
            }
            const TrialOutcome& outcome = one.shard.outcome;
            const bool infrastructure = outcome.status == TrialStatus::InfrastructureError;
            if (one.history) {
                // not this run's trial any more
            } else if (infrastructure) {
                ++failed_;
            } else if (outcome.status == TrialStatus::Skipped) {
                ++summary_.skipped;
            } else {
                ++summary_.finished;
                summary_.passed += outcome.verdict && outcome.verdict->passed ? 1 : 0;
            }
            ProgressEvent event;
            event.kind = ProgressEventKind::TrialFinished;
            event.coordinate = one.shard.trial.coordinate;
            event.trialId = one.trialId;
            event.status = toString(outcome.status);
            event.jobId = one.shard.jobId;
            event.jobState = jobState;
            if (outcome.verdict && outcome.status == TrialStatus::Finished) {
                event.passed = outcome.verdict->passed;
                if (outcome.verdict->passed) {
                    event.speedup = outcome.verdict->speedupVsEager;
                }
            }
            event.message = "slurm job " + one.shard.jobId + (one.shard.host.empty() ? "" : " on " + one.shard.host) +
                            (one.history      ? ", filed as history: another result took its place first"
                             : infrastructure ? ": " + outcome.error
                             : outcome.verdict && !outcome.verdict->passed ? ": " + outcome.verdict->error
                                                                           : "");
            emit(event);
        }
    }

    /// Looks at every tracked task: running ones are announced, ended ones without a shard are settled as lost.
    Status follow() {
        if (tracked_.empty()) {
            return Ok{};
        }
        auto live = slurm_.liveJobs(jobName_);
        if (!live) {
            // Slurm's controller may be restarting: keep trying for a while before giving up.
            if (++squeueFailures_ * cluster_.pollSeconds >= 300 && squeueFailures_ >= 3) {
                return makeError("Slurm did not answer for 5 minutes (" + live.error().message +
                                 "); the jobs keep running: run the same command again later");
            }
            note({"cannot follow the jobs: " + live.error().message + "; trying again in a moment"});
            return Ok{};
        }
        squeueFailures_ = 0;
        std::map<std::string, JobState> liveStates;
        std::map<std::string, std::string> arrayOfScript;
        for (const LiveJob& job : *live) {
            liveStates[job.id] = job.state;
            arrayOfScript[job.command] = job.id.substr(0, job.id.find('_'));
        }
        // A batch whose job id was never recorded (the coordinator was killed right after sbatch): adopt it.
        for (Batch& batch : batches_) {
            if (!batch.jobId.empty()) {
                continue;
            }
            if (auto it = arrayOfScript.find(batchScript(folder_, batch.name).string()); it != arrayOfScript.end()) {
                batch.jobId = it->second;
                (void)writeBatchJobId(folder_, batch);
            }
        }
        for (auto& [coordinate, task] : tracked_) {
            const Batch& batch = batches_[task.batch];
            if (batch.jobId.empty()) {
                continue; // settled below as never submitted, unless its shard turns up
            }
            if (auto it = liveStates.find(batch.taskJobId(task.index)); it != liveStates.end()) {
                task.phase = it->second.phase;
                reportJobState(coordinate, task, batch, it->second.slurmState);
                if (task.phase == JobPhase::Running && !task.announced) {
                    announce(coordinate, task, batch);
                }
            }
        }
        std::map<std::string, JobState> past;
        std::vector<std::string> unknownFate;
        std::vector<std::string> toSettle;
        for (auto& [coordinate, task] : tracked_) {
            const Batch& batch = batches_[task.batch];
            const TaskSpec& spec = batch.tasks[task.index];
            const bool listed = !batch.jobId.empty() && liveStates.count(batch.taskJobId(task.index));
            if (listed) {
                continue;
            }
            if (fileExists(folder_.shards() / taskShardFileName(spec))) {
                continue; // finished; the next merge files it
            }
            if (!batch.jobId.empty()) {
                unknownFate.push_back(batch.taskJobId(task.index)); // a merged one's final state is for the stream
            }
            toSettle.push_back(coordinate);
        }
        past = slurm_.pastStates(unknownFate);
        for (const std::string& coordinate : toSettle) {
            Tracked task = tracked_.at(coordinate);
            Batch& batch = batches_[task.batch];
            const TaskSpec& spec = batch.tasks[task.index];
            std::string state = "merged";
            const JobState fate = batch.jobId.empty() ? JobState{} : past[batch.taskJobId(task.index)];
            if (!fileExists(folder_.merged() / taskShardFileName(spec))) {
                if (fate.phase == JobPhase::Queued || fate.phase == JobPhase::Running) {
                    continue; // squeue missed it for a moment; look again next time
                }
                state = fate.slurmState.empty() ? "UNKNOWN" : fate.slurmState;
                reportJobState(coordinate, task, batch, fate.slurmState);
                lost(coordinate, batch, task, state);
            } else {
                reportJobState(coordinate, task, batch, fate.slurmState);
            }
            batch.settled[task.index] = state;
            (void)writeBatchSettled(folder_, batch);
            tracked_.erase(coordinate);
        }
        return Ok{};
    }

    /// Whether the progress stream follows this coordinate: a trial this run set out to do.
    bool reported(const std::string& coordinate) const { return counting_ && selected_.count(coordinate); }

    /// A job_state event when Slurm names a state the stream has not seen for this task ("" = nothing learned).
    void reportJobState(const std::string& coordinate, Tracked& task, const Batch& batch,
                        const std::string& slurmState) {
        const std::string word = stateWord(slurmState);
        if (word.empty() || word == task.jobState || batch.jobId.empty()) {
            return;
        }
        task.jobState = word;
        if (!reported(coordinate)) {
            return;
        }
        ProgressEvent event;
        event.kind = ProgressEventKind::JobState;
        event.coordinate = coordinate;
        event.jobId = batch.taskJobId(task.index);
        event.jobState = word;
        event.message = "slurm job " + event.jobId + " " + slurmState;
        emit(event);
    }

    void announce(const std::string& coordinate, Tracked& task, const Batch& batch) {
        task.announced = true;
        if (!reported(coordinate)) {
            return;
        }
        ProgressEvent event;
        event.kind = ProgressEventKind::TrialStarted;
        event.coordinate = coordinate;
        event.status = "running";
        event.jobId = batch.taskJobId(task.index);
        event.jobState = task.jobState;
        event.message = "slurm job " + event.jobId;
        emit(event);
    }

    void lost(const std::string& coordinate, const Batch& batch, const Tracked& task, const std::string& state) {
        const int index = task.index;
        if (!tried_.count(coordinate)) {
            // An earlier run's job: this run submits the trial again if the plan still wants it.
            note({coordinate + ": an earlier run's slurm job " +
                  (batch.jobId.empty() ? std::string("(never submitted)") : batch.taskJobId(index)) + " ended " +
                  state + " without a shard"});
            return;
        }
        ++failed_;
        ProgressEvent event;
        event.kind = ProgressEventKind::TrialFinished;
        event.coordinate = coordinate;
        event.status = "lost";
        if (!batch.jobId.empty()) {
            event.jobId = batch.taskJobId(index);
            event.jobState = task.jobState;
        }
        event.message = "slurm job " +
                        (batch.jobId.empty() ? std::string("(never submitted)") : batch.taskJobId(index)) + " ended " +
                        state + " without a shard (log: " +
                        (folder_.logs() / (batch.jobId + "_" + std::to_string(index) + ".out")).string() +
                        "); run again to resubmit it";
        emit(event);
    }

    /// One job array of the runnable entries that are neither in flight nor already tried by this invocation.
    Status submit(const Plan& plan) {
        Batch batch;
        batch.name = "b-" + utcNowCompact() + "-" + std::to_string(::getpid()) + "-" + std::to_string(++batchCounter_);
        batch.runArgs = cluster_.runArgs;
        for (const PlanEntry& entry : plan.entries) {
            const bool runnable = startsAttempt(entry.status) || entry.status == PlanStatus::Skip;
            if (!runnable || entry.waitsForSource || tracked_.count(entry.coordinateText) ||
                tried_.count(entry.coordinateText)) {
                continue;
            }
            TaskSpec task;
            task.coordinate = entry.coordinateText;
            task.shardId = batch.name + "-" + std::to_string(batch.tasks.size());
            if (entry.status != PlanStatus::Run) {
                task.replacesTrialId = entry.liveTrialId;
            }
            if (entry.coordinate.arm.isSkill() && entry.sourceEntry) {
                const PlanEntry& source = plan.entries[*entry.sourceEntry];
                if (source.liveTrialId) {
                    auto seed = seedOf(*source.liveTrialId);
                    if (!seed) {
                        return seed.error();
                    }
                    task.seed = std::move(seed).value();
                }
            }
            batch.tasks.push_back(std::move(task));
        }
        if (batch.tasks.empty() || cancel_.load()) {
            return Ok{};
        }
        if (Status written = writeBatch(folder_, batch, cluster_.mkbPath); !written) {
            return written;
        }
        ArraySubmission array;
        array.script = batchScript(folder_, batch.name);
        array.count = static_cast<int>(batch.tasks.size());
        array.jobName = jobName_;
        array.outputPattern = (folder_.logs() / "%A_%a.out").string();
        array.workDir = folder_.root;
        std::error_code ec;
        fs::create_directories(folder_.logs(), ec);
        auto jobId = slurm_.submit(array);
        if (!jobId) {
            // Nothing was queued: the batch is settled as never submitted, so no later run waits for it.
            for (int i = 0; i < array.count; ++i) {
                batch.settled[i] = "NOT_SUBMITTED";
            }
            (void)writeBatchSettled(folder_, batch);
            return makeError("submitting " + std::to_string(array.count) + " trial(s): " + jobId.error().message);
        }
        batch.jobId = *jobId;
        if (Status recorded = writeBatchJobId(folder_, batch); !recorded) {
            note({recorded.error().message + " (the next run finds the jobs through squeue)"});
        }
        batches_.push_back(batch);
        for (int i = 0; i < array.count; ++i) {
            tried_.insert(batch.tasks[i].coordinate);
            tracked_[batch.tasks[i].coordinate] = Tracked{batches_.size() - 1, i, JobPhase::Queued, false, ""};
        }
        summary_.attempted += array.count;
        note({"submitted " + std::to_string(array.count) + " trial(s) as slurm job array " + *jobId + " (" +
              batchDir(folder_, batch.name).string() + ")"});
        for (const TaskSpec& task : batches_.back().tasks) {
            // sbatch took it: Slurm queues every new job as PENDING, so the stream shows the job at once
            reportJobState(task.coordinate, tracked_.at(task.coordinate), batches_.back(), "PENDING");
        }
        return Ok{};
    }

    Result<Shard> seedOf(std::int64_t trialId) {
        auto trial = store_.loadTrial(trialId);
        if (!trial) {
            return trial.error();
        }
        Shard seed;
        seed.shardId = "seed-" + std::to_string(trialId);
        seed.trial = *trial;
        seed.outcome = outcomeOfTrial(*trial);
        return seed;
    }

    /// What this invocation set out to do and did not: the exit code counts them.
    void account(const Plan& final) {
        int open = 0;
        for (const PlanEntry& entry : final.entries) {
            if (selected_.count(entry.coordinateText) && entry.status != PlanStatus::Reuse &&
                entry.status != PlanStatus::Stale) {
                ++open;
            }
        }
        if (summary_.cancelled) {
            summary_.interrupted = open;
            summary_.failed = 0;
            return;
        }
        summary_.failed = std::max(open, 0);
    }

    void pause() {
        const auto until = Clock::now() + std::chrono::milliseconds(static_cast<int>(cluster_.pollSeconds * 1000));
        while (Clock::now() < until && !cancel_.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }

    void note(const std::vector<std::string>& lines) {
        for (const std::string& line : lines) {
            std::fprintf(stderr, "mkb run: %s\n", line.c_str());
        }
        std::fflush(stderr);
    }

    void emit(ProgressEvent event) {
        event.counts.total = static_cast<int>(selected_.size());
        event.counts.done = summary_.finished + summary_.skipped;
        event.counts.failed = failed_;
        event.counts.passed = summary_.passed;
        int running = 0;
        for (const auto& [coordinate, task] : tracked_) {
            running += task.phase == JobPhase::Running && selected_.count(coordinate) ? 1 : 0;
        }
        event.counts.running = running;
        event.counts.elapsedSeconds = seconds();
        progress_.onEvent(event);
    }

    double seconds() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

    const RunSettings& settings_;
    const ClusterSettings& cluster_;
    const SharedFolder& folder_;
    Store& store_;
    SlurmClient& slurm_;
    ProgressSink& progress_;
    const std::atomic<bool>& cancel_;
    const std::string jobName_;
    const Clock::time_point started_;

    int lockFd_ = -1;
    std::int64_t invocationId_ = 0;
    int batchCounter_ = 0;
    int squeueFailures_ = 0;
    bool counting_ = false;
    int failed_ = 0;
    RunSummary summary_;
    std::vector<Batch> batches_;
    std::map<std::string, Tracked> tracked_; // unsettled tasks by coordinate
    std::set<std::string> tried_;            // coordinates this invocation submitted
    std::set<std::string> selected_;         // coordinates the first plan set out to run or record
};

} // namespace

std::string jobNameFor(const SharedFolder& folder) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(folder.root, ec);
    return "mkb-" + sha256Hex((ec ? folder.root : canonical).string()).substr(0, 8);
}

Result<RunSummary> runOnSlurm(const RunSettings& settings, const ClusterSettings& cluster, Store& store,
                              SlurmClient& slurm, ProgressSink& progress, const std::atomic<bool>& cancel) {
    Coordinator coordinator(settings, cluster, store, slurm, progress, cancel);
    return coordinator.run();
}

} // namespace mkb::cluster
