// `mkb suite check --resume` and interruption on the CPU fixture suite: reuse of unchanged problems, merging the
// reports of a split suite, carrying a report to another checkout, and partial reports that lose nothing.
#include "suite/suite_cli_run.h"
#include "support/process_signals.h"
#include "support/testpaths.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace suitetest;

class SuiteResumeTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp;

private slots:
    void initTestCase() { QVERIFY(temp.isValid()); }

    void resumeCarriesOverToAnotherCheckoutButNotAcrossFlakinessScopes() {
        // "suite check --resume: a report made in one checkout of the suite resumes in another (solution files are
        // found where this checkout has them); a report whose repeats covered one solution per problem is checked
        // again, saying why"
        QTemporaryDir first;
        QTemporaryDir second;
        QVERIFY(first.isValid() && second.isValid());
        QVERIFY(QProcess::execute("cp", {"-r", src("tests/suite/fixtures/suite"), first.path() + "/suite"}) == 0);
        QVERIFY(QProcess::execute("cp", {"-r", src("tests/suite/fixtures/suite"), second.path() + "/suite"}) == 0);
        auto args = [&](const QString& suite, const QString& json) {
            QStringList list = cpuArgs("checks/01*", "2");
            list[3] = suite;
            list << "--json" << json;
            return list;
        };
        const QString made = first.path() + "/made.json";
        QVERIFY(runMkb(args(first.path() + "/suite", made)).exitCode == 0);
        const QString kept = second.path() + "/made.json";
        QVERIFY(QFile::copy(made, kept));
        QVERIFY(QDir(first.path()).removeRecursively()); // the first checkout is gone, as on another machine
        CliRun resumed = runMkb(args(second.path() + "/suite", second.path() + "/again.json") << "--resume" << kept);
        QVERIFY2(resumed.out.contains(": 1 problems reused\n"), qPrintable(resumed.out + resumed.err));

        QFile report(kept);
        QVERIFY(report.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(report.readAll()).object();
        report.close();
        root.remove("flakiness_scope"); // as a report written when only the first DSL was repeated
        const QString older = second.path() + "/older.json";
        QFile olderFile(older);
        QVERIFY(olderFile.open(QIODevice::WriteOnly));
        olderFile.write(QJsonDocument(root).toJson());
        olderFile.close();
        CliRun rechecked = runMkb(args(second.path() + "/suite", second.path() + "/third.json") << "--resume" << older);
        QVERIFY2(rechecked.out.contains("0 problems reused; 1 checked again (its flakiness repeats covered one "
                                        "solution, not each)"),
                 qPrintable(rechecked.out + rechecked.err));
    }

    void aPoolResumesWhatOneOfItsDevicesChecked() {
        // "suite check --devices --resume: a problem checked on a device of this run's pool is reused (a report made on
        // one GPU carries into a check over all of a host's GPUs); one checked on a device outside the pool is not"
        auto args = [&](const QString& devices, const QString& json) {
            QStringList list = cpuArgs("checks/01*", "2");
            const qsizetype at = list.indexOf("--device");
            list[at] = "--devices";
            list[at + 1] = devices;
            list << "--json" << json;
            return list;
        };
        const QString pair = temp.path() + "/pair.json";
        CliRun made = runMkb(args("cpu:0,cpu:1", pair));
        QVERIFY2(made.exitCode == 0, qPrintable(made.out + made.err));
        CliRun wider = runMkb(args("cpu:0,cpu:1,cpu:2", temp.path() + "/wider.json") << "--resume" << pair);
        QVERIFY2(wider.out.contains(": 1 problems reused\n"), qPrintable(wider.out + wider.err));
        CliRun elsewhere = runMkb(args("cpu:2,cpu:3", temp.path() + "/elsewhere.json") << "--resume" << pair);
        QVERIFY2(elsewhere.out.contains("0 problems reused; 1 checked again (it was checked on another device)"),
                 qPrintable(elsewhere.out + elsewhere.err));
    }

    void resumeReusesUnchangedProblemsAndRechecksChangedOnes() {
        // "suite check --resume: unchanged problems are reused without grading; a changed solution is checked again"
        QTemporaryDir copy;
        QVERIFY(copy.isValid());
        const QString suite = copy.path() + "/suite";
        QVERIFY(QProcess::execute("cp", {"-r", src("tests/suite/fixtures/suite"), suite}) == 0);
        auto args = [&](const QString& json) {
            QStringList list = cpuArgs("checks/0[12]*", "2");
            list[3] = suite;
            list << "--json" << json;
            return list;
        };
        const QString first = copy.path() + "/first.json";
        CliRun initial = runMkb(args(first));
        QVERIFY2(initial.exitCode == 1, qPrintable(initial.out + initial.err)); // 02 has its insensitive input

        const QString second = copy.path() + "/second.json";
        CliRun resumed = runMkb(args(second) << "--resume" << first);
        QVERIFY2(resumed.exitCode == 1, qPrintable(resumed.out + resumed.err));
        QVERIFY2(resumed.out.contains(QRegularExpression("^ok    checks/01_vector_add: .*\\[reused\\]$",
                                                         QRegularExpression::MultilineOption)),
                 qPrintable(resumed.out));
        QVERIFY(resumed.out.contains(
            QRegularExpression("^ISSUE checks/02_ignored_bias: .*\\[reused\\]$", QRegularExpression::MultilineOption)));
        QVERIFY(resumed.out.contains("resumed from " + first + ": 2 problems reused\n"));
        const auto checkSeconds = [](const QString& report) { // each problem's check_s, as the report holds it
            QFile file(report);
            QStringList seconds;
            if (file.open(QIODevice::ReadOnly)) {
                for (const QJsonValue& problem :
                     QJsonDocument::fromJson(file.readAll()).object()["problems"].toArray()) {
                    seconds << QString::number(problem.toObject()["check_s"].toDouble(-1));
                }
            }
            return seconds;
        };
        QCOMPARE(checkSeconds(second).size(), 2);
        QCOMPARE(checkSeconds(second), checkSeconds(first)); // a reused check keeps the time it took then
        QVERIFY(!checkSeconds(first).contains("-1"));
        QCOMPARE(issueLines(resumed.out), issueLines(initial.out));

        QFile solution(suite + "/checks/_solutions/01_vector_add.cpusim.py");
        QVERIFY(solution.open(QIODevice::Append));
        solution.write("\n# edited\n");
        solution.close();
        CliRun again = runMkb(args(copy.path() + "/third.json") << "--resume" << second);
        QVERIFY2(again.out.contains("resumed from " + second +
                                    ": 1 problems reused; 1 checked again (the cpusim solution changed)"),
                 qPrintable(again.out));
        QVERIFY(
            again.out.contains(QRegularExpression("^ok    checks/01_vector_add: .*\\(cpusim\\); checked in [0-9.]+ s$",
                                                  QRegularExpression::MultilineOption)));
        QVERIFY(again.out.contains(
            QRegularExpression("^ISSUE checks/02_ignored_bias: .*\\[reused\\]$", QRegularExpression::MultilineOption)));

        // Halves checked apart (as on two GPUs) merge into one report through a repeated --resume.
        const QString half1 = copy.path() + "/half1.json";
        const QString half2 = copy.path() + "/half2.json";
        auto halfArgs = [&](const QString& problems, const QString& json) {
            QStringList list = cpuArgs(problems, "2");
            list[3] = suite;
            list << "--json" << json;
            return list;
        };
        runMkb(halfArgs("checks/01*", half1));
        runMkb(halfArgs("checks/02*", half2));
        const QString merged = copy.path() + "/merged.json";
        CliRun joined = runMkb(args(merged) << "--resume" << half1 << "--resume" << half2);
        QVERIFY2(joined.out.contains("resumed from " + half1 + ", " + half2 + ": 2 problems reused\n"),
                 qPrintable(joined.out + joined.err));
        QFile mergedFile(merged);
        QVERIFY(mergedFile.open(QIODevice::ReadOnly));
        QJsonObject mergedRoot = QJsonDocument::fromJson(mergedFile.readAll()).object();
        QCOMPARE(mergedRoot["problems"].toArray().size(), 2);
        QCOMPARE(mergedRoot["complete"].toBool(false), true);

        CliRun broken = runMkb(args(copy.path() + "/fourth.json") << "--resume" << suite + "/checks/01_vector_add.py");
        QCOMPARE(broken.exitCode, 3);
        QVERIFY2(broken.err.contains("not a report of `mkb suite check --json`"), qPrintable(broken.err));
    }

    void resumeRefusesAReportOfTheOtherBoundary() {
        // "suite check --boundary: the boundary is in the JSON, the table and the resume key"
        const QString strictJson = temp.path() + "/strict.json";
        const QString strictTable = temp.path() + "/strict.md";
        CliRun strict = runMkb(cpuArgs("checks/01*", "1") << "--boundary"
                                                          << "strict"
                                                          << "--json" << strictJson << "--table" << strictTable);
        QVERIFY2(strict.exitCode == 0, qPrintable(strict.out + strict.err));
        QVERIFY2(strict.out.contains("under boundary strict"), qPrintable(strict.out));
        QFile strictFile(strictJson);
        QVERIFY(strictFile.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(strictFile.readAll()).object();
        QCOMPARE(root["boundary"].toString(), QString("strict"));
        const QJsonObject verdict =
            root["problems"].toArray()[0].toObject()["solutions"].toArray()[0].toObject()["verdict"].toObject();
        QCOMPARE(verdict["boundary"].toString(), QString("strict"));
        QFile table(strictTable);
        QVERIFY(table.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(table.readAll()).contains("- implementation boundary: strict ("));

        // The default boundary is mkb: the strict report's check is not reused, and the reason says why.
        const QString mkbJson = temp.path() + "/mkb.json";
        CliRun mkb = runMkb(cpuArgs("checks/01*", "1") << "--json" << mkbJson << "--resume" << strictJson);
        QVERIFY2(mkb.exitCode == 0, qPrintable(mkb.out + mkb.err));
        QVERIFY2(mkb.out.contains("0 problems reused; 1 checked again (it was graded under boundary strict, this "
                                  "check grades under mkb)"),
                 qPrintable(mkb.out));
        QVERIFY(!mkb.out.contains("[reused]"));
        QFile mkbFile(mkbJson);
        QVERIFY(mkbFile.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(mkbFile.readAll()).object()["boundary"].toString(), QString("mkb"));

        // Under its own boundary the report is reused.
        CliRun again = runMkb(cpuArgs("checks/01*", "1") << "--boundary"
                                                         << "strict"
                                                         << "--resume" << strictJson);
        QVERIFY2(again.out.contains("1 problems reused"), qPrintable(again.out + again.err));

        CliRun bad = runMkb(cpuArgs("checks/01*", "1") << "--boundary"
                                                       << "legacy");
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("--boundary 'legacy' is not an implementation boundary"), qPrintable(bad.err));
    }

    void interruptLeavesAPartialReport() {
        // "suite check: Ctrl+C after the first problem leaves a partial JSON and table naming what is left; exit 130"
        const QString json = temp.path() + "/partial.json";
        const QString table = temp.path() + "/partial.md";
        QProcess process;
        const QByteArray out =
            startUntil(process, cpuArgs("*", "3") << "--json" << json << "--table" << table, "checks/01_vector_add:");
        QVERIFY2(out.contains("checks/01_vector_add:"), out.constData());
        QVERIFY(mkbtest::signalIfRunning(process, SIGINT));
        QVERIFY(process.waitForFinished(120000));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitCode(), 130);
        QVERIFY2(err.contains("suite check interrupted after 1 of 4 problems; the partial report is in " + json),
                 qPrintable(err));
        QFile file(json);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(root["complete"].toBool(true), false);
        QCOMPARE(root["problems"].toArray().size(), 1);
        QCOMPARE(root["unchecked"].toArray().size(), 3);
        QFile markdown(table);
        QVERIFY(markdown.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(markdown.readAll())
                    .contains("- **partial**: 1 of 4 problems checked; not yet checked: 3 (02–04; continue with "
                              "--resume)"));
    }

    void interruptKeepsWhatTheResumedReportsHold() {
        // "suite check --resume, interrupted: the partial report still holds every problem an earlier report holds
        // (a check split over several calls of a time-limited machine loses nothing it had)"
        const QString early = temp.path() + "/early.json";
        CliRun first = runMkb(cpuArgs("checks/0[34]*", "2") << "--json" << early);
        QVERIFY2(first.exitCode == 1, qPrintable(first.out + first.err)); // 03 is not deterministic, 04 unsolved
        const QString json = temp.path() + "/kept.json";
        QProcess process;
        const QByteArray out =
            startUntil(process, cpuArgs("*", "2") << "--resume" << early << "--json" << json, "checks/01_vector_add:");
        QVERIFY2(out.contains("checks/01_vector_add:"), out.constData());
        QVERIFY(mkbtest::signalIfRunning(process, SIGINT)); // while 02, which no report holds, is being checked
        QVERIFY(process.waitForFinished(120000));
        QCOMPARE(process.exitCode(), 130);
        QFile file(json);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QStringList names;
        for (const QJsonValue& problem : root["problems"].toArray()) {
            names << problem.toObject()["name"].toString();
        }
        QCOMPARE(names, QStringList({"checks/01_vector_add", "checks/03_noisy_reference", "checks/04_unsolved_scale"}));
        QCOMPARE(root["problems"].toArray()[1].toObject()["reused"].toBool(), true);
        QCOMPARE(root["unchecked"].toArray(), QJsonArray({"checks/02_ignored_bias"}));
        QCOMPARE(root["complete"].toBool(true), false);
    }
};

QTEST_GUILESS_MAIN(SuiteResumeTest)
#include "tst_suite_resume.moc"
