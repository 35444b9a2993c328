// `mkb grade` and `mkb device probe` as a user runs them: exit codes, one-line errors, report and JSON output.
#include "support/testpaths.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

CliRun runMkb(const QStringList& args, const QString& storePath) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("MKB_PYTHON", QString::fromStdString(mkbtest::testPython()));
    env.insert("MKB_STORE", storePath);
    process.setProcessEnvironment(env);
    process.start(QString::fromStdString(mkbtest::cliPath()), args);
    process.waitForFinished(300000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError())};
}

QString src(const char* relative) {
    return QString::fromStdString((mkbtest::sourceDir() / relative).string());
}

} // namespace

class GradingCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp;
    QString store() const { return temp.path() + "/store.sqlite"; }
    QStringList cpusimArgs(const char* kernel) const {
        return {"grade",     src(kernel),
                "--problem", "1",
                "--suite",   src("tests/fixtures/problems"),
                "--dsl",     "cpusim",
                "--dsl-dir", src("tests/fixtures/dsls"),
                "--device",  "cpu"};
    }

private slots:
    void badInputIsOneLineAndExit3_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        const QString suite = src("tests/fixtures/problems");
        const QString dsls = src("tests/fixtures/dsls");
        const QString kernel = src("tests/fixtures/solutions/01_vector_add.cpusim.py");
        QTest::newRow("missing kernel") << QStringList{"grade",     "/nonexistent/kernel.py",
                                                       "--problem", "1",
                                                       "--suite",   suite,
                                                       "--dsl",     "cpusim",
                                                       "--dsl-dir", dsls}
                                        << "does not exist";
        QTest::newRow("unknown problem") << QStringList{"grade", kernel,  "--problem", "99",        "--suite",
                                                        suite,   "--dsl", "cpusim",    "--dsl-dir", dsls}
                                         << "unknown problem '99'";
        QTest::newRow("unknown dsl") << QStringList{"grade", kernel,  "--problem", "1",         "--suite",
                                                    suite,   "--dsl", "nosuchdsl", "--dsl-dir", dsls}
                                     << "unknown DSL 'nosuchdsl'";
    }
    void badInputIsOneLineAndExit3() {
        // "mkb grade: a missing kernel, unknown problem or unknown DSL is exit 3 with one line"
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        CliRun run = runMkb(args, store());
        QCOMPARE(run.exitCode, 3);
        QVERIFY2(run.err.contains(says), qPrintable(run.err));
        QCOMPARE(run.err.trimmed().count('\n'), 0);
        QVERIFY(run.out.isEmpty());
    }

    void badCommandLineIsExit2() {
        // "mkb grade / device: a bad command line is exit 2"
        QCOMPARE(runMkb({"grade", "k.py", "--dsl", "cpusim"}, store()).exitCode, 2);
        QCOMPARE(runMkb({"grade", "k.py", "--problem", "1", "--dsl", "cpusim", "--device", "gpu0"}, store()).exitCode,
                 2);
        QCOMPARE(runMkb({"device", "probe", "--device", "cpu"}, store()).exitCode, 2);
        QCOMPARE(runMkb({"device", "frobnicate"}, store()).exitCode, 2);
        QCOMPARE(runMkb({"grade", "--help"}, store()).exitCode, 0);
    }

    void passingKernelPrintsReportAndExits0() {
        // "mkb grade: a correct cpusim kernel prints a PASSED report and exits 0"
        CliRun run = runMkb(cpusimArgs("tests/fixtures/solutions/01_vector_add.cpusim.py"), store());
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY(run.out.contains("result:       PASSED"));
        QVERIFY(run.out.contains("correctness:  5/5 draws correct"));
        QVERIFY(run.out.contains("speedup:"));
    }

    void failingKernelJsonAndSaveExit1() {
        // "mkb grade --json --save: a wrong kernel prints verdict JSON, is saved, and exits 1"
        QStringList args = cpusimArgs("tests/fixtures/hostile/wrong_shape.cpusim.py");
        args << "--json"
             << "--save"
             << "--store" << store();
        CliRun run = runMkb(args, store());
        QVERIFY2(run.exitCode == 1, qPrintable(run.out + run.err));
        QJsonObject verdict = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(verdict["imported"].toBool(), true);
        QCOMPARE(verdict["correct"].toBool(), false);
        QCOMPARE(verdict["infrastructure_error"].toBool(), false);
        QVERIFY(verdict["mismatch"].toString().contains("shape"));
        CliRun again = runMkb(args, store()); // the earlier manual trial is archived, not a conflict
        QVERIFY2(again.exitCode == 1, qPrintable(again.err));
        CliRun info = runMkb({"db", "info", "--store", store(), "--json"}, store());
        QVERIFY2(info.exitCode == 0, qPrintable(info.err));
        QJsonObject counts = QJsonDocument::fromJson(info.out.toUtf8()).object();
        QCOMPARE(counts["archived_trials"].toInt(), 1);
        QCOMPARE(counts["live_trials"].toInt(), 1);
    }
};

QTEST_GUILESS_MAIN(GradingCliTest)
#include "tst_grading_cli.moc"
