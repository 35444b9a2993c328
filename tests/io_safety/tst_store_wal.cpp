// io safety: read-only verbs open the store read-only; a write-ahead log beside it that no process holds is read but
// never applied, checkpointed or deleted by them (`mkb db recover` applies it, after a copy), another database's log
// is refused by every verb, and a live writer's changes are still seen.
#include "io_safety_fixtures.h"

#include "core/store/migrations.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace iosafety;

class StoreWalTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> dir_;
    fs::path at(const std::string& name) const { return fs::path(dir_->path().toStdString()) / name; }
    static QString q(const fs::path& path) { return QString::fromStdString(path.string()); }

    static QList<QStringList> readOnlyVerbs(const fs::path& store) {
        return {{"db", "info", "--store", q(store)},
                {"db", "check", "--store", q(store)},
                {"report", "--store", q(store)},
                {"export", "results-json", "--store", q(store), "--model", "model-0"},
                {"export", "repair-pairs", "--store", q(store)}};
    }

private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
    }

    // The fuzzing report's case: a 15 MB store shrank to 94 KB under `db info`, which said it was left untouched.
    void anotherDatabasesLogBesideTheStoreIsRefusedByEveryVerbAndNothingChanges() {
        const fs::path store = at("project.sqlite");
        QVERIFY(writeStore(store, 2, 600));
        QVERIFY(fs::file_size(store) > 2'000'000);
        QVERIFY(copyLiveWal(at("other.sqlite"),
                            "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES (hex(randomblob(20000)));",
                            besides(store, "-wal")));
        const std::string storeBefore = fileBytes(store);
        const std::string walBefore = fileBytes(besides(store, "-wal"));
        QList<QStringList> verbs = readOnlyVerbs(store);
        verbs += QList<QStringList>{{"db", "init", "--store", q(store)},
                                    {"db", "migrate", "--store", q(store)},
                                    {"db", "recover", "--store", q(store)}};
        for (const QStringList& verb : verbs) {
            const CliRun run = runMkb(verb);
            QVERIFY2(run.exitCode == 4, qPrintable(verb.join(' ') + " -> " + QString::number(run.exitCode) + run.err));
            QVERIFY2(isOneLine(run.err) && run.err.contains(q(besides(store, "-wal"))) &&
                         run.err.contains("not this store's"),
                     qPrintable(run.err));
            QVERIFY2(fileBytes(store) == storeBefore, qPrintable(verb.join(' ') + " changed the store"));
            QVERIFY2(fileBytes(besides(store, "-wal")) == walBefore, qPrintable(verb.join(' ') + " changed the log"));
        }
        fs::rename(besides(store, "-wal"), at("moved-aside-wal"));
        QCOMPARE(runMkb({"db", "check", "--store", q(store)}).exitCode, 0);
        QCOMPARE(rowCount(store, "problems"), 600LL);
    }

    // SQLite keeps the log beside the link's target, so that is where it is looked for and guarded.
    void aStoreNamedThroughALinkIsGuardedWhereSQLiteKeepsItsLog() {
        fs::create_directories(at("real"));
        const fs::path store = at("real/project.sqlite");
        QVERIFY(writeStore(store, 2, 20));
        fs::create_symlink(store, at("link.sqlite"));
        QVERIFY(copyLiveWal(at("other.sqlite"), "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('x');",
                            besides(store, "-wal")));
        const std::string before = fileBytes(store);
        const CliRun info = runMkb({"db", "info", "--store", q(at("link.sqlite"))});
        QCOMPARE(info.exitCode, 4);
        QVERIFY2(info.err.contains("not this store's"), qPrintable(info.err));
        QCOMPARE(fileBytes(store), before);
        fs::remove(besides(store, "-wal"));
        const CliRun output =
            runMkb({"report", "--store", q(at("link.sqlite")), "--output", q(besides(store, "-wal"))});
        QCOMPARE(output.exitCode, 3);
        QVERIFY2(output.err.contains("project store"), qPrintable(output.err));
        QVERIFY(!fs::exists(besides(store, "-wal")));
    }

    // A killed writer, or two connections closing at once, leave a log nobody holds: readers read it in place.
    void aLogNobodyHoldsIsReadButNeverAppliedByReadersAndDbRecoverAppliesItAfterACopy() {
        const fs::path source = at("source.sqlite");
        QVERIFY(writeStore(source, 2, 50));
        const fs::path store = at("crashed.sqlite");
        QVERIFY(copyLiveWal(source,
                            "INSERT INTO models (name, driver, settings_json, created_at) "
                            "VALUES ('model-late', 'reference', '{}', '2026-01-01T00:00:00Z');",
                            besides(store, "-wal"), store));
        const std::string storeBefore = fileBytes(store);
        const std::string walBefore = fileBytes(besides(store, "-wal"));
        for (const QStringList& verb : readOnlyVerbs(store)) {
            const CliRun run = runMkb(verb);
            // The store holds no trials, so results-json reads through to "no live trial" (exit 3).
            const bool read =
                verb[1] == "results-json" ? run.exitCode == 3 && run.err.contains("no live trial") : run.exitCode == 0;
            QVERIFY2(read, qPrintable(verb.join(' ') + " -> " + QString::number(run.exitCode) + run.err));
            QVERIFY(fileBytes(store) == storeBefore);
            QVERIFY(fileBytes(besides(store, "-wal")) == walBefore);
        }
        const CliRun pending = runMkb({"db", "info", "--store", q(store)});
        QVERIFY2(pending.out.contains("models          3"), qPrintable(pending.out)); // the log's row is read
        QVERIFY2(pending.out.contains("write-ahead:") && pending.out.contains("not yet in the store file"),
                 qPrintable(pending.out));
        QVERIFY(fileBytes(store) == storeBefore);
        const CliRun recovered = runMkb({"db", "recover", "--store", q(store)});
        QVERIFY2(recovered.exitCode == 0, qPrintable(recovered.err));
        QVERIFY2(recovered.out.contains("applied") && recovered.out.contains(".before-recover"),
                 qPrintable(recovered.out));
        QVERIFY(fileBytes(besides(store, ".before-recover")) == storeBefore);
        QVERIFY(fileBytes(besides(store, ".before-recover-wal")) == walBefore);
        QVERIFY(!fs::exists(besides(store, "-wal"))); // copied into the store file, then removed by SQLite
        QCOMPARE(rowCount(store, "models"), 3LL);
        const CliRun info = runMkb({"db", "info", "--store", q(store), "--json"});
        QCOMPARE(info.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(info.out.toUtf8()).object()["tables"].toObject()["models"].toInt(), 3);
        const CliRun again = runMkb({"db", "recover", "--store", q(store)});
        QCOMPARE(again.exitCode, 0);
        QVERIFY2(again.out.contains("nothing was changed"), qPrintable(again.out));
    }

    void aLiveWritersUncheckpointedChangesAreSeenByReaders() {
        const fs::path store = at("live.sqlite");
        QVERIFY(writeStore(store, 2, 20));
        sqlite3* writer = nullptr; // in this process, so to mkb it is another process holding the store
        QVERIFY(sqlite3_open(store.c_str(), &writer) == SQLITE_OK);
        QVERIFY(exec(writer, "PRAGMA wal_autocheckpoint = 0"));
        QVERIFY(exec(writer, "INSERT INTO models (name, driver, settings_json, created_at) "
                             "VALUES ('model-live', 'reference', '{}', '2026-01-01T00:00:00Z')"));
        QVERIFY(fs::file_size(besides(store, "-wal")) > 32);
        const CliRun info = runMkb({"db", "info", "--store", q(store), "--json"});
        QVERIFY2(info.exitCode == 0, qPrintable(info.err));
        QCOMPARE(QJsonDocument::fromJson(info.out.toUtf8()).object()["tables"].toObject()["models"].toInt(), 3);
        const CliRun report = runMkb({"report", "--store", q(store)});
        QVERIFY2(report.exitCode == 0, qPrintable(report.err));
        QVERIFY(fs::file_size(besides(store, "-wal")) > 32); // the readers checkpointed nothing
        sqlite3_close(writer);
        QVERIFY(!fs::exists(besides(store, "-wal"))); // the writer, the last to close, did
        QCOMPARE(rowCount(store, "models"), 3LL);
    }

    void readOnlyVerbsShowAnOlderStoreAsItIsAndNeverMigrateIt() {
        const fs::path store = at("old.sqlite");
        sqlite3* db = nullptr;
        QVERIFY(sqlite3_open(store.c_str(), &db) == SQLITE_OK);
        QVERIFY(exec(db, "PRAGMA journal_mode = WAL"));
        QVERIFY(mkb::store::applyMigrations(db, 0, 1, store.string()));
        sqlite3_close(db);
        const std::string before = fileBytes(store);
        const CliRun info = runMkb({"db", "info", "--store", q(store)});
        QVERIFY2(info.exitCode == 0, qPrintable(info.err));
        QVERIFY2(info.out.contains("schema version: 1 (this build writes"), qPrintable(info.out));
        QCOMPARE(runMkb({"db", "check", "--store", q(store)}).exitCode, 0);
        const CliRun report = runMkb({"report", "--store", q(store)});
        QCOMPARE(report.exitCode, 4);
        QVERIFY2(isOneLine(report.err) && report.err.contains("mkb db migrate --store " + q(store)),
                 qPrintable(report.err));
        QCOMPARE(fileBytes(store), before);
        const CliRun migrated = runMkb({"db", "migrate", "--store", q(store)});
        QCOMPARE(migrated.exitCode, 0);
        QCOMPARE(runMkb({"report", "--store", q(store)}).exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(StoreWalTest)
#include "tst_store_wal.moc"
