// The Slurm executor's parts without a cluster: Slurm's output parsed, the shard format, the merge rules (merged
// exactly once, a late duplicate filed as history), batch folders, and the job ids and states of the progress stream.
#include "core/cluster/batch.h"
#include "core/cluster/coordinator.h"
#include "core/cluster/shard.h"
#include "core/cluster/shard_merge.h"
#include "core/cluster/slurm_client.h"
#include "core/protocol/progress.h"
#include "core/util/text.h"
#include "core/wire/verdict_json.h"
#include "support/testpaths.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace mkb;
using namespace mkb::cluster;
namespace fs = std::filesystem;

namespace {

Verdict passingVerdict(double speedup) {
    Verdict verdict;
    verdict.imported = verdict.correct = verdict.passed = true;
    verdict.speedupVsEager = speedup;
    verdict.stage = "done";
    verdict.json = verdictToJson(verdict);
    return verdict;
}

Shard sampleShard(const std::string& id, const std::string& arm = "solo_cpusim", double speedup = 1.5) {
    Shard shard;
    shard.shardId = id;
    shard.jobId = "41_0";
    shard.host = "node1";
    TrialRecord& trial = shard.trial;
    trial.model = "testmodel";
    trial.suite = "fixtures";
    trial.problemNumber = 1;
    trial.problemSlug = "vector_add";
    trial.family = "elementwise";
    trial.replicate = 1;
    trial.arm = arm;
    trial.dsl = arm == "solo_cpusim" ? "cpusim" : "cpusimb";
    trial.coordinate = "p01_r1_" + arm;
    trial.problemFingerprint = "pf";
    trial.graderFingerprint = "gf";
    shard.outcome.status = TrialStatus::Finished;
    shard.outcome.verdict = passingVerdict(speedup);
    shard.outcome.verdict->device = "cuda:0"; // the node's device
    shard.outcome.skillText = std::string("# skill\nVectorised loads pay off.\n");
    shard.outcome.usage.inputTokens = 12;
    shard.outcome.usage.costUsd = 0.25;
    SubmissionRecord first;
    first.index = 1;
    first.kernelSource = "def kernel(): pass\n";
    first.verdict = passingVerdict(speedup);
    first.verdict.device = "cuda:0";
    first.evalSeconds = 0.5;
    SubmissionRecord final = first;
    final.index = 0;
    shard.submissions = {first, final};
    return shard;
}

std::unique_ptr<Store> openStore(const QTemporaryDir& dir, const char* name) {
    auto store = Store::open(fs::path(dir.path().toStdString()) / name, OpenMode::CreateIfMissing);
    return store ? std::move(store).value() : nullptr;
}

int countTrials(Store& store, bool includeArchived) {
    TrialFilter filter;
    filter.includeArchived = includeArchived;
    auto trials = store.loadTrials(filter);
    return trials ? static_cast<int>(trials->size()) : -1;
}

/// Slurm as a script: sbatch hands out array 77, squeue answers from a list of rounds (one per look, the last one
/// repeated), and sacct knows the final states.
class ScriptedSlurm final : public SlurmClient {
public:
    ScriptedSlurm() : SlurmClient(SlurmSettings{}) {}
    std::vector<std::map<std::string, std::string>> rounds; // job id → squeue's state, per look
    std::map<std::string, std::string> finalStates;
    int submissions = 0;

    Result<std::string> submit(const ArraySubmission&) override {
        ++submissions;
        return std::string("77");
    }
    Result<std::vector<LiveJob>> liveJobs(const std::string&) override {
        const auto& round = rounds[std::min(looks_++, rounds.size() - 1)];
        std::vector<LiveJob> jobs;
        for (const auto& [id, state] : round) {
            jobs.push_back({id, {phaseOfSlurmState(state), state}, "job.sh"});
        }
        return jobs;
    }
    std::map<std::string, JobState> pastStates(const std::vector<std::string>& jobIds) override {
        std::map<std::string, JobState> states;
        for (const std::string& id : jobIds) {
            if (auto found = finalStates.find(id); found != finalStates.end()) {
                states[id] = {phaseOfSlurmState(found->second), found->second};
            }
        }
        return states;
    }

private:
    std::size_t looks_ = 0;
};

/// Keeps each event as the JSON line the GUI would read, read back through the one parser.
class RecordedStream final : public ProgressSink {
public:
    std::vector<std::string> lines;
    void onEvent(const ProgressEvent& event) override { lines.push_back(progressEventJson(event)); }
    std::vector<ProgressEvent> events() const {
        std::vector<ProgressEvent> parsed;
        for (const std::string& line : lines) {
            if (auto event = parseProgressEventJson(line)) {
                parsed.push_back(*event);
            }
        }
        return parsed;
    }
};

std::string joined(const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) {
        text += (text.empty() ? "" : ", ") + item;
    }
    return text;
}

RunSettings onePairSettings() {
    RunSettings settings;
    settings.model = "testmodel";
    settings.driverKind = "reference";
    Problem problem;
    problem.suite = "fixtures";
    problem.number = 1;
    problem.slug = "vector_add";
    problem.family = "elementwise";
    problem.source = "# vector add\n";
    problem.fingerprint = "pf";
    settings.problems = {problem};
    settings.dslA.descriptor.id = "cpusim";
    settings.dslB.descriptor.id = "cpusimb";
    settings.grader.packageDir = mkbtest::sourceDir() / "core" / "grader";
    return settings;
}

} // namespace

class ClusterPartsTest : public QObject {
    Q_OBJECT

private slots:
    void sbatchParsableGivesTheJobIdWithOrWithoutCluster() {
        QCOMPARE(QString::fromStdString(*parseSbatchParsable("1234\n")), QString("1234"));
        QCOMPARE(QString::fromStdString(*parseSbatchParsable("77;gpu-cluster\n")), QString("77"));
        auto bad = parseSbatchParsable("sbatch: error: Batch job submission failed\n");
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find("Batch job submission failed") != std::string::npos);
    }

    void slurmStatesMapToPhases() {
        QCOMPARE(phaseOfSlurmState("PENDING"), JobPhase::Queued);
        QCOMPARE(phaseOfSlurmState("RUNNING"), JobPhase::Running);
        QCOMPARE(phaseOfSlurmState("COMPLETING+"), JobPhase::Running);
        QCOMPARE(phaseOfSlurmState("CANCELLED by 0"), JobPhase::Ended);
        QCOMPARE(phaseOfSlurmState("NODE_FAIL"), JobPhase::Ended);
        QCOMPARE(phaseOfSlurmState(""), JobPhase::Unknown);
    }

    void stateLinesExpandAnArraysPendingRange() {
        const auto states = parseStateLines("12_[0-2,5]|PENDING\n13_1|RUNNING\nnot a line\n14_0|CANCELLED by 0\n");
        QCOMPARE(int(states.size()), 6);
        QCOMPARE(states.at("12_5").phase, JobPhase::Queued);
        QCOMPARE(states.at("13_1").phase, JobPhase::Running);
        QCOMPARE(QString::fromStdString(states.at("14_0").slurmState), QString("CANCELLED by 0"));
        const auto live = parseLiveJobs("13_1|RUNNING|/shared/batches/b-1/job.sh\n");
        QCOMPARE(int(live.size()), 1);
        QCOMPARE(QString::fromStdString(live[0].command), QString("/shared/batches/b-1/job.sh"));
    }

    void scontrolRecordsNameArrayTasks() {
        const auto states =
            parseScontrolJobs("JobId=45 ArrayJobId=41 ArrayTaskId=3 JobName=mkb-1 JobState=COMPLETED Reason=None\n"
                              "JobId=50 JobName=other JobState=TIMEOUT Reason=TimeLimit\n");
        QCOMPARE(states.at("41_3").phase, JobPhase::Ended);
        QCOMPARE(QString::fromStdString(states.at("50").slurmState), QString("TIMEOUT"));
        QVERIFY(!states.count("45"));
    }

    void sbatchCommandCarriesPartitionGpuTimeAndExtraArguments() {
        SlurmSettings settings;
        settings.partition = "h200";
        settings.timeLimit = "50";
        settings.extraArgs = {"--account=lab", "--qos=high"};
        ArraySubmission array{"/s/job.sh", 3, "mkb-abc", "/s/logs/%A_%a.out", "/s"};
        const std::vector<std::string> argv = sbatchCommand(settings, array);
        const std::vector<std::string> expected = {
            "sbatch",     "--parsable",       "--array=0-2",  "--job-name=mkb-abc", "--output=/s/logs/%A_%a.out",
            "--chdir=/s", "--partition=h200", "--gres=gpu:1", "--time=50",          "--account=lab",
            "--qos=high", "/s/job.sh"};
        QVERIFY(argv == expected);
        settings.gpuRequest.clear();
        const std::vector<std::string> noGres = sbatchCommand(settings, array);
        QVERIFY(std::find(noGres.begin(), noGres.end(), "--gres=gpu:1") == noGres.end());
    }

    void shardRoundTripKeepsTrialOutcomeAndSubmissions() {
        Shard shard = sampleShard("b-1-0");
        shard.replacesTrialId = 7;
        auto back = shardFromJson(shardToJson(shard), "x.json");
        QVERIFY2(back.ok(), back ? "" : back.error().message.c_str());
        QCOMPARE(QString::fromStdString(back->trial.coordinate), QString("p01_r1_solo_cpusim"));
        QCOMPARE(QString::fromStdString(back->trial.graderFingerprint), QString("gf"));
        QCOMPARE(back->replacesTrialId.value_or(-1), std::int64_t(7));
        QVERIFY(back->outcome.verdict && back->outcome.verdict->passed);
        QCOMPARE(back->outcome.verdict->speedupVsEager, 1.5);
        QCOMPARE(QString::fromStdString(*back->outcome.skillText), QString::fromStdString(*shard.outcome.skillText));
        QCOMPARE(back->outcome.usage.inputTokens.value_or(-1), std::int64_t(12));
        QVERIFY(!back->outcome.usage.outputTokens);
        QCOMPARE(int(back->submissions.size()), 2);
        QCOMPARE(back->submissions[1].index, 0);
        QCOMPARE(QString::fromStdString(back->trial.origin), QString("mkb-shard:b-1-0"));
        // Each verdict keeps the device that graded it on the node.
        QCOMPARE(QString::fromStdString(back->outcome.verdict->device), QString("cuda:0"));
        QCOMPARE(QString::fromStdString(back->submissions[0].verdict.device), QString("cuda:0"));
    }

    void shardMissingAFieldNamesItAndTheFile() {
        std::string text = shardToJson(sampleShard("b-1-0"));
        const std::size_t at = text.find("\"coordinate\"");
        text.replace(at, 12, "\"coordinatX\"");
        auto back = shardFromJson(text, "/shared/shards/p.json");
        QVERIFY(!back.ok());
        QVERIFY2(back.error().message.find("/shared/shards/p.json: field 'trial.coordinate' is missing") !=
                     std::string::npos,
                 back.error().message.c_str());
        auto cut = shardFromJson(text.substr(0, text.size() / 2), "cut.json");
        QVERIFY(!cut.ok());
        QVERIFY(cut.error().message.find("cut short") != std::string::npos);
    }

    void aShardIsMergedExactlyOnce() {
        QTemporaryDir dir;
        auto store = openStore(dir, "store.sqlite");
        QVERIFY(store);
        const Shard shard = sampleShard("b-1-0");
        auto first = fileShard(*store, shard, 0);
        QVERIFY2(first.ok(), first ? "" : first.error().message.c_str());
        QCOMPARE(first->filed, FiledAs::Imported);
        auto second = fileShard(*store, shard, 0);
        QVERIFY(second.ok());
        QCOMPARE(second->filed, FiledAs::Unchanged);
        QCOMPARE(countTrials(*store, true), 1);
        auto submissions = store->submissions(first->trialId);
        QVERIFY(submissions.ok());
        QCOMPARE(int(submissions->size()), 2);
        auto trial = store->loadTrial(first->trialId);
        QVERIFY(trial.ok());
        QCOMPARE(QString::fromStdString(trial->graderFingerprint), QString("gf"));
        QVERIFY(trial->finalVerdict && trial->finalVerdict->passed);
    }

    void aLateDuplicateIsFiledAsHistoryAndAPlannedRerunReplaces() {
        QTemporaryDir dir;
        auto store = openStore(dir, "store.sqlite");
        QVERIFY(store);
        auto first = fileShard(*store, sampleShard("b-1-0", "solo_cpusim", 1.5), 0);
        QVERIFY(first.ok());
        // A second job for the same empty coordinate (planned with no live trial) finishes later: history.
        auto duplicate = fileShard(*store, sampleShard("b-2-0", "solo_cpusim", 2.0), 0);
        QVERIFY(duplicate.ok());
        QVERIFY(duplicate->history);
        auto live = store->liveTrialAt("testmodel", "fixtures", 1, 1, "solo_cpusim");
        QVERIFY(live.ok() && *live);
        QCOMPARE((*live)->id, first->trialId);
        QCOMPARE(countTrials(*store, true), 2);
        QCOMPARE(fileShard(*store, sampleShard("b-2-0", "solo_cpusim", 2.0), 0)->filed, FiledAs::Unchanged);
        // A rerun planned against the live trial replaces it; the old one is archived, never deleted.
        Shard rerun = sampleShard("b-3-0", "solo_cpusim", 3.0);
        rerun.replacesTrialId = first->trialId;
        auto replaced = fileShard(*store, rerun, 0);
        QVERIFY(replaced.ok());
        QCOMPARE(replaced->filed, FiledAs::Replaced);
        QVERIFY(!replaced->history);
        QCOMPARE(countTrials(*store, false), 1);
        QCOMPARE(countTrials(*store, true), 3);
    }

    void skillArmShardLinksToTheLiveSolo() {
        QTemporaryDir dir;
        auto store = openStore(dir, "store.sqlite");
        auto solo = fileShard(*store, sampleShard("b-1-0", "solo_cpusim"), 0);
        auto skill = fileShard(*store, sampleShard("b-2-0", "cpusim2cpusimb_skill"), 0);
        QVERIFY(solo.ok() && skill.ok());
        auto trial = store->loadTrial(skill->trialId);
        QVERIFY(trial.ok());
        QCOMPARE(trial->sourceTrialId.value_or(-1), solo->trialId);
    }

    void mergeMovesShardsRejectsBrokenOnesAndSkipsTemporaryFiles() {
        QTemporaryDir dir;
        auto store = openStore(dir, "store.sqlite");
        SharedFolder folder{fs::path(dir.path().toStdString()) / "shared"};
        QVERIFY(writeShard(folder.shards(), sampleShard("b-1-0")).ok());
        QVERIFY(writeFileAtomically(folder.shards() / "p02_r1_solo_cpusim.b-1-1.json", "{\"format\": ").ok());
        QVERIFY(writeFileAtomically(folder.shards() / ".mkb-output-1-0.tmp", "{").ok());
        MergeSummary summary = mergeShards(*store, folder, 0);
        QCOMPARE(int(summary.merged.size()), 1);
        QCOMPARE(int(summary.issues.size()), 1);
        QVERIFY(fs::exists(folder.merged() / "p01_r1_solo_cpusim.b-1-0.json"));
        QVERIFY(fs::exists(folder.rejected() / "p02_r1_solo_cpusim.b-1-1.json.why"));
        QVERIFY(fs::exists(folder.shards() / ".mkb-output-1-0.tmp"));
        // The coordinator killed after filing but before moving: the shard is back, and merging it changes nothing.
        fs::rename(folder.merged() / "p01_r1_solo_cpusim.b-1-0.json",
                   folder.shards() / "p01_r1_solo_cpusim.b-1-0.json");
        MergeSummary again = mergeShards(*store, folder, 0);
        QCOMPARE(int(again.merged.size()), 1);
        QCOMPARE(again.merged[0].filed, FiledAs::Unchanged);
        QCOMPARE(countTrials(*store, true), 1);
    }

    void batchFolderRoundTripsAndItsScriptRunsRunShard() {
        QTemporaryDir dir;
        SharedFolder folder{fs::path(dir.path().toStdString()) / "shared"};
        Batch batch;
        batch.name = "b-20261201T000000Z-1-1";
        batch.runArgs = {"--model", "testmodel", "--problems", "p0[12]"};
        TaskSpec solo{"p01_r1_solo_cpusim", batch.name + "-0", std::nullopt, std::nullopt};
        TaskSpec skill{"p01_r1_cpusim2cpusimb_skill", batch.name + "-1", 9, sampleShard("seed-3")};
        batch.tasks = {solo, skill};
        QVERIFY(writeBatch(folder, batch, "/opt/mkb/bin/mkb").ok());
        batch.jobId = "88";
        batch.settled[0] = "COMPLETED";
        QVERIFY(writeBatchJobId(folder, batch).ok());
        QVERIFY(writeBatchSettled(folder, batch).ok());
        auto back = readBatch(batchDir(folder, batch.name), true);
        QVERIFY2(back.ok(), back ? "" : back.error().message.c_str());
        QCOMPARE(QString::fromStdString(back->jobId), QString("88"));
        QCOMPARE(QString::fromStdString(back->taskJobId(1)), QString("88_1"));
        QVERIFY(back->runArgs == batch.runArgs);
        QCOMPARE(int(back->tasks.size()), 2);
        QVERIFY(!back->tasks[0].seed);
        QVERIFY(back->tasks[1].seed);
        QCOMPARE(back->tasks[1].replacesTrialId.value_or(-1), std::int64_t(9));
        QCOMPARE(QString::fromStdString(back->settled.at(0)), QString("COMPLETED"));
        auto script = readFile(batchScript(folder, batch.name));
        QVERIFY(script.ok());
        QVERIFY2(script->find("exec /opt/mkb/bin/mkb run-shard ") != std::string::npos, script->c_str());
        QVERIFY(script->find("--task \"${SLURM_ARRAY_TASK_ID") != std::string::npos);
    }

    void aSlurmJobsEventsCarryItsIdAndStateAndReadBack() {
        ProgressEvent event;
        event.kind = ProgressEventKind::JobState;
        event.coordinate = "p01_r1_solo_cpusim";
        event.jobId = "1234_5";
        event.jobState = "RUNNING";
        const std::string line = progressEventJson(event);
        QVERIFY2(line.find("\"event\":\"job_state\"") != std::string::npos, line.c_str());
        auto back = parseProgressEventJson(line);
        QVERIFY(back);
        QCOMPARE(back->kind, ProgressEventKind::JobState);
        QCOMPARE(QString::fromStdString(back->coordinate), QString("p01_r1_solo_cpusim"));
        QCOMPARE(QString::fromStdString(back->jobId), QString("1234_5"));
        QCOMPARE(QString::fromStdString(back->jobState), QString("RUNNING"));
        QCOMPARE(QString::fromStdString(progressEventLine(*back)).section("] ", 1),
                 QString("p01_r1_solo_cpusim slurm job 1234_5: RUNNING"));

        event.kind = ProgressEventKind::TrialFinished;
        event.status = "lost";
        event.jobState = "NODE_FAIL";
        back = parseProgressEventJson(progressEventJson(event));
        QVERIFY(back);
        QCOMPARE(QString::fromStdString(back->jobId), QString("1234_5"));
        QCOMPARE(QString::fromStdString(back->jobState), QString("NODE_FAIL"));
        QCOMPARE(QString::fromStdString(back->status), QString("lost"));
    }

    void localTrialEventsCarryNoJobFields() {
        for (ProgressEventKind kind :
             {ProgressEventKind::TrialStarted, ProgressEventKind::Submission, ProgressEventKind::TrialFinished}) {
            ProgressEvent event;
            event.kind = kind;
            event.coordinate = "p01_r1_solo_cpusim";
            event.trialId = 3;
            const std::string line = progressEventJson(event);
            QVERIFY2(line.find("job_id") == std::string::npos && line.find("job_state") == std::string::npos,
                     line.c_str());
            QVERIFY(parseProgressEventJson(line)->jobId.empty());
        }
        ProgressEvent started;
        started.kind = ProgressEventKind::TrialStarted;
        started.coordinate = "p01_r1_solo_cpusim";
        started.trialId = 3;
        QCOMPARE(QString::fromStdString(progressEventLine(started)).section("] ", 1),
                 QString("p01_r1_solo_cpusim started (trial #3)"));
    }

    void coordinatorStreamsEveryNewJobStateOfItsTrials() {
        QTemporaryDir dir;
        auto store = openStore(dir, "store.sqlite");
        QVERIFY(store);
        ScriptedSlurm slurm;
        // Both solos of p01 go out as tasks 0 and 1 of array 77: pending, then task 0 runs (squeue says it twice:
        // one event), then task 1, then squeue lists neither and sacct says how each ended.
        slurm.rounds = {{{"77_0", "PENDING"}, {"77_1", "PENDING"}},
                        {{"77_0", "RUNNING"}, {"77_1", "PENDING"}},
                        {{"77_0", "RUNNING"}, {"77_1", "RUNNING"}},
                        {}};
        slurm.finalStates = {{"77_0", "CANCELLED by 0"}, {"77_1", "NODE_FAIL"}};
        ClusterSettings cluster;
        cluster.folder.root = fs::path(dir.path().toStdString()) / "shared";
        cluster.mkbPath = "/opt/mkb/bin/mkb";
        cluster.pollSeconds = 0.01;
        RecordedStream stream;
        std::atomic<bool> cancel{false};
        const RunSettings settings = onePairSettings();
        auto summary = runOnSlurm(settings, cluster, *store, slurm, stream, cancel);
        QVERIFY2(summary.ok(), summary.ok() ? "" : summary.error().message.c_str());
        QCOMPARE(slurm.submissions, 1);

        std::map<std::string, std::vector<std::string>> seen; // coordinate → "kind job state" in stream order
        std::map<std::string, std::string> jobOf;
        for (const ProgressEvent& event : stream.events()) {
            if (event.kind == ProgressEventKind::Plan || event.kind == ProgressEventKind::RunFinished) {
                QVERIFY(event.jobId.empty());
                continue;
            }
            QVERIFY2(!event.jobId.empty(), progressEventJson(event).c_str());
            jobOf[event.coordinate] = event.jobId;
            seen[event.coordinate].push_back(std::string(toString(event.kind)) + " " + event.jobState);
        }
        QCOMPARE(int(seen.size()), 2);
        for (const auto& [coordinate, sequence] : seen) {
            const std::string job = jobOf[coordinate];
            const std::string end = job == "77_0" ? "CANCELLED" : "NODE_FAIL";
            const std::vector<std::string> expected = {"job_state PENDING", "job_state RUNNING",
                                                       "trial_started RUNNING", "job_state " + end,
                                                       "trial_finished " + end};
            QVERIFY2(sequence == expected, (coordinate + ": " + joined(sequence)).c_str());
        }
        QVERIFY(jobOf.begin()->second != std::next(jobOf.begin())->second);
    }
};

QTEST_GUILESS_MAIN(ClusterPartsTest)
#include "tst_cluster_parts.moc"
