// store: `mkb db` — exit codes and one-line messages for init, info, check and migrate on good and bad stores.
#include "store_fixtures.h"

#include "support/testpaths.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

namespace fs = std::filesystem;
using namespace storetest;

namespace {

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

CliRun runMkb(const QStringList& arguments, const QString& storeEnv = {}) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (storeEnv.isEmpty()) {
        environment.remove("MKB_STORE");
    } else {
        environment.insert("MKB_STORE", storeEnv);
    }
    process.setProcessEnvironment(environment);
    process.start(QString::fromStdString(mkbtest::cliPath()), arguments);
    if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit) {
        return {};
    }
    return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

bool isOneLine(const QString& text) {
    return text.endsWith('\n') && text.count('\n') == 1;
}

} // namespace

class StoreCliTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    QString at(const QString& name) const { return dir_.filePath(name); }

    void expectStoreError(const QStringList& arguments, const QString& path, const QString& word) {
        const std::string before = fileBytes(path.toStdString());
        CliRun run = runMkb(arguments);
        QCOMPARE(run.exitCode, 4);
        QVERIFY2(isOneLine(run.err), qPrintable(run.err));
        QVERIFY2(run.err.startsWith("mkb: "), qPrintable(run.err));
        QVERIFY2(run.err.contains(path), qPrintable(run.err));
        QVERIFY2(run.err.contains(word), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
        QCOMPARE(fileBytes(path.toStdString()), before);
    }

private slots:
    void init() { QVERIFY(dir_.isValid()); }

    void infoOnAMissingStoreExits4() {
        const QString path = at("missing.sqlite");
        CliRun run = runMkb({"db", "info", "--store", path});
        QCOMPARE(run.exitCode, 4);
        QVERIFY2(isOneLine(run.err) && run.err.contains(path) && run.err.contains("db init"), qPrintable(run.err));
        QVERIFY(!fs::exists(path.toStdString()));
    }

    void initThenInfoCheckAndMigrate() {
        const QString path = at("new/project.sqlite");
        CliRun init = runMkb({"db", "init", "--store", path});
        QCOMPARE(init.exitCode, 0);
        QVERIFY2(init.out.contains("created store"), qPrintable(init.out));
        QVERIFY(fs::exists(path.toStdString()));

        CliRun again = runMkb({"db", "init", "--store", path});
        QCOMPARE(again.exitCode, 0);
        QVERIFY2(again.out.contains("left as it is"), qPrintable(again.out));

        CliRun info = runMkb({"db", "info", "--store", path});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(info.out.contains(QString("schema version: %1").arg(mkb::Store::latestSchemaVersion())),
                 qPrintable(info.out));
        QVERIFY(info.out.contains("journal mode:   wal"));
        QVERIFY(info.out.contains("annotations"));

        CliRun json = runMkb({"db", "info", "--json"}, path); // the store named by $MKB_STORE
        QCOMPARE(json.exitCode, 0);
        QJsonParseError parseError;
        QJsonDocument document = QJsonDocument::fromJson(json.out.toUtf8(), &parseError);
        QVERIFY2(document.isObject(), qPrintable(parseError.errorString()));
        QCOMPARE(document["schema_version"].toInt(), mkb::Store::latestSchemaVersion());
        QCOMPARE(document["journal_mode"].toString(), QString("wal"));
        QCOMPARE(document["tables"]["trials"].toInt(-1), 0);
        QCOMPARE(document["path"].toString(), path);

        CliRun check = runMkb({"db", "check", "--store", path});
        QCOMPARE(check.exitCode, 0);
        QVERIFY(check.out.startsWith("ok"));

        CliRun migrate = runMkb({"db", "migrate", "--store", path});
        QCOMPARE(migrate.exitCode, 0);
        QVERIFY2(migrate.out.contains("already at schema version"), qPrintable(migrate.out));
    }

    void migratePrintsFromAndTo() {
        const QString path = at("old.sqlite");
        QVERIFY(writeVersion1Store(path.toStdString()));
        CliRun migrate = runMkb({"db", "migrate", "--store", path});
        QCOMPARE(migrate.exitCode, 0);
        QVERIFY2(migrate.out.contains(QString("schema version 1 -> %1").arg(mkb::Store::latestSchemaVersion())),
                 qPrintable(migrate.out));
        QCOMPARE(rawInt(path.toStdString(), "PRAGMA user_version"),
                 static_cast<long long>(mkb::Store::latestSchemaVersion()));
    }

    void checkReportsProblemsWithExit1() {
        const QString path = at("dangling.sqlite");
        QCOMPARE(runMkb({"db", "init", "--store", path}).exitCode, 0);
        QVERIFY(rawExec(path.toStdString(), "INSERT INTO skills (trial_id, text, sha256, created_at) "
                                            "VALUES (12, 't', 's', 'c')"));
        CliRun check = runMkb({"db", "check", "--store", path});
        QCOMPARE(check.exitCode, 1);
        QVERIFY2(check.out.contains("skills"), qPrintable(check.out));
        QVERIFY2(isOneLine(check.err), qPrintable(check.err));
    }

    void corruptForeignAndNewerStoresExit4Untouched() {
        const QString text = at("notes.txt");
        writeBytes(text.toStdString(), "not a database\n");
        expectStoreError({"db", "info", "--store", text}, text, "not an SQLite database");
        expectStoreError({"db", "check", "--store", text}, text, "not an SQLite database");
        expectStoreError({"db", "migrate", "--store", text}, text, "not an SQLite database");
        expectStoreError({"db", "init", "--store", text}, text, "not an SQLite database");

        const QString foreign = at("foreign.sqlite");
        QVERIFY(rawExec(foreign.toStdString(), "CREATE TABLE t (x)"));
        expectStoreError({"db", "info", "--store", foreign}, foreign, "another application");

        const QString newer = at("newer.sqlite");
        QCOMPARE(runMkb({"db", "init", "--store", newer}).exitCode, 0);
        const int version = mkb::Store::latestSchemaVersion() + 5;
        QVERIFY(rawExec(newer.toStdString(), "PRAGMA user_version = " + std::to_string(version)));
        expectStoreError({"db", "info", "--store", newer}, newer, QString::number(version));
        expectStoreError({"db", "migrate", "--store", newer}, newer, "newer");
    }

    void usageErrorsExit2AndHelpExits0() {
        CliRun none = runMkb({"db"});
        QCOMPARE(none.exitCode, 2);
        QVERIFY(isOneLine(none.err));
        CliRun unknown = runMkb({"db", "frobnicate"});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains("frobnicate"));
        CliRun badFlag = runMkb({"db", "info", "--colour"});
        QCOMPARE(badFlag.exitCode, 2);
        QCOMPARE(runMkb({"db", "check", "--json"}).exitCode, 2);
        for (const QString action : {"", "init", "info", "check", "migrate"}) {
            QStringList arguments{"db"};
            if (!action.isEmpty()) {
                arguments << action;
            }
            arguments << "--help";
            CliRun help = runMkb(arguments);
            QCOMPARE(help.exitCode, 0);
            QVERIFY2(help.out.startsWith("usage: mkb db"), qPrintable(help.out));
        }
    }
};

QTEST_GUILESS_MAIN(StoreCliTest)
#include "tst_store_cli.moc"
