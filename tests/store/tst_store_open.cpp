// store: opening files — create, reopen, migrate forward, and refusing corrupt, foreign or newer files untouched.
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <random>

namespace fs = std::filesystem;
using namespace storetest;

class StoreOpenTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    fs::path at(const std::string& name) const { return fs::path(dir_.path().toStdString()) / name; }

    /// Opening must fail, name the file, mention each expected word, and leave every byte as it was.
    void expectRefusedUntouched(const fs::path& path, const std::vector<std::string>& words) {
        const std::string before = fileBytes(path);
        for (mkb::OpenMode mode : {mkb::OpenMode::CreateIfMissing, mkb::OpenMode::MustExist}) {
            mkb::Result<std::unique_ptr<mkb::Store>> store = mkb::Store::open(path, mode);
            QVERIFY2(!store, path.c_str());
            const std::string& message = store.error().message;
            QVERIFY2(message.find(path.string()) != std::string::npos, message.c_str());
            QVERIFY2(message.find('\n') == std::string::npos, message.c_str());
            for (const std::string& word : words) {
                QVERIFY2(message.find(word) != std::string::npos, (word + " missing in: " + message).c_str());
            }
        }
        QVERIFY(!mkb::Store::fileSchemaVersion(path));
        QCOMPARE(fileBytes(path), before);
    }

    /// A closed, real store with a few hundred rows, so it spans several pages.
    fs::path writeRealStore(const std::string& name) {
        const fs::path path = at(name);
        auto store = openOrFail(path);
        if (!store) {
            return path;
        }
        Q_UNUSED(store->transaction([&]() -> mkb::Status {
            for (int i = 1; i <= 300; ++i) {
                mkb::Result<std::int64_t> id = store->insertTrial(sampleTrial("model-a", i, 1, "solo_triton"));
                if (!id) {
                    return id.error();
                }
            }
            return mkb::Ok{};
        }));
        return path;
    }

private slots:
    void init() { QVERIFY(dir_.isValid()); }

    void createsStoreWithFoldersWalForeignKeysAndApplicationId() {
        const fs::path path = at("deep/er/project.mkb.sqlite");
        auto store = openOrFail(path);
        QVERIFY(store);
        QVERIFY(fs::exists(path));
        QCOMPARE(store->migratedFromVersion(), 0);
        mkb::Result<mkb::StoreInfo> info = store->info();
        QVERIFY(info);
        QCOMPARE(info->journalMode, std::string("wal"));
        QCOMPARE(info->schemaVersion, mkb::Store::latestSchemaVersion());
        QCOMPARE(info->rowCounts.size(), std::size_t(13));
        sqlite3_stmt* statement = nullptr;
        QCOMPARE(sqlite3_prepare_v2(store->handle(), "PRAGMA foreign_keys", -1, &statement, nullptr), SQLITE_OK);
        QCOMPARE(sqlite3_step(statement), SQLITE_ROW);
        QCOMPARE(sqlite3_column_int(statement, 0), 1);
        sqlite3_finalize(statement);
        store.reset();
        QCOMPARE(rawInt(path, "PRAGMA application_id"), static_cast<long long>(mkb::Store::kApplicationId));
        QCOMPARE(rawInt(path, "PRAGMA user_version"), static_cast<long long>(mkb::Store::latestSchemaVersion()));
    }

    void reopenKeepsEverything() {
        const fs::path path = writeRealStore("reopen.sqlite");
        auto store = openOrFail(path);
        QVERIFY(store);
        QCOMPARE(store->migratedFromVersion(), mkb::Store::latestSchemaVersion());
        mkb::Result<std::vector<mkb::TrialRecord>> trials = store->loadTrials();
        QVERIFY(trials);
        QCOMPARE(trials->size(), std::size_t(300));
        QCOMPARE(trials->back().problemNumber, 300);
    }

    // store: opening a schema-4 store adds the verdict CI and GPU time columns, filled from the stored verdict JSON
    void migrationFromVersion4BackfillsSpeedupCiAndGpuTimeFromTheVerdictJson() {
        const fs::path path = at("v4.sqlite");
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            const bool migrated = static_cast<bool>(mkb::store::applyMigrations(db, 0, 4, path.string()));
            sqlite3_close(db);
            QVERIFY(migrated);
        }
        QCOMPARE(rawInt(path, "PRAGMA user_version"), 4LL);
        const std::string verdictValues =
            "1, 1, 1, 1.5, 'done', 0, 0, '', 1, 1, '', 1, '', 0.2, 0.3, NULL, 0, NULL, NULL, NULL, NULL, NULL, "
            "NULL, NULL, NULL, NULL, NULL, NULL, 2.0, 'cpu', ";
        QVERIFY(rawExec(path, "INSERT INTO models (id, name, driver, created_at) VALUES (1, 'm', 'chat', 'then');"
                              "INSERT INTO trials (id, model_id, suite, problem_number, problem_slug, family, "
                              "replicate, arm, dsl, coordinate, status, started_at) VALUES "
                              "(1, 1, 's', 1, 'p1', 'f', 1, 'solo_cuda', 'cuda', 'c1', 'finished', 'then'),"
                              "(2, 1, 's', 2, 'p2', 'f', 1, 'solo_cuda', 'cuda', 'c2', 'finished', 'then');"));
        const std::string withFields =
            R"('{"passed": true, "speedup_ci_low": 1.25, "speedup_ci_high": 1.75, "gpu_median_ms": 0.125}')";
        QVERIFY(rawExec(path, "INSERT INTO final_verdicts VALUES (1, 'then', " + verdictValues + withFields +
                                  "); INSERT INTO final_verdicts VALUES (2, 'then', " + verdictValues +
                                  R"('{"passed": true}'))" +
                                  "; INSERT INTO submissions (trial_id, idx, kernel_source, created_at, " +
                                  "imported, correct, passed, speedup, stage, infrastructure_error, timed_out, "
                                  "error, correct_draws, total_draws, mismatch, compliant, compliance_rule, "
                                  "kernel_median_ms, eager_median_ms, kernel_iqr_ms, throttled, outliers_correct, "
                                  "quant_cosine, quant_relative_l1, quant_rmse, quant_passed, roofline_bytes, "
                                  "roofline_flops, roofline_gbps, roofline_tflops, roofline_iou, roofline_mfu, "
                                  "eval_seconds, device_name, verdict_json) VALUES (1, 1, 'k', 'then', " +
                                  verdictValues + withFields + ")"));
        auto store = openOrFail(path);
        QVERIFY(store);
        QCOMPARE(store->migratedFromVersion(), 4);
        mkb::Result<mkb::TrialRecord> with = store->loadTrial(1);
        QVERIFY(with && with->finalVerdict);
        QCOMPARE(with->finalVerdict->speedupCiLow, std::optional<double>(1.25));
        QCOMPARE(with->finalVerdict->speedupCiHigh, std::optional<double>(1.75));
        QCOMPARE(with->finalVerdict->gpuMedianMs, std::optional<double>(0.125));
        mkb::Result<mkb::TrialRecord> without = store->loadTrial(2);
        QVERIFY(without && without->finalVerdict);
        QVERIFY(!without->finalVerdict->speedupCiLow && !without->finalVerdict->gpuMedianMs);
        mkb::Result<std::vector<mkb::SubmissionRecord>> submissions = store->submissions(1);
        QVERIFY(submissions && submissions->size() == 1);
        QCOMPARE(submissions->front().verdict.speedupCiHigh, std::optional<double>(1.75));
        QCOMPARE(submissions->front().verdict.gpuMedianMs, std::optional<double>(0.125));
    }

    // store: opening a store from before boundaries adds the verdicts' boundary: the one their JSON names, else
    // legacy (graded under the old rule), and mkb for imported MetaKernelBench results; new verdicts keep theirs
    void migrationGivesEveryVerdictItsImplementationBoundary() {
        const fs::path path = at("before_boundaries.sqlite");
        const int before = 5; // the step just before the boundary column (schema 6), whatever steps come later
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            const bool migrated = static_cast<bool>(mkb::store::applyMigrations(db, 0, before, path.string()));
            sqlite3_close(db);
            QVERIFY(migrated);
        }
        const std::string columns =
            "trial_id, recorded_at, imported, correct, passed, speedup, stage, infrastructure_error, timed_out, "
            "error, correct_draws, total_draws, mismatch, compliant, compliance_rule, kernel_median_ms, "
            "eager_median_ms, kernel_iqr_ms, throttled, outliers_correct, quant_cosine, quant_relative_l1, quant_rmse, "
            "quant_passed, roofline_bytes, roofline_flops, roofline_gbps, roofline_tflops, roofline_iou, roofline_mfu, "
            "eval_seconds, device_name, verdict_json";
        const std::string values = "'then', 1, 1, 1, 1.5, 'done', 0, 0, '', 1, 1, '', 1, '', 0.2, 0.3, NULL, 0, NULL, "
                                   "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 2.0, 'cpu', ";
        QVERIFY(rawExec(path, "INSERT INTO models (id, name, driver, created_at) VALUES (1, 'm', 'chat', 'then');"
                              "INSERT INTO trials (id, model_id, suite, problem_number, problem_slug, family, "
                              "replicate, arm, dsl, coordinate, status, started_at, origin) VALUES "
                              "(1, 1, 's', 1, 'p1', 'f', 1, 'solo_cuda', 'cuda', 'c1', 'finished', 'then', ''),"
                              "(2, 1, 's', 2, 'p2', 'f', 1, 'solo_cuda', 'cuda', 'c2', 'finished', 'then', ''),"
                              "(3, 1, 's', 3, 'p3', 'f', 1, 'solo_cuda', 'cuda', 'c3', 'finished', 'then', "
                              "'mkb-import:abc');"));
        QVERIFY(rawExec(path, "INSERT INTO final_verdicts (" + columns + ") VALUES (1, " + values +
                                  R"('{"passed": true, "boundary": "strict"}'), (2, )" + values +
                                  R"('{"passed": true}'), (3, )" + values + R"('{"passed": true}'))"));
        auto store = openOrFail(path);
        QVERIFY(store);
        QCOMPARE(store->migratedFromVersion(), before);
        for (const auto& [id, boundary] : {std::pair{1, "strict"}, std::pair{2, "legacy"}, std::pair{3, "mkb"}}) {
            mkb::Result<mkb::TrialRecord> full = store->loadTrial(id);
            QVERIFY(full && full->finalVerdict);
            QCOMPARE(full->finalVerdict->boundary, std::string(boundary));
        }
        auto lean = store->loadTrials({}, mkb::TrialDetail::Lean);
        QVERIFY(lean && lean->size() == 3);
        for (const mkb::TrialRecord& trial : *lean) {
            QVERIFY(trial.finalVerdict);
            QCOMPARE(trial.finalVerdict->boundary, std::string(trial.id == 1   ? "strict"
                                                               : trial.id == 2 ? "legacy"
                                                                               : "mkb"));
        }
    }

    void migratesForwardFromVersion1() {
        const fs::path path = at("old.sqlite");
        QVERIFY(writeVersion1Store(path));
        QCOMPARE(rawInt(path, "PRAGMA user_version"), 1LL);
        QCOMPARE(rawInt(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'annotations'"), 0LL);
        // Data written by the old build survives the migration.
        QVERIFY(rawExec(path, "INSERT INTO models (name, driver, created_at) VALUES ('old-model', 'chat', 'then')"));
        mkb::Result<int> version = mkb::Store::fileSchemaVersion(path);
        QVERIFY(version);
        QCOMPARE(*version, 1);

        auto store = openOrFail(path);
        QVERIFY(store);
        QCOMPARE(store->migratedFromVersion(), 1);
        mkb::Result<std::vector<mkb::ModelRecord>> models = store->models();
        QVERIFY(models);
        QCOMPARE(models->size(), std::size_t(1));
        QCOMPARE(models->front().name, std::string("old-model"));
        // The new table works.
        mkb::Result<std::int64_t> trial = store->insertTrial(sampleTrial("old-model", 1, 1, "solo_cuda"));
        QVERIFY(trial);
        mkb::TrialOutcome outcome;
        outcome.skillText = "skill";
        QVERIFY(store->finishTrial(*trial, outcome));
        mkb::Result<std::optional<mkb::SkillRecord>> skill = store->skillOfTrial(*trial);
        QVERIFY(skill && *skill);
        mkb::AnnotationRecord annotation;
        annotation.skillId = (*skill)->id;
        annotation.rangeEnd = 5;
        QVERIFY(store->addAnnotation(annotation));
        store.reset();
        QCOMPARE(rawInt(path, "PRAGMA user_version"), static_cast<long long>(mkb::Store::latestSchemaVersion()));
        QCOMPARE(*mkb::Store::fileSchemaVersion(path), mkb::Store::latestSchemaVersion());
    }

    void emptyFileIsInitialised() {
        const fs::path path = at("empty.sqlite");
        writeBytes(path, "");
        auto store = mkb::Store::open(path, mkb::OpenMode::MustExist);
        QVERIFY2(store, store ? "" : store.error().message.c_str());
        QCOMPARE((*store)->migratedFromVersion(), 0);
    }

    void missingFileWithMustExistIsAnError() {
        const fs::path path = at("nowhere/missing.sqlite");
        auto store = mkb::Store::open(path, mkb::OpenMode::MustExist);
        QVERIFY(!store);
        QVERIFY(store.error().message.find(path.string()) != std::string::npos);
        QVERIFY(store.error().message.find("does not exist") != std::string::npos);
        QVERIFY(!fs::exists(path));
        QVERIFY(!fs::exists(path.parent_path()));
    }

    void folderIsNotAStore() {
        const fs::path path = at("a-folder");
        fs::create_directories(path);
        auto store = mkb::Store::open(path);
        QVERIFY(!store);
        QVERIFY(store.error().message.find("folder") != std::string::npos);
    }

    void randomBytesAreRefusedUntouched() {
        const fs::path path = at("random.sqlite");
        std::mt19937 generator(1234);
        std::string bytes(8192, '\0');
        for (char& byte : bytes) {
            byte = static_cast<char>(generator() & 0xFF);
        }
        writeBytes(path, bytes);
        expectRefusedUntouched(path, {"not an SQLite database", "untouched"});
    }

    void textFileIsRefusedUntouched() {
        const fs::path path = at("notes.txt");
        writeBytes(path, "These are my notes, not a database.\nSecond line.\n");
        expectRefusedUntouched(path, {"not an SQLite database"});
    }

    void truncatedStoreIsRefusedUntouched() {
        const fs::path path = writeRealStore("truncated.sqlite");
        const std::string whole = fileBytes(path);
        QVERIFY(whole.size() > 8 * 4096);
        writeBytes(path, whole.substr(0, whole.size() / 2));
        expectRefusedUntouched(path, {"truncated"});
        // Cut mid-page too.
        writeBytes(path, whole.substr(0, whole.size() / 2 + 100));
        expectRefusedUntouched(path, {"truncated"});
    }

    void storeFailingIntegrityCheckIsRefusedUntouched() {
        const fs::path path = writeRealStore("damaged.sqlite");
        std::string bytes = fileBytes(path);
        const std::size_t pageSize = 4096;
        QVERIFY(bytes.size() > 6 * pageSize);
        // Scribble over the middle of the file (b-tree pages of trials), keeping the header intact.
        std::mt19937 generator(99);
        for (std::size_t i = 3 * pageSize; i < 5 * pageSize; ++i) {
            bytes[i] = static_cast<char>(generator() & 0xFF);
        }
        writeBytes(path, bytes);
        expectRefusedUntouched(path, {"corrupt"});
    }

    // store: a reader's open skips the page check; a damaged page fails the read that meets it, nothing is written
    void readerOpenSkipsThePageCheckAndFailsOnTheDamagedRead() {
        const fs::path healthy = writeRealStore("healthy-reader.sqlite");
        {
            auto store = mkb::Store::open(healthy, mkb::OpenMode::ReadExisting);
            QVERIFY(store);
            QCOMPARE((*store)->loadTrials({}, mkb::TrialDetail::Lean)->size(), std::size_t(300));
        }
        QVERIFY(!mkb::Store::open(at("nowhere/reader.sqlite"), mkb::OpenMode::ReadExisting));
        QVERIFY(!fs::exists(at("nowhere")));

        const fs::path path = writeRealStore("damaged-reader.sqlite");
        std::string bytes = fileBytes(path);
        const std::size_t pageSize = 4096;
        std::mt19937 generator(99);
        for (std::size_t i = pageSize; i < bytes.size(); ++i) { // every page but the first (the schema)
            bytes[i] = static_cast<char>(generator() & 0xFF);
        }
        writeBytes(path, bytes);
        std::string message; // from the open (should the schema itself be hit) or else from the first read
        {
            auto store = mkb::Store::open(path, mkb::OpenMode::ReadExisting);
            if (!store) {
                message = store.error().message;
            } else {
                auto trials = (*store)->loadTrials({}, mkb::TrialDetail::Lean);
                QVERIFY(!trials);
                message = trials.error().message;
            }
        }
        QVERIFY2(message.find(path.string()) != std::string::npos, message.c_str());
        QVERIFY2(message.find('\n') == std::string::npos, message.c_str());
        QCOMPARE(fileBytes(path), bytes);
        // What is not a workbench store is still refused by a reader.
        const fs::path other = at("other-reader.sqlite");
        QVERIFY(rawExec(other, "CREATE TABLE contacts (name TEXT);"));
        auto foreign = mkb::Store::open(other, mkb::OpenMode::ReadExisting);
        QVERIFY(!foreign);
        QVERIFY(foreign.error().message.find("another application") != std::string::npos);
    }

    void otherApplicationsDatabaseIsRefusedUntouched() {
        const fs::path path = at("other.sqlite");
        QVERIFY(rawExec(path, "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada');"));
        expectRefusedUntouched(path, {"another application"});
    }

    void newerSchemaIsRefusedUntouched() {
        const fs::path path = writeRealStore("newer.sqlite");
        const int newer = mkb::Store::latestSchemaVersion() + 1;
        QVERIFY(rawExec(path, "PRAGMA user_version = " + std::to_string(newer)));
        expectRefusedUntouched(path,
                               {std::to_string(newer), std::to_string(mkb::Store::latestSchemaVersion()), "newer"});
        QCOMPARE(rawInt(path, "PRAGMA user_version"), static_cast<long long>(newer));
    }
};

QTEST_GUILESS_MAIN(StoreOpenTest)
#include "tst_store_open.moc"
