// store: re-timings and calibrations — round trip, one live record per cell and per submission pair, archiving,
// migration of older stores.
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

namespace fs = std::filesystem;
using namespace storetest;

namespace {

mkb::RetimingRecord sampleRetiming(int problem, const std::string& skillSha, double ratio) {
    mkb::RetimingRecord record;
    record.model = "m1";
    record.suite = "problems";
    record.problemNumber = problem;
    record.replicate = 1;
    record.sourceDsl = "cuda";
    record.targetDsl = "triton";
    mkb::RetimingResult& result = record.result;
    result.ok = true;
    result.device = "cpu";
    result.deviceName = "cpu";
    result.graderFingerprint = "gf";
    result.rounds = 140;
    result.stop = "converged";
    result.eagerMedianS = 0.002;
    result.kernels = {{"source", "cuda", "sha-source", 0.001, std::nullopt},
                      {"base", "triton", "sha-base", 0.0011, 0.0009},
                      {"skill", "triton", skillSha, 0.0010, std::nullopt}};
    result.pairs = {{"base", "skill", ratio, ratio * 0.99, ratio * 1.01, 140}};
    result.seconds = 1.5;
    return record;
}

mkb::TransitionRetimingRecord samplePair(int before, int after, const std::string& afterSha, bool ok) {
    mkb::TransitionRetimingRecord record;
    record.model = "kbx-geak";
    record.suite = "kernelbenchx";
    record.problemNumber = 106;
    record.replicate = 1;
    record.arm = "solo_triton";
    record.beforeIndex = before;
    record.afterIndex = after;
    mkb::RetimingResult& result = record.result;
    result.ok = ok;
    result.error = ok ? "" : "kernel 'after' failed at its correctness draw: incorrect";
    result.failedLabel = ok ? "" : "after";
    result.device = "cuda:0";
    result.deviceName = "NVIDIA H200";
    result.graderFingerprint = "gf";
    result.rounds = ok ? 120 : 0;
    result.stop = ok ? "converged" : "";
    result.kernels = {{"before", "triton", "sha-before", 0.002, std::nullopt},
                      {"after", "triton", afterSha, 0.001, std::nullopt}};
    if (ok) {
        result.pairs = {{"before", "after", 2.0, 1.95, 2.05, 120}};
    }
    return record;
}

} // namespace

class StoreRetimings : public QObject {
    Q_OBJECT

private slots:
    void aRetimingRoundTripsWithEveryField() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        mkb::RetimingRecord record = sampleRetiming(3, "sha-skill", 1.02);
        mkb::Result<std::int64_t> id = store->insertRetiming(record);
        QVERIFY2(id, id ? "" : id.error().message.c_str());
        auto live = store->liveRetimings();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(1));
        const mkb::RetimingRecord& read = live->front();
        QCOMPARE(read.id, *id);
        QCOMPARE(read.model, std::string("m1"));
        QCOMPARE(read.problemNumber, 3);
        QCOMPARE(read.sourceDsl, std::string("cuda"));
        QCOMPARE(read.targetDsl, std::string("triton"));
        QVERIFY(!read.archived);
        QVERIFY(!read.createdAt.empty());
        QCOMPARE(read.result.device, std::string("cpu"));
        QCOMPARE(read.result.graderFingerprint, std::string("gf"));
        QCOMPARE(read.result.rounds, 140);
        QCOMPARE(read.result.stop, std::string("converged"));
        QCOMPARE(read.result.kernels.size(), std::size_t(3));
        QCOMPARE(read.result.kernels[2].sha256, std::string("sha-skill"));
        QVERIFY(read.result.kernels[1].gpuMedianS.has_value());
        QVERIFY(!read.result.kernels[2].gpuMedianS.has_value());
        auto pair = read.result.pair("base", "skill");
        QVERIFY(pair);
        QCOMPARE(pair->ratio, 1.02);
        QCOMPARE(pair->n, 140);
        QCOMPARE(rawInt(store->path(), "SELECT COUNT(*) FROM retimings WHERE skill_sha256 = 'sha-skill'"), 1LL);
    }

    void theResultJsonIsKeptVerbatim() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        mkb::RetimingRecord record = sampleRetiming(3, "sha-skill", 1.02);
        record.result.json = R"({"ok": true, "rounds": 140, "extra_field": "kept"})";
        QVERIFY(store->insertRetiming(record));
        auto live = store->liveRetimings();
        QVERIFY(live);
        QCOMPARE(live->front().result.json, record.result.json);
    }

    void aSecondRetimingOfACellArchivesTheFirst() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        QVERIFY(store->insertRetiming(sampleRetiming(3, "old", 1.02)));
        QVERIFY(store->insertRetiming(sampleRetiming(4, "other cell", 1.0)));
        QVERIFY(store->insertRetiming(sampleRetiming(3, "new", 0.97)));
        auto live = store->liveRetimings();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(2));
        QCOMPARE(live->at(0).problemNumber, 3);
        QCOMPARE(live->at(0).result.kernels[2].sha256, std::string("new"));
        auto all = store->allRetimings();
        QVERIFY(all);
        QCOMPARE(all->size(), std::size_t(3));
        QVERIFY(all->at(0).archived);
        QCOMPARE(all->at(0).result.kernels[2].sha256, std::string("old"));
        QCOMPARE(rawInt(store->path(), "SELECT COUNT(*) FROM retimings WHERE archived_at IS NOT NULL"), 1LL);
    }

    void aFailedInsertLeavesTheLiveRecordLive() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        QVERIFY(store->insertRetiming(sampleRetiming(3, "old", 1.02)));
        mkb::RetimingRecord bad = sampleRetiming(3, "new", 1.0);
        bad.skillTrialId = 999; // no such trial: the foreign key refuses the insert after the archive step ran
        QVERIFY(!store->insertRetiming(bad));
        auto live = store->liveRetimings();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(1));
        QCOMPARE(live->front().result.kernels[2].sha256, std::string("old"));
    }

    void aRetimingWithoutDeviceOrFingerprintIsRefused() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        mkb::RetimingRecord record = sampleRetiming(3, "x", 1);
        record.result.graderFingerprint.clear();
        mkb::Result<std::int64_t> id = store->insertRetiming(record);
        QVERIFY(!id);
        QVERIFY(id.error().message.find("grader fingerprint") != std::string::npos);
    }

    void aCalibrationRoundTripsAndANewerOneArchivesIt() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        mkb::CalibrationRecord record;
        record.device = "cpu";
        record.deviceName = "cpu";
        record.graderFingerprint = "gf";
        record.selection = "--problems 1,2";
        record.slowdown = 0.1;
        mkb::CalibrationMethodResult paired{"paired", 0.05, 4, 0, 0, 4, 4, 0.01};
        mkb::CalibrationMethodResult unpaired{"unpaired", 0.05, 4, 1, 1, 4, 2, std::nullopt};
        record.methods = {paired, unpaired};
        record.detailJson = R"([{"problem":1,"ratio":1.0}])";
        QVERIFY(store->insertCalibration(record));
        auto live = store->liveCalibrations();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(1));
        QCOMPARE(live->front().methods.size(), std::size_t(2));
        QCOMPARE(live->front().methods[0].abDetected, 4);
        QCOMPARE(*live->front().methods[0].smallestDelta, 0.01);
        QVERIFY(!live->front().methods[1].smallestDelta);
        QCOMPARE(live->front().methods[1].falseRate(), 0.5);
        QCOMPARE(live->front().selection, std::string("--problems 1,2"));
        QVERIFY(live->front().detailJson.find("\"problem\":1") != std::string::npos);

        record.selection = "--problems 1-12";
        QVERIFY(store->insertCalibration(record));
        live = store->liveCalibrations();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(1));
        QCOMPARE(live->front().selection, std::string("--problems 1-12"));
        QCOMPARE(rawInt(store->path(), "SELECT COUNT(*) FROM calibrations WHERE archived = 1"), 1LL);
    }

    void aSubmissionPairsRetimingRoundTripsAndASecondOneArchivesTheFirst() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        mkb::Result<std::int64_t> first = store->insertTransitionRetiming(samplePair(1, 2, "sha-a", true));
        QVERIFY2(first, first ? "" : first.error().message.c_str());
        QVERIFY(store->insertTransitionRetiming(samplePair(2, 3, "sha-b", false)));
        auto live = store->liveTransitionRetimings();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(2));
        const mkb::TransitionRetimingRecord& read = live->front();
        QCOMPARE(read.id, *first);
        QCOMPARE(read.arm, std::string("solo_triton"));
        QCOMPARE(read.beforeIndex, 1);
        QCOMPARE(read.afterIndex, 2);
        QCOMPARE(read.result.deviceName, std::string("NVIDIA H200"));
        QVERIFY(read.result.ok);
        auto ratio = read.result.pair("before", "after");
        QVERIFY(ratio);
        QCOMPARE(ratio->ratio, 2.0);
        QCOMPARE(read.result.kernels.at(1).sha256, std::string("sha-a"));
        const mkb::TransitionRetimingRecord& failed = live->back();
        QVERIFY(!failed.result.ok);
        QCOMPARE(failed.result.failedLabel, std::string("after"));
        QVERIFY(failed.result.error.find("correctness") != std::string::npos);

        QVERIFY(store->insertTransitionRetiming(samplePair(1, 2, "sha-c", true)));
        live = store->liveTransitionRetimings();
        QVERIFY(live);
        QCOMPARE(live->size(), std::size_t(2));
        QCOMPARE(live->front().result.kernels.at(1).sha256, std::string("sha-c"));
        auto all = store->allTransitionRetimings();
        QVERIFY(all);
        QCOMPARE(all->size(), std::size_t(3));
        QVERIFY(all->front().archived);
        QCOMPARE(rawInt(store->path(), "SELECT COUNT(*) FROM transition_retimings WHERE archived = 1"), 1LL);
    }

    void aSubmissionPairOutOfOrderOrWithoutDeviceIsRefusedAndNothingIsWritten() {
        QTemporaryDir dir;
        auto store = openOrFail(fs::path(dir.path().toStdString()) / "s.mkb");
        QVERIFY(store);
        mkb::TransitionRetimingRecord backwards = samplePair(3, 2, "sha", true);
        auto refused = store->insertTransitionRetiming(backwards);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("submissions 3 -> 2") != std::string::npos,
                 refused.error().message.c_str());
        mkb::TransitionRetimingRecord nowhere = samplePair(1, 2, "sha", true);
        nowhere.result.device.clear();
        QVERIFY(!store->insertTransitionRetiming(nowhere));
        auto all = store->allTransitionRetimings();
        QVERIFY(all);
        QVERIFY(all->empty());
    }

    void aVersion7StoreGainsTheSubmissionPairTable() {
        QTemporaryDir dir;
        const fs::path path = fs::path(dir.path().toStdString()) / "old.mkb";
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            QVERIFY(static_cast<bool>(mkb::store::applyMigrations(db, 0, 7, path.string())));
            sqlite3_close(db);
        }
        QCOMPARE(rawInt(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'transition_retimings'"), 0LL);
        auto store = openOrFail(path);
        QVERIFY(store);
        QCOMPARE(store->migratedFromVersion(), 7);
        QVERIFY(store->insertTransitionRetiming(samplePair(1, 2, "s", true)));
        auto integrity = store->integrityCheck();
        QVERIFY(integrity);
        QVERIFY(integrity->empty());
    }

    void aVersion3StoreMigratesAndKeepsItsTrials() {
        QTemporaryDir dir;
        const fs::path path = fs::path(dir.path().toStdString()) / "old.mkb";
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            QVERIFY(static_cast<bool>(mkb::store::applyMigrations(db, 0, 3, path.string())));
            sqlite3_close(db);
        }
        QVERIFY(rawExec(path, "INSERT INTO models (name, created_at) VALUES ('m1', 'x')"));
        QCOMPARE(rawInt(path, "PRAGMA user_version"), 3LL);
        QCOMPARE(rawInt(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'retimings'"), 0LL);
        auto store = openOrFail(path);
        QVERIFY(store);
        QCOMPARE(store->migratedFromVersion(), 3);
        QCOMPARE(rawInt(path, "SELECT COUNT(*) FROM models"), 1LL);
        auto live = store->liveRetimings();
        QVERIFY(live);
        QVERIFY(live->empty());
        QVERIFY(store->insertRetiming(sampleRetiming(1, "s", 1.0)));
        QVERIFY(store->insertCalibration(mkb::CalibrationRecord{0, "cpu", "cpu", "gf", "", 0.1, {}, "[]", false, ""}));
        auto integrity = store->integrityCheck();
        QVERIFY(integrity);
        QVERIFY(integrity->empty());
    }
};

QTEST_GUILESS_MAIN(StoreRetimings)
#include "tst_store_retimings.moc"
