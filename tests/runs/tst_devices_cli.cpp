// `mkb run --devices` and `mkb suite check --devices` over several CPU "devices" (cpusim, the real grader): each
// verdict names its device, a device whose grader server is killed leaves the rotation with one note and loses nothing,
// losing every device stops the run keeping what finished, and --device alone keeps working.
#include "core/store/store.h"
#include "support/cli_files.h"
#include "support/process_signals.h"
#include "support/store_reads.h"
#include "support/testpaths.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <set>

#include <sys/types.h>

using namespace mkb;

namespace {

using mkbtest::events;
using mkbtest::poolServerOf;
using mkbtest::readText;
using mkbtest::verdictDevices;
using mkbtest::writeText;
QString path(const std::filesystem::path& p) {
    return mkbtest::qpath(p);
}

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

std::vector<TrialRecord> liveTrials(const QString& store) {
    auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
    if (!opened) {
        qWarning("%s", opened.error().message.c_str());
        return {};
    }
    auto trials = (*opened)->loadTrials();
    return trials ? *trials : std::vector<TrialRecord>{};
}

} // namespace

class DevicesCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int storeCounter_ = 0;

    QString fixtures() const { return path(mkbtest::sourceDir() / "tests" / "fixtures"); }
    QString dslDir() const { return dir_.filePath("dsls"); }
    QString solutions() const { return dir_.filePath("solutions"); }
    QString newStore() { return dir_.filePath(QString("store%1.sqlite").arg(++storeCounter_)); }

    QStringList runArgs(const QString& store, const QString& problems, const QStringList& devices) const {
        QStringList args = {"run",
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
                            "--suite",
                            fixtures() + "/problems",
                            "--dsl-dir",
                            dslDir(),
                            "--python",
                            QString::fromStdString(mkbtest::testPython()),
                            "--store",
                            store,
                            "--timing-draws",
                            "5",
                            "--concurrency",
                            "2",
                            "--progress",
                            "json"};
        return args + devices;
    }

    void startMkb(QProcess& process, const QStringList& args) {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("MKB_DATA_DIR", path(mkbtest::sourceDir()));
        environment.insert("MKB_STORE", dir_.filePath("never-used.sqlite"));
        environment.insert("XDG_RUNTIME_DIR", dir_.path()); // the device locks of this test's own
        process.setProcessEnvironment(environment);
        process.start(QString::fromStdString(mkbtest::cliPath()), args);
    }

    static CliRun finish(QProcess& process, QString out, int timeoutMs) {
        if (!process.waitForFinished(timeoutMs)) {
            process.kill();
            process.waitForFinished();
            return {};
        }
        CliRun run;
        run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
        run.out = out + QString::fromUtf8(process.readAllStandardOutput());
        run.err = QString::fromUtf8(process.readAllStandardError());
        return run;
    }

    CliRun runMkb(const QStringList& args, int timeoutMs = 240000) {
        QProcess process;
        startMkb(process, args);
        return finish(process, {}, timeoutMs);
    }

    /// Runs mkb and, once its first counted submission is reported, kills the grader server of `device` (a child of
    /// that mkb, found by the pool's MKB_POOL_DEVICE). `killed` says whether a server was found and killed.
    CliRun runKillingServer(const QStringList& args, const std::string& device, bool& killed) {
        QProcess process;
        startMkb(process, args);
        QString out;
        killed = false;
        QElapsedTimer timer;
        timer.start();
        while (!killed && process.state() != QProcess::NotRunning && timer.elapsed() < 120000) {
            process.waitForReadyRead(200);
            out += QString::fromUtf8(process.readAllStandardOutput());
            if (!events(out, "submission").isEmpty()) {
                const pid_t server = poolServerOf(static_cast<pid_t>(process.processId()), device);
                if (mkb::signalProcess(server, SIGKILL)) {
                    killed = true;
                }
            }
        }
        return finish(process, out, 240000);
    }

    static void verifyEveryTrialFinished(const QString& store, int expected) {
        const std::vector<TrialRecord> trials = liveTrials(store);
        QCOMPARE(int(trials.size()), expected);
        for (const TrialRecord& trial : trials) {
            QVERIFY2(trial.status == TrialStatus::Finished,
                     (trial.coordinate + " is " + toString(trial.status)).c_str());
            QVERIFY2(trial.finalVerdict && trial.finalVerdict->passed, trial.coordinate.c_str());
        }
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const QString written = mkbtest::writeCpusimPair(dir_.path(), {"01_vector_add", "02_row_softmax"});
        QVERIFY2(written.isEmpty(), qPrintable(written));
        QJsonObject settings{{"solutions_dir", solutions()}};
        QVERIFY(writeText(dir_.filePath("reference.json"), QJsonDocument(settings).toJson()));
    }

    void aRunOverTwoDevicesRecordsEachVerdictsDeviceAndUsesBoth() {
        const QString store = newStore();
        const CliRun run = runMkb(runArgs(store, "p0[12]", {"--devices", "cpu:0,cpu:1"}));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        verifyEveryTrialFinished(store, 8);
        const std::multiset<std::string> devices = verdictDevices(store);
        QVERIFY(devices.size() >= 16); // a feedback submission and the final verdict of each of the 8 trials
        for (const std::string& device : devices) {
            QVERIFY2(device == "cpu:0" || device == "cpu:1", device.c_str());
        }
        QVERIFY(devices.count("cpu:0") > 0 && devices.count("cpu:1") > 0);
        QVERIFY(events(run.out, "note").isEmpty()); // no device was lost
        // Each cell was re-timed whole on one device of the run (the grader is told "cpu" for a cpu:N device).
        auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
        QVERIFY(opened);
        auto retimings = (*opened)->liveRetimings();
        QVERIFY(retimings);
        QCOMPARE(int(retimings->size()), 4);
        for (const RetimingRecord& record : *retimings) {
            QCOMPARE(record.result.device, std::string("cpu"));
        }
        QCOMPARE(events(run.out, "run_finished").front()["status"].toString(), QString("complete"));
    }

    void aKilledDeviceServerLeavesTheRotationWithOneNoteAndEveryTrialFinishes() {
        const QString store = newStore();
        bool killed = false;
        const CliRun run =
            runKillingServer(runArgs(store, "p0[12]", {"--devices", "cpu:0,cpu:1", "--no-retime"}), "cpu:0", killed);
        QVERIFY2(killed, qPrintable(run.err + run.out));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        verifyEveryTrialFinished(store, 8);
        const QList<QJsonObject> notes = events(run.out, "note");
        QCOMPARE(notes.size(), 1);
        QCOMPARE(notes.front()["device"].toString(), QString("cpu:0"));
        QVERIFY2(
            notes.front()["message"].toString().startsWith("device cpu:0 left the rotation: its grader server stopped"),
            qPrintable(notes.front()["message"].toString()));
        for (const std::string& device : verdictDevices(store)) {
            QVERIFY2(device == "cpu:0" || device == "cpu:1", device.c_str());
        }
        QVERIFY(verdictDevices(store).count("cpu:1") > 0);
    }

    void losingEveryDeviceStopsTheRunKeepingWhatFinishedAndARerunConverges() {
        const QString store = newStore();
        bool killed = false;
        const CliRun lost =
            runKillingServer(runArgs(store, "p0[12]", {"--devices", "cpu:0", "--no-retime"}), "cpu:0", killed);
        QVERIFY2(killed, qPrintable(lost.err + lost.out));
        QVERIFY2(lost.exitCode == 5, qPrintable(lost.err + lost.out)); // as for a grader failure
        QCOMPARE(events(lost.out, "note").size(), 1);
        const QList<QJsonObject> finished = events(lost.out, "run_finished");
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished.front()["status"].toString(), QString("failed"));
        QVERIFY2(finished.front()["message"].toString().contains("every grading device was lost (cpu:0: "),
                 qPrintable(finished.front()["message"].toString()));
        QVERIFY(finished.front()["message"].toString().contains("run the same command again"));
        // Nothing finished is lost, nothing unfinished is passed off as finished.
        const std::vector<TrialRecord> before = liveTrials(store);
        QVERIFY(int(before.size()) < 8 || std::any_of(before.begin(), before.end(), [](const TrialRecord& trial) {
                    return trial.status != TrialStatus::Finished;
                }));

        const CliRun again = runMkb(runArgs(store, "p0[12]", {"--devices", "cpu:0", "--no-retime"}));
        QVERIFY2(again.exitCode == 0, qPrintable(again.err + again.out));
        verifyEveryTrialFinished(store, 8);
        for (const TrialRecord& trial : before) {
            if (trial.status == TrialStatus::Finished) { // reused, not run again
                const std::vector<TrialRecord> after = liveTrials(store);
                QVERIFY(
                    std::any_of(after.begin(), after.end(), [&](const TrialRecord& t) { return t.id == trial.id; }));
            }
        }
    }

    void aPlainDeviceStillRecordsItsDevice() {
        const QString store = newStore();
        const CliRun run = runMkb(runArgs(store, "p01", {"--device", "cpu", "--no-retime"}));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        verifyEveryTrialFinished(store, 4);
        const std::multiset<std::string> devices = verdictDevices(store);
        QVERIFY(devices.size() >= 8);
        QCOMPARE(devices.count("cpu"), devices.size());
    }

    void devicesTogetherWithDeviceIsRefused() {
        const CliRun both = runMkb(runArgs(newStore(), "p01", {"--devices", "cpu:0,cpu:1", "--device", "cpu"}));
        QCOMPARE(both.exitCode, 2);
        QVERIFY2(both.err.contains("--devices and --device cannot be given together"), qPrintable(both.err));
        const CliRun bad = runMkb(runArgs(newStore(), "p01", {"--devices", "gpu7"}));
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("--devices: 'gpu7' is not a device"), qPrintable(bad.err));
        const CliRun suiteBoth = runMkb({"suite", "check", "--devices", "cpu:0", "--device", "cpu"});
        QCOMPARE(suiteBoth.exitCode, 2);
        QVERIFY2(suiteBoth.err.contains("--devices and --device cannot be given together"), qPrintable(suiteBoth.err));
        for (const QStringList& help : {QStringList{"run", "--help"}, QStringList{"suite", "check", "--help"}}) {
            const CliRun shown = runMkb(help);
            QCOMPARE(shown.exitCode, 0);
            QVERIFY2(shown.out.contains("--devices LIST"), qPrintable(shown.out));
        }
    }

    void suiteCheckOverTwoDevicesChecksEachProblemOnOneAndNamesIt() {
        const QString json = dir_.filePath("suite.json");
        const CliRun run = runMkb({"suite",
                                   "check",
                                   "--suite",
                                   path(mkbtest::sourceDir() / "tests" / "suite" / "fixtures" / "suite"),
                                   "--dsls",
                                   "cpusim",
                                   "--dsl-dir",
                                   fixtures() + "/dsls",
                                   "--devices",
                                   "cpu:0,cpu:1",
                                   "--eager-target-ms",
                                   "0",
                                   "--gradings",
                                   "2",
                                   "--problems",
                                   "checks/0[14]*",
                                   "--python",
                                   QString::fromStdString(mkbtest::testPython()),
                                   "--json",
                                   json});
        QVERIFY2(run.exitCode == 0 || run.exitCode == 1, qPrintable(run.out + run.err));
        const QJsonObject report = QJsonDocument::fromJson(readText(json)).object();
        QCOMPARE(report["device"].toString(), QString("cpu:0,cpu:1"));
        const QJsonArray problems = report["problems"].toArray();
        QCOMPARE(problems.size(), 2);
        QCOMPARE(problems[0].toObject()["name"].toString(), QString("checks/01_vector_add")); // the selection's order
        std::set<QString> used;
        for (const QJsonValue& problem : problems) {
            const QString device = problem.toObject()["device"].toString();
            QVERIFY2(device == "cpu:0" || device == "cpu:1", qPrintable(device));
            used.insert(device);
            for (const QJsonValue& solution : problem.toObject()["solutions"].toArray()) {
                const QJsonObject verdict = solution.toObject()["verdict"].toObject();
                if (!verdict.isEmpty()) {
                    QCOMPARE(verdict["device"].toString(), device); // the whole check on one device
                }
            }
        }
        QCOMPARE(int(used.size()), 2); // one thread per device, problems from one queue
    }
};

QTEST_GUILESS_MAIN(DevicesCliTest)
#include "tst_devices_cli.moc"
