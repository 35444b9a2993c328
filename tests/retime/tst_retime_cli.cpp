// mkb retime, mkb run's re-timing and mkb calibrate as processes, through the real grader on device cpu with the
// cpusim fixtures: convergence, staleness, archiving, dry runs and a stored calibration.
#include "core/analysis/calibration_ladder.h"
#include "core/store/store.h"
#include "support/cli_files.h"
#include "support/process_signals.h"
#include "support/testpaths.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <csignal>

using namespace mkb;

namespace {

using mkbtest::readText;
using mkbtest::writeText;

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

bool rawExec(const QString& store, const std::string& sql) {
    sqlite3* db = nullptr;
    const bool ok = sqlite3_open(store.toStdString().c_str(), &db) == SQLITE_OK &&
                    sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(db);
    return ok;
}

std::vector<RetimingRecord> retimings(const QString& store, bool all) {
    auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
    if (!opened) {
        qWarning("%s", opened.error().message.c_str());
        return {};
    }
    auto records = all ? (*opened)->allRetimings() : (*opened)->liveRetimings();
    return records ? *records : std::vector<RetimingRecord>{};
}

} // namespace

class RetimeCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int storeCounter_ = 0;

    QString fixtures() const { return QString::fromStdString((mkbtest::sourceDir() / "tests" / "fixtures").string()); }
    QString dslDir() const { return dir_.filePath("dsls"); }
    QString solutions() const { return dir_.filePath("solutions"); }
    QString newStore() { return dir_.filePath(QString("store%1.sqlite").arg(++storeCounter_)); }

    QStringList common(const QString& store) const {
        return {"--suite",   fixtures() + "/problems",
                "--dsl-dir", dslDir(),
                "--device",  "cpu",
                "--python",  QString::fromStdString(mkbtest::testPython()),
                "--store",   store};
    }

    QStringList runArgs(const QString& store, const QString& problems) const {
        return QStringList{"run",
                           "--model",
                           "testmodel",
                           "--driver",
                           "reference",
                           "--driver-config",
                           dir_.filePath("reference.json"),
                           "--problems",
                           problems,
                           "--dsls",
                           "cpusim,cpusimb",
                           "--timing-draws",
                           "5",
                           "--progress",
                           "json"} +
               common(store);
    }

    QStringList retimeArgs(const QString& store) const {
        return QStringList{"retime", "--min-rounds", "10", "--max-rounds", "40", "--max-seconds", "10"} + common(store);
    }

    CliRun runMkb(const QStringList& args, int timeoutMs = 300000) {
        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("MKB_DATA_DIR", QString::fromStdString(mkbtest::sourceDir().string()));
        environment.insert("MKB_STORE", dir_.filePath("never-used.sqlite"));
        process.setProcessEnvironment(environment);
        process.start(QString::fromStdString(mkbtest::cliPath()), args);
        if (!process.waitForFinished(timeoutMs)) {
            process.kill();
            process.waitForFinished();
            return {};
        }
        CliRun run;
        run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
        run.out = QString::fromUtf8(process.readAllStandardOutput());
        run.err = QString::fromUtf8(process.readAllStandardError());
        return run;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const QString written = mkbtest::writeCpusimPair(dir_.path(), {"01_vector_add", "02_row_softmax"});
        QVERIFY2(written.isEmpty(), qPrintable(written));
        // A third CPU test DSL, cpusimc, the same descriptor and solutions under another id (for three-DSL runs).
        QByteArray third = mkbtest::readText(dslDir() + "/cpusimb.json");
        third.replace("\"id\": \"cpusimb\"", "\"id\": \"cpusimc\"");
        QVERIFY(third.contains("\"cpusimc\"") && writeText(dslDir() + "/cpusimc.json", third));
        for (const char* stem : {"01_vector_add", "02_row_softmax"}) {
            QVERIFY(writeText(solutions() + "/" + stem + ".cpusimc.py",
                              mkbtest::readText(solutions() + "/" + stem + ".cpusim.py")));
        }
        QVERIFY(writeText(dir_.filePath("reference.json"),
                          QJsonDocument(QJsonObject{{"solutions_dir", solutions()}}).toJson()));
    }

    void threeDslsRunEveryPairOnceEachWithOneSoloPerDslAndARetimingPerDirection() {
        const QString store = newStore();
        QStringList args = runArgs(store, "p01");
        args[args.indexOf("cpusim,cpusimb")] = "cpusim,cpusimb,cpusimc";
        const CliRun run = runMkb(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        const QList<QJsonObject> finished = mkbtest::events(run.out, "run_finished");
        QCOMPARE(finished.size(), 1); // one end for the whole run, whatever the number of pairs
        QCOMPARE(finished.front()["exit_code"].toInt(), 0);
        QCOMPARE(mkbtest::events(run.out, "trial_finished").size(), 3 + 6); // each solo once, six directions
        const std::vector<RetimingRecord> cells = retimings(store, false);
        QCOMPARE(cells.size(), std::size_t(6));
        // Running it again reuses everything: every pair converges on the solos the others recorded.
        const CliRun again = runMkb(args);
        QVERIFY2(again.exitCode == 0, qPrintable(again.err));
        QCOMPARE(mkbtest::events(again.out, "trial_finished").size(), 0);
        QCOMPARE(retimings(store, false).size(), std::size_t(6));
    }

    void retimeConvergesAndRetimesOnlyWhatIsStale() {
        const QString store = newStore();
        const CliRun run = runMkb(runArgs(store, "p0[12]") << "--no-retime");
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(!run.out.contains("\"event\":\"retimed\""));
        QVERIFY(retimings(store, true).empty());

        const CliRun dry = runMkb(retimeArgs(store) << "--dry-run");
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.err + dry.out));
        QVERIFY2(dry.out.contains("4 would be re-timed"), qPrintable(dry.out));
        QVERIFY(retimings(store, true).empty());

        const CliRun first = runMkb(retimeArgs(store));
        QVERIFY2(first.exitCode == 0, qPrintable(first.err + first.out));
        QVERIFY2(first.out.contains("re-timed 4, kernel failed 0, errors 0"), qPrintable(first.out));
        QVERIFY2(first.out.contains("testmodel p01 r1 cpusim2cpusimb  missing (no re-timing yet)  ratio "),
                 qPrintable(first.out));
        std::vector<RetimingRecord> live = retimings(store, false);
        QCOMPARE(live.size(), std::size_t(4));
        for (const RetimingRecord& record : live) {
            QVERIFY(record.result.ok);
            QCOMPARE(record.result.device, std::string("cpu"));
            QVERIFY(!record.result.graderFingerprint.empty());
            QCOMPARE(record.result.kernels.size(), std::size_t(3)); // the source passed, so it joined
            QVERIFY(record.result.pair("base", "skill").has_value());
            QVERIFY(record.result.rounds >= 10 && record.result.rounds <= 40);
            QVERIFY(record.skillTrialId && record.baseTrialId && record.sourceTrialId);
        }

        const CliRun again = runMkb(retimeArgs(store));
        QVERIFY2(again.exitCode == 0, qPrintable(again.err + again.out));
        QVERIFY2(again.out.contains("0 missing, 0 stale, 4 current"), qPrintable(again.out));
        QVERIFY2(again.out.contains("re-timed 0"), qPrintable(again.out));
        QCOMPARE(retimings(store, true).size(), std::size_t(4));

        // The skill arm's final kernel changes (as a redo would): only that cell is stale, and its old result is
        // archived beside the new one.
        QVERIFY(rawExec(store,
                        "UPDATE submissions SET kernel_source = kernel_source || '\n# edited\n' WHERE idx = 0 "
                        "AND trial_id = (SELECT id FROM trials WHERE coordinate = 'p01_r1_cpusim2cpusimb_skill')"));
        const CliRun stale = runMkb(retimeArgs(store));
        QVERIFY2(stale.exitCode == 0, qPrintable(stale.err + stale.out));
        QVERIFY2(stale.out.contains("0 missing, 1 stale, 3 current"), qPrintable(stale.out));
        QVERIFY2(stale.out.contains("stale (the skill kernel changed"), qPrintable(stale.out));
        QCOMPARE(retimings(store, false).size(), std::size_t(4));
        const std::vector<RetimingRecord> all = retimings(store, true);
        QCOMPARE(all.size(), std::size_t(5));
        int archived = 0;
        for (const RetimingRecord& record : all) {
            archived += record.archived ? 1 : 0;
        }
        QCOMPARE(archived, 1);

        // --redo-current re-times everything once more, archiving again; nothing is overwritten.
        const CliRun redo = runMkb(retimeArgs(store) << "--redo-current"
                                                     << "--problems"
                                                     << "p02");
        QVERIFY2(redo.exitCode == 0, qPrintable(redo.err + redo.out));
        QVERIFY2(redo.out.contains("re-timed 2"), qPrintable(redo.out));
        QCOMPARE(retimings(store, true).size(), std::size_t(7));
    }

    void ctrlCLeavesTheStoreConsistentAndTheNextRetimeFinishes() {
        const QString store = newStore();
        const CliRun run = runMkb(runArgs(store, "p0[12]") << "--no-retime");
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        // Rounds that never converge (a CI half-width no CPU reaches) and a 30 s limit: SIGINT lands mid-cell.
        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("MKB_DATA_DIR", QString::fromStdString(mkbtest::sourceDir().string()));
        process.setProcessEnvironment(environment);
        process.start(QString::fromStdString(mkbtest::cliPath()),
                      QStringList{"retime", "--min-rounds", "1000000", "--max-rounds", "1000000", "--max-seconds", "30",
                                  "--ci-halfwidth", "0.000001"} +
                          common(store));
        QVERIFY(process.waitForStarted());
        QTest::qWait(8000);
        QVERIFY(mkbtest::signalIfRunning(process, SIGINT));
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 130);
        QVERIFY(retimings(store, true).size() <= 1);
        {
            auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
            QVERIFY(opened);
            auto problems = (*opened)->integrityCheck();
            QVERIFY(problems && problems->empty());
        }
        const CliRun resumed = runMkb(retimeArgs(store));
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err + resumed.out));
        QCOMPARE(retimings(store, false).size(), std::size_t(4));
    }

    void aFailedSkillArmIsNotRetimedAndSaysWhy() {
        const QString store = newStore();
        const CliRun run = runMkb(runArgs(store, "p01") << "--no-retime");
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(rawExec(store, "UPDATE final_verdicts SET passed = 0 WHERE trial_id = (SELECT id FROM trials WHERE "
                               "coordinate = 'p01_r1_cpusimb2cpusim_skill')"));
        const CliRun retime = runMkb(retimeArgs(store));
        QVERIFY2(retime.exitCode == 0, qPrintable(retime.err + retime.out));
        QVERIFY2(retime.out.contains("cpusimb2cpusim  not_retimed (the skill arm failed"), qPrintable(retime.out));
        QVERIFY2(retime.out.contains("1 not re-timed; re-timed 1"), qPrintable(retime.out));
    }

    void runRetimesEachFinishedCellByDefaultAndThenReusesIt() {
        const QString store = newStore();
        const CliRun run = runMkb(runArgs(store, "p01"));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        int retimedEvents = 0;
        for (const QString& line : run.out.split('\n', Qt::SkipEmptyParts)) {
            const QJsonObject event = QJsonDocument::fromJson(line.toUtf8()).object();
            if (event["event"].toString() == "retimed") {
                ++retimedEvents;
                QVERIFY(event["ratio"].isDouble());
                QVERIFY(event["ci_low"].toDouble() <= event["ratio"].toDouble());
                QVERIFY(event["cell"].toString().startsWith("testmodel p01 r1 "));
            }
        }
        QCOMPARE(retimedEvents, 2);
        QCOMPARE(retimings(store, true).size(), std::size_t(2));
        QVERIFY2(run.out.contains("2 cells re-timed"), qPrintable(run.out));
        const CliRun second = runMkb(runArgs(store, "p01"));
        QVERIFY2(second.exitCode == 0, qPrintable(second.err));
        QVERIFY2(second.out.contains("0 cells re-timed"), qPrintable(second.out));
        QCOMPARE(retimings(store, true).size(), std::size_t(2));
    }

    void calibrateStoresBothMethodsForTheDevice() {
        // The slowed copy takes twice as long (--slowdown 1.0): on a busy CPU a ~30 us kernel's paired ratios swing
        // by +-15% (A/A 0.85-1.18 measured under a parallel build), so the default 10% could not be told apart.
        const QString store = newStore();
        const CliRun run =
            runMkb(QStringList{"calibrate", "--problems", "p01", "--dsls", "cpusim", "--solutions",
                               fixtures() + "/solutions", "--replicates", "2", "--slowdown", "1.0", "--min-rounds",
                               "10", "--max-rounds", "40", "--max-seconds", "10", "--timing-draws", "5"} +
                   common(store));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        QVERIFY2(run.out.contains("paired    A/A false"), qPrintable(run.out));
        QVERIFY2(run.out.contains("unpaired  A/A false"), qPrintable(run.out));
        auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
        QVERIFY(opened);
        auto calibrations = (*opened)->liveCalibrations();
        QVERIFY(calibrations);
        QCOMPARE(calibrations->size(), std::size_t(1));
        const CalibrationRecord& record = calibrations->front();
        QCOMPARE(record.device, std::string("cpu"));
        QVERIFY(!record.graderFingerprint.empty());
        QCOMPARE(record.methods.size(), std::size_t(2));
        QCOMPARE(record.methods[0].method, std::string("paired"));
        QCOMPARE(record.methods[0].aaComparisons, 2);
        QCOMPARE(record.methods[0].abComparisons, 2);
        QCOMPARE(record.methods[1].aaComparisons, 2);
        // The slowed copy is slower in the paired re-timing: its ratio time(a)/time(a_slow) is below 1.
        const auto detail = nlohmann::json::parse(record.detailJson);
        QCOMPARE(detail.size(), std::size_t(2));
        for (const auto& row : detail) {
            QVERIFY2(row["paired_ab"][0].get<double>() < 1.0, row.dump().c_str());
            // The unpaired A/B grades the slowed copy for real: the grader's delay is recorded, not a computed speedup.
            QVERIFY2(row["unpaired_slowed_delay_ms"].get<double>() > 0, row.dump().c_str());
            QVERIFY2(row["unpaired_slowed"].get<double>() > 0, row.dump().c_str());
        }
        QCOMPARE(record.methods[1].abComparisons, 2);

        // The A/B ladder: printed, and stored as each control's A and B speedups over eager from its one re-timing.
        QVERIFY2(run.out.contains("paired A/B ladder"), qPrintable(run.out));
        QVERIFY2(run.out.contains("copy slowed by 1.000"), qPrintable(run.out));
        QVERIFY2(run.out.contains("the wrong way (B attains a t that A does not): 0"), qPrintable(run.out));
        QVERIFY2(run.out.contains("ties (a crossing of t within noise, counted as no move): R@0 0 R@0.5 "),
                 qPrintable(run.out));
        QVERIFY2(run.out.contains(QRegularExpression("speedup change B/A below 1 beyond noise \\(95% interval of "
                                                     "ln\\(B/A\\) excludes 0\\): 2 of 2 controls")),
                 qPrintable(run.out));
        QVERIFY2(run.out.contains(QRegularExpression("p01 cpusim r1  A [0-9.]+x \\[[0-9., ]+\\] R@")),
                 qPrintable(run.out));
        QVERIFY2(run.out.contains(QRegularExpression("p01 cpusim r2  A ")), qPrintable(run.out));
        const std::vector<analysis::SlowdownSession> sessions = slowdownSessions(record);
        QCOMPARE(sessions.size(), std::size_t(2));
        for (const analysis::SlowdownSession& session : sessions) {
            QCOMPARE(session.problem, 1);
            // B never above A: the slowed copy's speedup over eager is below A's, in the same session.
            QVERIFY2(session.b.ratio < session.a.ratio, std::to_string(session.b.ratio).c_str());
            QVERIFY(session.a.ciLow <= session.a.ratio && session.a.ratio <= session.a.ciHigh);
        }
        const analysis::SlowdownLadder ladder = analysis::slowdownLadder(sessions);
        QCOMPARE(ladder.contrast.resolved, std::size_t(2));
        QCOMPARE(ladder.contrast.pairedCells, std::size_t(2));
        QCOMPARE(ladder.wrongWay, std::size_t(0));
        QVERIFY(ladder.contrast.lift->score <= 0);
        QCOMPARE(ladder.contrast.ties.size(), std::size_t(5));
        // Each printed tie count is the stored ladder's.
        const QString tieLine =
            "ties (a crossing of t within noise, counted as no move): R@0 " + QString::number(ladder.contrast.ties[0]) +
            " R@0.5 " + QString::number(ladder.contrast.ties[1]) + " R@1 " + QString::number(ladder.contrast.ties[2]) +
            " R@2 " + QString::number(ladder.contrast.ties[3]) + " R@4 " + QString::number(ladder.contrast.ties[4]);
        QVERIFY2(run.out.contains(tieLine), qPrintable(run.out));
    }
};

QTEST_GUILESS_MAIN(RetimeCliTest)
#include "tst_retime_cli.moc"
