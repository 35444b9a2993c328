// store: records — trials, archive, one live trial per slot, transactions, verdicts, skills, annotations, speed.
#include "store_fixtures.h"

#include "core/util/sha256.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include <ctime>
#include <filesystem>

namespace fs = std::filesystem;
using namespace storetest;

namespace {

mkb::Verdict fullVerdict() {
    mkb::Verdict verdict;
    verdict.imported = true;
    verdict.correct = true;
    verdict.passed = true;
    verdict.speedupVsEager = 1.75;
    verdict.stage = "done";
    verdict.infrastructureError = false;
    verdict.timedOut = true;
    verdict.error = "late but fine";
    verdict.correctDraws = 4;
    verdict.totalDraws = 5;
    verdict.mismatch = "draw 3: max abs diff 0.5 at [1, 2]";
    verdict.compliant = true;
    verdict.complianceRule = "no_torch_ops";
    verdict.kernelMedianMs = 0.125;
    verdict.eagerMedianMs = 0.25;
    verdict.kernelIqrMs = 0.01;
    verdict.throttled = true;
    verdict.outliersCorrect = false;
    verdict.quant = mkb::QuantMetrics{0.99, 0.02, 0.03, true};
    mkb::Roofline roofline;
    roofline.bytes = 1e9;
    roofline.flops = 2e12;
    roofline.achievedGBps = 3000;
    roofline.iou = 0.7; // achievedTflops and mfu stay unknown
    verdict.roofline = roofline;
    verdict.evalSeconds = 12.5;
    verdict.deviceName = "NVIDIA H200";
    verdict.device = "cuda:1";
    verdict.json = R"({"passed": true, "speedup": 1.75})";
    return verdict;
}

void compareVerdicts(const mkb::Verdict& a, const mkb::Verdict& b) {
    QCOMPARE(a.imported, b.imported);
    QCOMPARE(a.correct, b.correct);
    QCOMPARE(a.passed, b.passed);
    QCOMPARE(a.speedupVsEager, b.speedupVsEager);
    QCOMPARE(a.stage, b.stage);
    QCOMPARE(a.infrastructureError, b.infrastructureError);
    QCOMPARE(a.timedOut, b.timedOut);
    QCOMPARE(a.error, b.error);
    QCOMPARE(a.correctDraws, b.correctDraws);
    QCOMPARE(a.totalDraws, b.totalDraws);
    QCOMPARE(a.mismatch, b.mismatch);
    QCOMPARE(a.compliant, b.compliant);
    QCOMPARE(a.complianceRule, b.complianceRule);
    QCOMPARE(a.kernelMedianMs, b.kernelMedianMs);
    QCOMPARE(a.eagerMedianMs, b.eagerMedianMs);
    QCOMPARE(a.kernelIqrMs, b.kernelIqrMs);
    QCOMPARE(a.throttled, b.throttled);
    QCOMPARE(a.outliersCorrect, b.outliersCorrect);
    QCOMPARE(a.quant.has_value(), b.quant.has_value());
    if (a.quant) {
        QCOMPARE(a.quant->cosine, b.quant->cosine);
        QCOMPARE(a.quant->relativeL1, b.quant->relativeL1);
        QCOMPARE(a.quant->rmse, b.quant->rmse);
        QCOMPARE(a.quant->passed, b.quant->passed);
    }
    QCOMPARE(a.roofline.has_value(), b.roofline.has_value());
    if (a.roofline) {
        QCOMPARE(a.roofline->bytes, b.roofline->bytes);
        QCOMPARE(a.roofline->flops, b.roofline->flops);
        QCOMPARE(a.roofline->achievedGBps, b.roofline->achievedGBps);
        QCOMPARE(a.roofline->achievedTflops, b.roofline->achievedTflops);
        QCOMPARE(a.roofline->iou, b.roofline->iou);
        QCOMPARE(a.roofline->mfu, b.roofline->mfu);
    }
    QCOMPARE(a.evalSeconds, b.evalSeconds);
    QCOMPARE(a.deviceName, b.deviceName);
    QCOMPARE(a.device, b.device);
    QCOMPARE(a.speedupCiLow, b.speedupCiLow);
    QCOMPARE(a.speedupCiHigh, b.speedupCiHigh);
    QCOMPARE(a.gpuMedianMs, b.gpuMedianMs);
    QCOMPARE(a.json, b.json);
}

std::int64_t countRows(mkb::Store& store, const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    std::int64_t value = -1;
    if (sqlite3_prepare_v2(store.handle(), sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
        value = sqlite3_column_int64(statement, 0);
    }
    sqlite3_finalize(statement);
    return value;
}

} // namespace

class StoreRecordsTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::unique_ptr<mkb::Store> store_;
    int storeCount_ = 0;

private slots:
    void init() {
        QVERIFY(dir_.isValid());
        store_ = openOrFail(fs::path(dir_.path().toStdString()) / ("s" + std::to_string(++storeCount_) + ".sqlite"));
        QVERIFY(store_);
    }
    void cleanup() { store_.reset(); }

    void loadTrialsRoundTripsEveryField() {
        mkb::InvocationRecord invocation;
        invocation.commandLine = "mkb run --problems p0*";
        invocation.settingsJson = R"({"replicates": 2})";
        invocation.graderFingerprint = "g123";
        invocation.pid = 4242;
        mkb::Result<std::int64_t> invocationId = store_->beginInvocation(invocation);
        QVERIFY(invocationId);

        mkb::TrialRecord source = sampleTrial("model-a", 7, 2, "solo_triton");
        mkb::Result<std::int64_t> sourceId = store_->insertTrial(source);
        QVERIFY(sourceId);

        mkb::TrialRecord trial = sampleTrial("model-a", 7, 2, "triton2cuda_skill");
        trial.dsl = "cuda";
        trial.sourceTrialId = *sourceId;
        trial.problemFingerprint = "pf-7";
        trial.graderFingerprint = "g123";
        trial.sourceSkillSha256 = "abc123";
        trial.startedAt = "2026-01-02T03:04:05Z";
        trial.invocationId = *invocationId;
        trial.usage.inputTokens = 1000;
        trial.origin = "mkb-import:0123abcd";
        mkb::Result<std::int64_t> id = store_->insertTrial(trial);
        QVERIFY(id);

        mkb::TrialOutcome outcome;
        outcome.status = mkb::TrialStatus::Finished;
        outcome.verdict = fullVerdict();
        outcome.usage = {12345, 678, 910, 1.25, 333.5};
        outcome.error = "";
        outcome.skillText = "# Skill\nReductions: fuse the max and the sum in one pass.\n";
        outcome.timedOut = true;
        outcome.skipped = false;
        outcome.finishedAt = "2026-01-02T04:00:00Z";
        QVERIFY(store_->finishTrial(*id, outcome));
        QVERIFY(store_->finishInvocation(*invocationId));

        mkb::Result<std::vector<mkb::TrialRecord>> trials = store_->loadTrials();
        QVERIFY(trials);
        QCOMPARE(trials->size(), std::size_t(2));
        const mkb::TrialRecord& loaded = trials->at(1);
        QCOMPARE(loaded.id, *id);
        QCOMPARE(loaded.model, trial.model);
        QCOMPARE(loaded.suite, trial.suite);
        QCOMPARE(loaded.problemNumber, 7);
        QCOMPARE(loaded.problemSlug, trial.problemSlug);
        QCOMPARE(loaded.family, trial.family);
        QCOMPARE(loaded.replicate, 2);
        QCOMPARE(loaded.arm, std::string("triton2cuda_skill"));
        QCOMPARE(loaded.dsl, std::string("cuda"));
        QCOMPARE(loaded.coordinate, std::string("p07_r2_triton2cuda_skill"));
        QCOMPARE(loaded.sourceTrialId, std::optional<std::int64_t>(*sourceId));
        QCOMPARE(loaded.status, mkb::TrialStatus::Finished);
        QCOMPARE(loaded.error, std::string());
        QCOMPARE(loaded.skipped, false);
        QCOMPARE(loaded.timedOut, true);
        QCOMPARE(loaded.archived, false);
        QCOMPARE(loaded.archivedAt, std::string());
        QCOMPARE(loaded.usage.inputTokens, std::optional<std::int64_t>(12345));
        QCOMPARE(loaded.usage.cacheTokens, std::optional<std::int64_t>(678));
        QCOMPARE(loaded.usage.outputTokens, std::optional<std::int64_t>(910));
        QCOMPARE(loaded.usage.costUsd, std::optional<double>(1.25));
        QCOMPARE(loaded.usage.agentSeconds, std::optional<double>(333.5));
        QCOMPARE(loaded.problemFingerprint, std::string("pf-7"));
        QCOMPARE(loaded.graderFingerprint, std::string("g123"));
        QCOMPARE(loaded.sourceSkillSha256, std::string("abc123"));
        QVERIFY(loaded.finalVerdict);
        compareVerdicts(*loaded.finalVerdict, fullVerdict());
        QCOMPARE(loaded.skillText, outcome.skillText);
        QCOMPARE(loaded.startedAt, std::string("2026-01-02T03:04:05Z"));
        QCOMPARE(loaded.finishedAt, std::string("2026-01-02T04:00:00Z"));
        QCOMPARE(loaded.invocationId, *invocationId);
        QCOMPARE(loaded.origin, std::string("mkb-import:0123abcd"));

        // The source trial: still running, unknown usage, no verdict, no skill, no invocation.
        const mkb::TrialRecord& running = trials->at(0);
        QCOMPARE(running.status, mkb::TrialStatus::Running);
        QVERIFY(!running.usage.inputTokens && !running.usage.cacheTokens && !running.usage.outputTokens);
        QVERIFY(!running.usage.costUsd && !running.usage.agentSeconds);
        QVERIFY(!running.finalVerdict);
        QVERIFY(!running.skillText);
        QVERIFY(!running.sourceTrialId);
        QCOMPARE(running.invocationId, std::int64_t(0));
        QVERIFY(!running.startedAt.empty());
        QCOMPARE(running.finishedAt, std::string());

        mkb::Result<mkb::TrialRecord> single = store_->loadTrial(*id);
        QVERIFY(single);
        QCOMPARE(single->coordinate, loaded.coordinate);
        QVERIFY(!store_->loadTrial(99999));

        mkb::Result<std::vector<mkb::InvocationRecord>> invocations = store_->invocations();
        QVERIFY(invocations);
        QCOMPARE(invocations->size(), std::size_t(1));
        QCOMPARE(invocations->front().commandLine, invocation.commandLine);
        QCOMPARE(invocations->front().pid, std::int64_t(4242));
        QVERIFY(!invocations->front().finishedAt.empty());
    }

    /// "store: a lean load keeps what the metrics read and leaves the heavy text and provenance out"
    void leanLoadKeepsWhatTheMetricsReadAndLeavesTheRestOut() {
        mkb::TrialRecord trial = sampleTrial("model-a", 3, 1, "solo_triton");
        trial.sourceSkillSha256 = "abc123";
        trial.origin = "mkb-import:0123abcd";
        mkb::Result<std::int64_t> id = store_->insertTrial(trial);
        QVERIFY(id);
        mkb::TrialOutcome outcome;
        outcome.verdict = fullVerdict();
        outcome.usage = {12345, 678, 910, 1.25, 333.5};
        outcome.skillText = "# Skill\nTile by 128.\n";
        outcome.timedOut = true;
        outcome.finishedAt = "2026-01-02T04:00:00Z";
        QVERIFY(store_->finishTrial(*id, outcome));
        // A SKILL.md of white space only is no skill; a trial without any skill row neither.
        mkb::Result<std::int64_t> blankId = store_->insertTrial(sampleTrial("model-a", 3, 1, "solo_cuda"));
        QVERIFY(blankId);
        mkb::TrialOutcome blank;
        blank.verdict = fullVerdict();
        blank.skillText = " \n\t\r\n";
        QVERIFY(store_->finishTrial(*blankId, blank));
        QVERIFY(store_->insertTrial(sampleTrial("model-a", 3, 1, "triton2cuda_skill")));

        mkb::Result<std::vector<mkb::TrialRecord>> full = store_->loadTrials();
        mkb::Result<std::vector<mkb::TrialRecord>> lean = store_->loadTrials({}, mkb::TrialDetail::Lean);
        QVERIFY(full && lean);
        QCOMPARE(lean->size(), std::size_t(3));
        for (std::size_t i = 0; i < lean->size(); ++i) {
            const mkb::TrialRecord& a = full->at(i);
            const mkb::TrialRecord& b = lean->at(i);
            QCOMPARE(a.lean, false);
            QCOMPARE(b.lean, true);
            QCOMPARE(b.id, a.id);
            QCOMPARE(b.model, a.model);
            QCOMPARE(b.suite, a.suite);
            QCOMPARE(b.problemNumber, a.problemNumber);
            QCOMPARE(b.problemSlug, a.problemSlug);
            QCOMPARE(b.family, a.family);
            QCOMPARE(b.replicate, a.replicate);
            QCOMPARE(b.arm, a.arm);
            QCOMPARE(b.dsl, a.dsl);
            QCOMPARE(b.coordinate, a.coordinate);
            QCOMPARE(b.sourceTrialId, a.sourceTrialId);
            QCOMPARE(b.status, a.status);
            QCOMPARE(b.error, a.error);
            QCOMPARE(b.skipped, a.skipped);
            QCOMPARE(b.timedOut, a.timedOut);
            QCOMPARE(b.archived, a.archived);
            QCOMPARE(b.usage.inputTokens, a.usage.inputTokens);
            QCOMPARE(b.usage.cacheTokens, a.usage.cacheTokens);
            QCOMPARE(b.usage.outputTokens, a.usage.outputTokens);
            QCOMPARE(b.usage.costUsd, a.usage.costUsd);
            QCOMPARE(b.usage.agentSeconds, a.usage.agentSeconds);
            QCOMPARE(b.startedAt, a.startedAt);
            QCOMPARE(b.finishedAt, a.finishedAt);
            QCOMPARE(b.invocationId, a.invocationId);
            QCOMPARE(b.skillWritten, a.skillWritten);
            QCOMPARE(b.finalVerdict.has_value(), a.finalVerdict.has_value());
            if (b.finalVerdict) {
                mkb::Verdict withoutJson = *a.finalVerdict;
                withoutJson.json.clear();
                compareVerdicts(*b.finalVerdict, withoutJson);
                QVERIFY(!a.finalVerdict->json.empty());
                QVERIFY(b.finalVerdict->json.empty());
            }
            // Left out: the skill text and the provenance.
            QVERIFY(!b.skillText);
            QCOMPARE(b.problemFingerprint, std::string());
            QCOMPARE(b.graderFingerprint, std::string());
            QCOMPARE(b.sourceSkillSha256, std::string());
            QCOMPARE(b.origin, std::string());
        }
        QCOMPARE(full->at(0).skillWritten, true);
        QCOMPARE(full->at(1).skillWritten, false);
        QVERIFY(full->at(1).skillText); // the blank text is kept as written; it only does not count
        QCOMPARE(full->at(2).skillWritten, false);
        QCOMPARE(full->at(0).sourceSkillSha256, std::string("abc123"));

        // The heavy fields of one trial, on demand.
        mkb::Result<mkb::TrialRecord> one = store_->loadTrial(*id);
        QVERIFY(one);
        QCOMPARE(one->lean, false);
        QCOMPARE(one->skillText, outcome.skillText);
        QCOMPARE(one->finalVerdict->json, fullVerdict().json);
        QCOMPARE(one->origin, std::string("mkb-import:0123abcd"));

        // The filters hold for lean loads too.
        QCOMPARE(store_->loadTrials({std::string("nobody"), {}, false}, mkb::TrialDetail::Lean)->size(),
                 std::size_t(0));
    }

    // store: visitTrials hands over, one at a time, exactly the trials a Metrics load returns
    void visitTrialsHandsOverWhatAMetricsLoadReturns() {
        mkb::Result<std::int64_t> id = store_->insertTrial(sampleTrial("model-a", 3, 1, "solo_triton"));
        QVERIFY(id);
        mkb::TrialOutcome outcome;
        outcome.verdict = fullVerdict();
        outcome.usage = {12345, 678, 910, 1.25, 333.5};
        outcome.skillText = "# Skill\nTile by 128.\n";
        QVERIFY(store_->finishTrial(*id, outcome));
        QVERIFY(store_->insertTrial(sampleTrial("model-a", 3, 1, "triton2cuda_skill"))); // running: no verdict
        mkb::Result<std::int64_t> other = store_->insertTrial(sampleTrial("model-b", 4, 2, "solo_cuda"));
        QVERIFY(other);
        mkb::TrialOutcome failed;
        failed.verdict = mkb::Verdict{};
        failed.verdict->deviceName = "gpu-b";
        QVERIFY(store_->finishTrial(*other, failed));
        mkb::Result<std::int64_t> redone = store_->insertTrial(sampleTrial("model-b", 5, 1, "solo_cuda"));
        QVERIFY(redone);
        QVERIFY(store_->finishTrial(*redone, outcome));
        QVERIFY(store_->archiveTrial(*redone));

        for (const bool archived : {false, true}) {
            for (const mkb::MetricColumns columns : {mkb::MetricColumns{}, mkb::MetricColumns{false, false, false},
                                                     mkb::MetricColumns{true, false, true}}) {
                const mkb::TrialFilter filter{{}, {}, archived};
                mkb::Result<std::vector<mkb::TrialRecord>> loaded =
                    store_->loadTrials(filter, mkb::TrialDetail::Metrics, columns);
                QVERIFY(loaded);
                std::vector<mkb::TrialRecord> visited;
                QVERIFY(store_->visitTrials(filter, columns,
                                            [&](const mkb::TrialRecord& trial) { visited.push_back(trial); }));
                QCOMPARE(visited.size(), loaded->size());
                QCOMPARE(store_->countTrials(filter).value(), loaded->size());
                QCOMPARE(loaded->size(), std::size_t(archived ? 4 : 3));
                for (std::size_t i = 0; i < visited.size(); ++i) {
                    const mkb::TrialRecord& a = loaded->at(i);
                    const mkb::TrialRecord& b = visited[i];
                    QCOMPARE(b.id, a.id);
                    QCOMPARE(b.model, a.model);
                    QCOMPARE(b.problemNumber, a.problemNumber);
                    QCOMPARE(b.problemSlug, a.problemSlug);
                    QCOMPARE(b.family, a.family);
                    QCOMPARE(b.replicate, a.replicate);
                    QCOMPARE(b.arm, a.arm);
                    QCOMPARE(b.dsl, a.dsl);
                    QCOMPARE(b.status, a.status);
                    QCOMPARE(b.skipped, a.skipped);
                    QCOMPARE(b.archived, a.archived);
                    QCOMPARE(b.lean, a.lean);
                    QCOMPARE(b.skillWritten, a.skillWritten);
                    QCOMPARE(b.usage.inputTokens, a.usage.inputTokens);
                    QCOMPARE(b.usage.agentSeconds, a.usage.agentSeconds);
                    QCOMPARE(b.finalVerdict.has_value(), a.finalVerdict.has_value());
                    if (a.finalVerdict) {
                        compareVerdicts(*b.finalVerdict, *a.finalVerdict);
                    }
                }
                // The record is refilled row after row: a trial without a verdict shows none.
                QVERIFY(!visited[1].finalVerdict);
                QCOMPARE(visited[0].skillWritten, columns.skillWritten);
            }
        }
        // The filters hold.
        int count = 0;
        QVERIFY(store_->visitTrials({std::string("model-b"), {}, false}, {}, [&](const mkb::TrialRecord& trial) {
            QCOMPARE(trial.model, std::string("model-b"));
            ++count;
        }));
        QCOMPARE(count, 1);
    }

    void finishedTrialWithUnknownUsageKeepsNulls() {
        mkb::Result<std::int64_t> id = store_->insertTrial(sampleTrial("m", 1, 1, "solo_cuda"));
        QVERIFY(id);
        mkb::TrialOutcome outcome;
        outcome.status = mkb::TrialStatus::InfrastructureError;
        outcome.error = "grader crashed";
        QVERIFY(store_->finishTrial(*id, outcome));
        mkb::Result<mkb::TrialRecord> trial = store_->loadTrial(*id);
        QVERIFY(trial);
        QCOMPARE(trial->status, mkb::TrialStatus::InfrastructureError);
        QCOMPARE(trial->error, std::string("grader crashed"));
        QVERIFY(!trial->usage.inputTokens && !trial->usage.costUsd);
        QVERIFY(!trial->finalVerdict);
        QVERIFY(!trial->skillText);
        QCOMPARE(countRows(*store_, "SELECT count(*) FROM trials WHERE input_tokens IS NULL AND cost_usd IS NULL"),
                 std::int64_t(1));
    }

    void finishTrialRefusesASecondVerdict() {
        mkb::Result<std::int64_t> id = store_->insertTrial(sampleTrial("m", 1, 1, "solo_cuda"));
        QVERIFY(id);
        mkb::TrialOutcome outcome;
        outcome.verdict = fullVerdict();
        QVERIFY(store_->finishTrial(*id, outcome));
        outcome.verdict->speedupVsEager = 99;
        mkb::Status again = store_->finishTrial(*id, outcome);
        QVERIFY(!again);
        QVERIFY(again.error().message.find("already holds a final verdict") != std::string::npos);
        QCOMPARE(store_->loadTrial(*id)->finalVerdict->speedupVsEager, 1.75);
        QVERIFY(!store_->finishTrial(424242, outcome));
    }

    void finishTrialIsOneTransaction() {
        mkb::Result<std::int64_t> id = store_->insertTrial(sampleTrial("m", 1, 1, "solo_cuda"));
        QVERIFY(id);
        // A skill row already exists for this trial, so storing the outcome's skill fails: nothing of it may stay.
        QVERIFY(rawExec(store_->path(), "INSERT INTO skills (trial_id, text, sha256, created_at) VALUES (" +
                                            std::to_string(*id) + ", 'x', 'y', 'z')"));
        mkb::TrialOutcome outcome;
        outcome.verdict = fullVerdict();
        outcome.skillText = "second skill";
        outcome.usage.inputTokens = 5;
        QVERIFY(!store_->finishTrial(*id, outcome));
        mkb::Result<mkb::TrialRecord> trial = store_->loadTrial(*id);
        QVERIFY(trial);
        QCOMPARE(trial->status, mkb::TrialStatus::Running);
        QVERIFY(!trial->finalVerdict);
        QVERIFY(!trial->usage.inputTokens);
        QCOMPARE(trial->skillText, std::optional<std::string>("x"));
    }

    void archiveKeepsTheOldRow() {
        const mkb::TrialRecord slot = sampleTrial("m", 3, 1, "solo_triton");
        mkb::Result<std::int64_t> first = store_->insertTrial(slot);
        QVERIFY(first);
        mkb::TrialOutcome outcome;
        outcome.verdict = fullVerdict();
        outcome.skillText = "old skill";
        QVERIFY(store_->finishTrial(*first, outcome));
        QVERIFY(store_->archiveTrial(*first));
        QVERIFY(store_->archiveTrial(*first)); // idempotent
        QVERIFY(!store_->archiveTrial(777));
        mkb::Result<std::int64_t> second = store_->insertTrial(slot);
        QVERIFY2(second, second ? "" : second.error().message.c_str());

        mkb::Result<std::vector<mkb::TrialRecord>> live = store_->loadTrials();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(1));
        QCOMPARE(live->front().id, *second);
        mkb::Result<std::vector<mkb::TrialRecord>> all = store_->loadTrials({std::nullopt, std::nullopt, true});
        QVERIFY(all);
        QCOMPARE(all->size(), std::size_t(2));
        const mkb::TrialRecord& old = all->front();
        QCOMPARE(old.id, *first);
        QVERIFY(old.archived);
        QVERIFY(!old.archivedAt.empty());
        QVERIFY(old.finalVerdict);
        QCOMPARE(old.skillText, std::optional<std::string>("old skill"));
        mkb::TrialOutcome late;
        QVERIFY(!store_->finishTrial(*first, late)); // archived trials are frozen
    }

    void onlyOneLiveTrialPerSlot() {
        QVERIFY(store_->insertTrial(sampleTrial("m", 3, 1, "solo_triton")));
        mkb::Result<std::int64_t> duplicate = store_->insertTrial(sampleTrial("m", 3, 1, "solo_triton"));
        QVERIFY(!duplicate);
        QVERIFY2(duplicate.error().message.find("archive") != std::string::npos, duplicate.error().message.c_str());
        QVERIFY(duplicate.error().message.find(store_->path().string()) != std::string::npos);
        // Any other slot is free: replicate, arm, model, problem, suite.
        QVERIFY(store_->insertTrial(sampleTrial("m", 3, 2, "solo_triton")));
        QVERIFY(store_->insertTrial(sampleTrial("m", 3, 1, "solo_cuda")));
        QVERIFY(store_->insertTrial(sampleTrial("other", 3, 1, "solo_triton")));
        QVERIFY(store_->insertTrial(sampleTrial("m", 4, 1, "solo_triton")));
        mkb::TrialRecord otherSuite = sampleTrial("m", 3, 1, "solo_triton");
        otherSuite.suite = "kernelbench";
        QVERIFY(store_->insertTrial(otherSuite));
        // The index holds for raw writers too.
        QVERIFY(
            !rawExec(store_->path(), "UPDATE trials SET replicate = 1 WHERE replicate = 2 AND arm = 'solo_triton'"));
        QCOMPARE(store_->loadTrials()->size(), std::size_t(6));
    }

    void transactionRollsBackOnError() {
        mkb::Status failed = store_->transaction([&]() -> mkb::Status {
            if (!store_->ensureModel("doomed", "chat", "{}")) {
                return mkb::makeError("unexpected");
            }
            return mkb::makeError("stop here");
        });
        QVERIFY(!failed);
        QCOMPARE(failed.error().message, std::string("stop here"));
        QCOMPARE(store_->models()->size(), std::size_t(0));

        // Nested: the inner failure rolls back only the inner part.
        mkb::Status outer = store_->transaction([&]() -> mkb::Status {
            if (!store_->ensureModel("kept", "chat", "{}")) {
                return mkb::makeError("unexpected");
            }
            mkb::Status inner = store_->transaction([&]() -> mkb::Status {
                Q_UNUSED(store_->ensureModel("inner-doomed", "chat", "{}"));
                return mkb::makeError("inner stop");
            });
            return inner ? mkb::Status(mkb::makeError("inner should have failed")) : mkb::Status(mkb::Ok{});
        });
        QVERIFY2(outer, outer ? "" : outer.error().message.c_str());
        mkb::Result<std::vector<mkb::ModelRecord>> models = store_->models();
        QCOMPARE(models->size(), std::size_t(1));
        QCOMPARE(models->front().name, std::string("kept"));

        // insertTrial inside a failing transaction leaves neither the trial nor its auto-created model.
        QVERIFY(!store_->transaction([&]() -> mkb::Status {
            Q_UNUSED(store_->insertTrial(sampleTrial("ghost", 1, 1, "solo_cuda")));
            return mkb::makeError("abort");
        }));
        QCOMPARE(store_->loadTrials()->size(), std::size_t(0));
        QCOMPARE(store_->models()->size(), std::size_t(1));
    }

    // store: the speedup CI and GPU median time come back from insert through the full, lean and metrics loaders
    void speedupCiAndGpuTimeSurviveEveryLoader() {
        mkb::Result<std::int64_t> id = store_->insertTrial(sampleTrial("model-ci", 7, 1, "solo_cuda"));
        QVERIFY(id);
        mkb::TrialOutcome outcome;
        outcome.verdict = fullVerdict();
        outcome.verdict->speedupCiLow = 1.25;
        outcome.verdict->speedupCiHigh = 2.5;
        outcome.verdict->gpuMedianMs = 0.0625;
        QVERIFY(store_->finishTrial(*id, outcome));
        QVERIFY(store_->addSubmission({0, *id, 1, "kernel", *outcome.verdict, 1.0, ""}));
        const mkb::TrialFilter filter{std::string("model-ci"), {}, false};
        for (mkb::TrialDetail detail : {mkb::TrialDetail::Full, mkb::TrialDetail::Lean, mkb::TrialDetail::Metrics}) {
            mkb::Result<std::vector<mkb::TrialRecord>> trials = store_->loadTrials(filter, detail);
            QVERIFY(trials);
            QCOMPARE(trials->size(), std::size_t(1));
            QVERIFY(trials->front().finalVerdict);
            QCOMPARE(trials->front().finalVerdict->speedupCiLow, std::optional<double>(1.25));
            QCOMPARE(trials->front().finalVerdict->speedupCiHigh, std::optional<double>(2.5));
            QCOMPARE(trials->front().finalVerdict->gpuMedianMs, std::optional<double>(0.0625));
        }
        // The metrics load without the verdict detail still reads the CI (the R@t borderline count needs it).
        mkb::MetricColumns narrow;
        narrow.verdictDetail = false;
        mkb::Result<std::vector<mkb::TrialRecord>> metrics =
            store_->loadTrials(filter, mkb::TrialDetail::Metrics, narrow);
        QVERIFY(metrics && metrics->size() == 1 && metrics->front().finalVerdict);
        QCOMPARE(metrics->front().finalVerdict->speedupCiLow, std::optional<double>(1.25));
        QCOMPARE(metrics->front().finalVerdict->speedupCiHigh, std::optional<double>(2.5));
        mkb::Result<std::vector<mkb::SubmissionRecord>> submissions = store_->submissions(*id);
        QVERIFY(submissions && submissions->size() == 1);
        QCOMPARE(submissions->front().verdict.speedupCiLow, std::optional<double>(1.25));
        QCOMPARE(submissions->front().verdict.gpuMedianMs, std::optional<double>(0.0625));
        // A verdict without them keeps them unknown (NULL), not zero.
        mkb::Result<std::int64_t> plain = store_->insertTrial(sampleTrial("model-ci", 8, 1, "solo_cuda"));
        QVERIFY(plain);
        mkb::TrialOutcome plainOutcome;
        plainOutcome.verdict = fullVerdict();
        QVERIFY(store_->finishTrial(*plain, plainOutcome));
        mkb::Result<mkb::TrialRecord> loaded = store_->loadTrial(*plain);
        QVERIFY(loaded && loaded->finalVerdict);
        QVERIFY(!loaded->finalVerdict->speedupCiLow && !loaded->finalVerdict->gpuMedianMs);
    }

    void submissionsRoundTripInOrder() {
        mkb::Result<std::int64_t> id = store_->insertTrial(sampleTrial("m", 1, 1, "solo_cuda"));
        QVERIFY(id);
        mkb::SubmissionRecord second{0, *id, 2, "kernel v2", fullVerdict(), 3.5, ""};
        mkb::SubmissionRecord first{0, *id, 1, "kernel v1", mkb::Verdict{}, 1.5, "2026-01-01T00:00:00Z"};
        first.verdict.stage = "import";
        first.verdict.error = "SyntaxError";
        QVERIFY(store_->addSubmission(second));
        QVERIFY(store_->addSubmission(first));
        QVERIFY(!store_->addSubmission(first));                        // the same index twice
        QVERIFY(!store_->addSubmission({0, 9999, 1, "x", {}, 0, ""})); // no such trial
        mkb::Result<std::vector<mkb::SubmissionRecord>> submissions = store_->submissions(*id);
        QVERIFY(submissions);
        QCOMPARE(submissions->size(), std::size_t(2));
        QCOMPARE(submissions->at(0).index, 1);
        QCOMPARE(submissions->at(0).kernelSource, std::string("kernel v1"));
        QCOMPARE(submissions->at(0).evalSeconds, 1.5);
        QCOMPARE(submissions->at(0).createdAt, std::string("2026-01-01T00:00:00Z"));
        compareVerdicts(submissions->at(0).verdict, first.verdict);
        QVERIFY(!submissions->at(0).verdict.quant && !submissions->at(0).verdict.kernelMedianMs);
        QCOMPARE(submissions->at(1).index, 2);
        compareVerdicts(submissions->at(1).verdict, fullVerdict());
        QVERIFY(!submissions->at(1).createdAt.empty());
    }

    void skillsAndAnnotationsRoundTrip() {
        mkb::Result<std::int64_t> id = store_->insertTrial(sampleTrial("m", 1, 1, "solo_cuda"));
        QVERIFY(id);
        QVERIFY(!store_->skillOfTrial(*id)->has_value());
        const std::string text = "Fusing the softmax saves one pass. Tensor cores did not help here.";
        mkb::TrialOutcome outcome;
        outcome.skillText = text;
        QVERIFY(store_->finishTrial(*id, outcome));
        mkb::Result<std::optional<mkb::SkillRecord>> skill = store_->skillOfTrial(*id);
        QVERIFY(skill && skill->has_value());
        QCOMPARE((*skill)->text, text);
        QCOMPARE((*skill)->sha256, mkb::sha256Hex(text));
        QCOMPARE((*skill)->trialId, *id);

        mkb::AnnotationRecord later{0,
                                    (*skill)->id,
                                    35,
                                    66,
                                    text.substr(35, 31),
                                    mkb::AnnotationTag::Contradicted,
                                    "tensor cores gave 1.4x in p07",
                                    "2026-03-04T05:06:07Z"};
        mkb::AnnotationRecord earlier{0, (*skill)->id, 0, 34, text.substr(0, 34), mkb::AnnotationTag::Supported, "",
                                      ""};
        mkb::Result<std::int64_t> laterId = store_->addAnnotation(later);
        mkb::Result<std::int64_t> earlierId = store_->addAnnotation(earlier);
        QVERIFY(laterId && earlierId);
        mkb::Result<std::vector<mkb::AnnotationRecord>> annotations = store_->annotations((*skill)->id);
        QVERIFY(annotations);
        QCOMPARE(annotations->size(), std::size_t(2));
        QCOMPARE(annotations->at(0).id, *earlierId);
        QCOMPARE(annotations->at(0).tag, mkb::AnnotationTag::Supported);
        QVERIFY(!annotations->at(0).createdAt.empty());
        const mkb::AnnotationRecord& loaded = annotations->at(1);
        QCOMPARE(loaded.skillId, (*skill)->id);
        QCOMPARE(loaded.rangeStart, std::int64_t(35));
        QCOMPARE(loaded.rangeEnd, std::int64_t(66));
        QCOMPARE(loaded.quotedText, later.quotedText);
        QCOMPARE(loaded.tag, mkb::AnnotationTag::Contradicted);
        QCOMPARE(loaded.note, later.note);
        QCOMPARE(loaded.createdAt, later.createdAt);

        QVERIFY(store_->deleteAnnotation(*laterId));
        QVERIFY(!store_->deleteAnnotation(*laterId));
        QCOMPARE(store_->annotations((*skill)->id)->size(), std::size_t(1));

        mkb::AnnotationRecord backwards = earlier;
        backwards.rangeStart = 10;
        backwards.rangeEnd = 5;
        QVERIFY(!store_->addAnnotation(backwards));
        mkb::AnnotationRecord orphan = earlier;
        orphan.skillId = 5555;
        mkb::Result<std::int64_t> refused = store_->addAnnotation(orphan);
        QVERIFY(!refused);
        QVERIFY(refused.error().message.find("no such skill") != std::string::npos);
        for (mkb::AnnotationTag tag : {mkb::AnnotationTag::Supported, mkb::AnnotationTag::Unsupported,
                                       mkb::AnnotationTag::Contradicted, mkb::AnnotationTag::Other}) {
            QCOMPARE(mkb::annotationTagFromString(mkb::toString(tag)), std::optional<mkb::AnnotationTag>(tag));
        }
        QVERIFY(!mkb::annotationTagFromString("maybe"));
    }

    void everyProblemVersionIsKept() {
        mkb::Problem problem;
        problem.suite = "problems";
        problem.number = 7;
        problem.slug = "softmax_rows";
        problem.family = "reduction";
        problem.title = "Row softmax";
        problem.path = "/tmp/problems/reduction/07_softmax_rows.py";
        problem.source = "def reference(x): ...";
        problem.fingerprint = mkb::sha256Hex(problem.source);
        problem.meta.tags = {"reduction", "elementwise"};
        problem.meta.quant = mkb::QuantThresholds{0.9, 0.1, 0.2};
        problem.meta.outliersJson = R"({"draws": 2})";
        problem.meta.flops = 1e6;
        mkb::Result<std::int64_t> first = store_->upsertProblem(problem);
        QVERIFY(first);
        mkb::Result<std::int64_t> same = store_->upsertProblem(problem);
        QVERIFY(same);
        QCOMPARE(*same, *first);
        problem.source += "\n# edited";
        problem.fingerprint = mkb::sha256Hex(problem.source);
        mkb::Result<std::int64_t> edited = store_->upsertProblem(problem);
        QVERIFY(edited);
        QVERIFY(*edited != *first);

        mkb::Result<std::vector<mkb::Problem>> problems = store_->problems();
        QVERIFY(problems);
        QCOMPARE(problems->size(), std::size_t(2));
        const mkb::Problem& loaded = problems->at(1);
        QCOMPARE(loaded.fingerprint, problem.fingerprint);
        QCOMPARE(loaded.source, problem.source);
        QCOMPARE(loaded.title, problem.title);
        QCOMPARE(loaded.path, problem.path);
        QCOMPARE(loaded.meta.tags, problem.meta.tags);
        QVERIFY(loaded.meta.quant);
        QCOMPARE(loaded.meta.quant->minCosine, 0.9);
        QCOMPARE(loaded.meta.outliersJson, problem.meta.outliersJson);
        QCOMPARE(loaded.meta.flops, std::optional<double>(1e6));
        QVERIFY(!loaded.meta.bytes);

        // A trial links to the stored problem version with its fingerprint.
        mkb::TrialRecord trial = sampleTrial("m", 7, 1, "solo_cuda");
        trial.problemFingerprint = problem.fingerprint;
        QVERIFY(store_->insertTrial(trial));
        QCOMPARE(countRows(*store_, "SELECT problem_id FROM trials"), *edited);
    }

    void devicesAndModelsAreKeyed() {
        mkb::DeviceRecord device{0, "NVIDIA H200", "GPU-1234", "9.0", R"({"gbps": 4100})", ""};
        mkb::Result<std::int64_t> id = store_->saveDevice(device);
        QVERIFY(id);
        device.peaksJson = R"({"gbps": 4200})";
        mkb::Result<std::int64_t> again = store_->saveDevice(device);
        QVERIFY(again);
        QCOMPARE(*again, *id);
        QVERIFY(!store_->saveDevice({0, "nameless", "", "", "", ""}));
        mkb::Result<std::vector<mkb::DeviceRecord>> devices = store_->devices();
        QVERIFY(devices);
        QCOMPARE(devices->size(), std::size_t(1));
        QCOMPARE(devices->front().peaksJson, std::string(R"({"gbps": 4200})"));
        QCOMPARE(devices->front().computeCapability, std::string("9.0"));
        QVERIFY(!devices->front().probedAt.empty());

        mkb::Result<std::int64_t> model = store_->ensureModel("gpt-x", "chat", R"({"temperature": 0})");
        QVERIFY(model);
        QCOMPARE(*store_->ensureModel("gpt-x", "command", "{}"), *model);
        QVERIFY(store_->insertTrial(sampleTrial("gpt-x", 1, 1, "solo_cuda"))); // reuses the model row
        mkb::Result<std::vector<mkb::ModelRecord>> models = store_->models();
        QCOMPARE(models->size(), std::size_t(1));
        QCOMPARE(models->front().driver, std::string("command"));
        QVERIFY(!store_->ensureModel("", "chat", "{}"));
    }

    void updateTrialStatusAndFilters() {
        mkb::Result<std::int64_t> a = store_->insertTrial(sampleTrial("alpha", 1, 1, "solo_cuda"));
        mkb::Result<std::int64_t> b = store_->insertTrial(sampleTrial("beta", 1, 1, "solo_cuda"));
        QVERIFY(a && b);
        QVERIFY(store_->updateTrialStatus(*a, mkb::TrialStatus::Interrupted, "Ctrl+C"));
        QVERIFY(!store_->updateTrialStatus(31337, mkb::TrialStatus::Interrupted));
        mkb::Result<std::vector<mkb::TrialRecord>> alpha = store_->loadTrials({std::string("alpha"), {}, false});
        QVERIFY(alpha);
        QCOMPARE(alpha->size(), std::size_t(1));
        QCOMPARE(alpha->front().status, mkb::TrialStatus::Interrupted);
        QCOMPARE(alpha->front().error, std::string("Ctrl+C"));
        QCOMPARE(store_->loadTrials({std::nullopt, std::string("nosuite"), false})->size(), std::size_t(0));
    }

    void infoCountsRowsAndIntegrityCheckPasses() {
        QVERIFY(store_->insertTrial(sampleTrial("m", 1, 1, "solo_cuda")));
        mkb::Result<mkb::StoreInfo> info = store_->info();
        QVERIFY(info);
        QCOMPARE(info->liveTrials, std::int64_t(1));
        bool sawTrials = false;
        for (const auto& [table, rows] : info->rowCounts) {
            if (table == "trials") {
                sawTrials = true;
                QCOMPARE(rows, std::int64_t(1));
            }
        }
        QVERIFY(sawTrials);
        mkb::Result<std::vector<std::string>> problems = store_->integrityCheck();
        QVERIFY(problems);
        QVERIFY(problems->empty());
        // A dangling reference written with foreign keys off is found.
        QVERIFY(rawExec(store_->path(), "PRAGMA foreign_keys = OFF; INSERT INTO skills (trial_id, text, sha256, "
                                        "created_at) VALUES (999, 't', 's', 'c')"));
        problems = store_->integrityCheck();
        QVERIFY(problems);
        QCOMPARE(problems->size(), std::size_t(1));
        QVERIFY(problems->front().find("skills") != std::string::npos);
    }

    void everyVerdictColumnOfTheSchemaHasABinderAndAReader() {
        // The verdict column table (core/store/verdict_columns.cpp) names every verdict column of both tables that
        // hold verdicts: a migration that adds one there without a row in the table fails here.
        const std::vector<std::string>& declared = mkb::store::verdictColumns();
        const std::vector<std::string> ownColumns[] = {{"trial_id", "recorded_at"},
                                                       {"id", "trial_id", "idx", "kernel_source",
                                                        "submission_eval_seconds", "created_at"}};
        const char* tables[] = {"final_verdicts", "submissions"};
        for (int t = 0; t < 2; ++t) {
            sqlite3_stmt* statement = nullptr;
            QCOMPARE(sqlite3_prepare_v2(store_->handle(), "SELECT name FROM pragma_table_info(?)", -1, &statement,
                                        nullptr),
                     SQLITE_OK);
            sqlite3_bind_text(statement, 1, tables[t], -1, SQLITE_STATIC);
            std::vector<std::string> verdictColumns;
            while (sqlite3_step(statement) == SQLITE_ROW) {
                const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
                if (std::find(ownColumns[t].begin(), ownColumns[t].end(), name) == ownColumns[t].end()) {
                    verdictColumns.push_back(name);
                }
            }
            sqlite3_finalize(statement);
            std::vector<std::string> expected = declared;
            std::sort(expected.begin(), expected.end());
            std::sort(verdictColumns.begin(), verdictColumns.end());
            QCOMPARE(verdictColumns, expected);
        }
    }

    void loadsOneHundredThousandTrials() {
        constexpr int kTrials = 100000;
        QElapsedTimer writing;
        writing.start();
        mkb::Status written = store_->transaction([&]() -> mkb::Status {
            mkb::TrialOutcome outcome;
            outcome.verdict = fullVerdict();
            outcome.usage = {1000, 10, 100, 0.5, 60};
            for (int i = 0; i < kTrials; ++i) {
                mkb::TrialRecord trial =
                    sampleTrial("model-" + std::to_string(i % 4), 1 + (i / 4) % 100, 1 + i / 400, "solo_triton");
                mkb::Result<std::int64_t> id = store_->insertTrial(trial);
                if (!id) {
                    return id.error();
                }
                if (i % 2 == 0) {
                    if (mkb::Status done = store_->finishTrial(*id, outcome); !done) {
                        return done;
                    }
                }
            }
            return mkb::Ok{};
        });
        QVERIFY2(written, written ? "" : written.error().message.c_str());
        const qint64 writeMs = writing.elapsed();

        // Timed for the log only: speed is measured by bench/report_scale.cpp against a baseline, never asserted here.
        QElapsedTimer reading;
        reading.start();
        const std::clock_t cpuStart = std::clock();
        mkb::Result<std::vector<mkb::TrialRecord>> trials = store_->loadTrials();
        const auto readCpuMs = static_cast<long long>((std::clock() - cpuStart) * 1000.0 / CLOCKS_PER_SEC);
        const qint64 readMs = reading.elapsed();
        QVERIFY(trials);
        QCOMPARE(trials->size(), std::size_t(kTrials));
        QVERIFY(trials->at(0).finalVerdict && !trials->at(1).finalVerdict);
        qInfo("wrote %d trials (half finished with verdicts) in %lld ms; loaded them in %lld ms CPU (%lld ms wall)",
              kTrials, static_cast<long long>(writeMs), readCpuMs, static_cast<long long>(readMs));
        const auto finished = std::count_if(trials->begin(), trials->end(), [](const mkb::TrialRecord& trial) {
            return trial.finalVerdict.has_value();
        });
        QCOMPARE(finished, static_cast<std::ptrdiff_t>(kTrials / 2));
    }
};

QTEST_GUILESS_MAIN(StoreRecordsTest)
#include "tst_store_records.moc"
