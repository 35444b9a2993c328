// Tests of the Runs view's several devices: the Devices field as `mkb run --devices` (checked by core's
// parseDeviceList, refused with Slurm), a note event of the run shown as one line, and a run on the cpu:0,cpu:1 test
// devices followed to its end with verdicts graded on both, and one whose cpu:0 server is killed showing its note.
#include "support/cli_files.h"
#include "support/process_signals.h"
#include "support/store_reads.h"
#include "support/testpaths.h"

#include "core/grader_client/grader_pool.h"
#include "core/protocol/progress.h"
#include "core/store/store.h"
#include "gui/runs/run_request.h"
#include "gui/runs/run_session.h"
#include "gui/runs/run_trials_model.h"
#include "gui/runs/runs_view.h"

#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <set>

#include <sys/types.h>

using namespace mkb;
using namespace mkb::gui;

namespace {

using mkbtest::poolServerOf;
using mkbtest::qpath;
using mkbtest::verdictDevices;
using mkbtest::writeText;

constexpr int kRunTimeoutMs = 240000;

/// The value after `option` in mkb run's arguments, "" when the option is absent.
QString valueAfter(const QStringList& args, const QString& option) {
    const qsizetype at = args.indexOf(option);
    return at >= 0 && at + 1 < args.size() ? args[at + 1] : QString();
}

} // namespace

class RunsDevicesTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int storeCounter_ = 0;

    QString fixtures() const { return qpath(mkbtest::sourceDir() / "tests" / "fixtures"); }
    QString newStore() { return dir_.filePath(QString("project%1.sqlite").arg(++storeCounter_)); }

    /// The reference driver on the CPU fixture suite (cpusim ⇄ cpusimb) over the two CPU test devices.
    RunRequest twoDeviceRequest(const QString& problems) const {
        RunRequest request;
        request.model = "reference-cpu";
        request.driver = "reference";
        request.driverSettingsJson =
            QJsonDocument(QJsonObject{{"solutions_dir", dir_.filePath("solutions")}}).toJson(QJsonDocument::Compact);
        request.problems = problems;
        request.dslA = "cpusim";
        request.dslB = "cpusimb";
        request.suites = {fixtures() + "/problems"};
        request.dslDirs = {dir_.filePath("dsls")};
        request.devices = "cpu:0,cpu:1";
        request.python = QString::fromStdString(mkbtest::testPython());
        request.timingDraws = 5;
        request.concurrency = 2;
        request.wallClockSeconds = 300;
        return request;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("MKB_DATA_DIR", qpath(mkbtest::sourceDir()).toUtf8());
        qputenv("MKB_STORE", dir_.filePath("never-used.sqlite").toUtf8());
        qputenv("XDG_RUNTIME_DIR", dir_.path().toUtf8()); // the cpu:N device locks of this test's own
        QVERIFY2(!locateMkb().isEmpty(), "mkb was not found (MKB_CLI, beside the test, PATH)");
        const QString written = mkbtest::writeCpusimPair(dir_.path(), {"01_vector_add", "02_row_softmax"});
        QVERIFY2(written.isEmpty(), qPrintable(written));
    }

    void theDevicesFieldBecomesMkbRunDevicesInsteadOfDevice() {
        RunsView view;
        QVERIFY(!view.setStorePath(newStore()));
        RunRequest shown = twoDeviceRequest("p01");
        shown.device = "cuda:3"; // kept in the form, but a list of devices replaces it
        view.setRequest(shown);
        QCOMPARE(view.devicesEdit()->text(), QString("cpu:0,cpu:1"));
        const RunRequest built = view.request();
        QCOMPARE(built.devices, QString("cpu:0,cpu:1"));
        QVERIFY(built.device.isEmpty());
        QCOMPARE(runRequestProblem(built), QString());
        QVERIFY(view.startButton()->isEnabled());

        const QStringList args = mkbRunArguments(built, "store.sqlite", {});
        QCOMPARE(valueAfter(args, "--devices"), QString("cpu:0,cpu:1"));
        QVERIFY(!args.contains("--device"));
        QCOMPARE(runRequestFromArguments(args).devices, QString("cpu:0,cpu:1"));

        // An empty field grades on the one device, as before.
        view.devicesEdit()->clear();
        const QStringList single = mkbRunArguments(view.request(), "store.sqlite", {});
        QCOMPARE(valueAfter(single, "--device"), QString("cuda:3"));
        QVERIFY(!single.contains("--devices"));

        // Both given programmatically is refused rather than silently choosing one.
        RunRequest both = twoDeviceRequest("p01");
        both.device = "cpu";
        QVERIFY(runRequestProblem(both).contains("not both"));
    }

    void aBadDeviceListShowsCoresMessageAndDisablesStart() {
        RunsView view;
        QVERIFY(!view.setStorePath(newStore()));
        view.setRequest(twoDeviceRequest("p01"));
        QVERIFY(view.startButton()->isEnabled());
        for (const QString& bad : {QString("cuda:0,gpu7"), QString("cpu:0,cpu:0"), QString("cuda:0,,cuda:1")}) {
            view.devicesEdit()->setText(bad);
            const auto expected = parseDeviceList(bad.toStdString(), visibleCudaDeviceCount());
            QVERIFY2(!expected, qPrintable(bad));
            const QString message = QString::fromStdString(expected.error().message);
            QVERIFY2(view.devicesNote()->text().contains(message), qPrintable(view.devicesNote()->text()));
            QVERIFY2(!view.startButton()->isEnabled(), qPrintable(bad));
            QCOMPARE(view.startRun(), message);
            QCOMPARE(view.session()->state(), RunSession::State::Idle);
        }
        view.devicesEdit()->setText("cpu:1, cpu:0");
        QVERIFY(view.startButton()->isEnabled());
        QVERIFY(!view.devicesNote()->text().contains("not a device"));
    }

    void theSlurmExecutorDisablesTheDevicesField() {
        RunsView view;
        QVERIFY(!view.setStorePath(newStore()));
        view.setRequest(twoDeviceRequest("p01"));
        QVERIFY(view.devicesEdit()->isEnabled());
        view.findChild<QComboBox*>("runExecutorCombo")->setCurrentText("slurm");
        QVERIFY(!view.devicesEdit()->isEnabled());
        QVERIFY(!view.findChild<QPushButton*>("runAllDevicesButton")->isEnabled());
        QVERIFY2(view.devicesNote()->text().contains("Slurm"), qPrintable(view.devicesNote()->text()));
        QVERIFY(view.request().devices.isEmpty()); // a Slurm run is never handed --devices
        QVERIFY(!mkbRunArguments(view.request(), "store.sqlite", {}).contains("--devices"));

        RunRequest slurm = twoDeviceRequest("p01");
        slurm.executor = "slurm";
        slurm.sharedFolder = dir_.filePath("shared");
        QVERIFY(runRequestProblem(slurm).contains("each Slurm job holds one GPU"));

        view.findChild<QComboBox*>("runExecutorCombo")->setCurrentText("local");
        QVERIFY(view.devicesEdit()->isEnabled());
        QCOMPARE(view.request().devices, QString("cpu:0,cpu:1"));
    }

    void aNoteEventOfTheRunShowsAsOneLine() {
        // The last run of a project, replayed from its progress file through core's parser: a lost device's note.
        const QString store = newStore();
        const QString folder = runFilesFolder(store);
        ProgressEvent note;
        note.kind = ProgressEventKind::Note;
        note.coordinate = "cpu:1";
        note.message = "device cpu:1 left the rotation: its grader server stopped (test); its gradings go to cpu:0";
        ProgressEvent finished;
        finished.kind = ProgressEventKind::RunFinished;
        finished.status = "complete";
        const QByteArray stream =
            QByteArray::fromStdString(progressEventJson(note) + "\n" + progressEventJson(finished) + "\n");
        QVERIFY(writeText(folder + "/run-20261202-010000-000.jsonl", stream));
        QVERIFY(writeText(folder + "/run-20261202-010000-000.log", {}));
        const QStringList args = mkbRunArguments(twoDeviceRequest("p01"), store, {});
        const QJsonObject record{{"pid", 0},
                                 {"program", locateMkb()},
                                 {"arguments", QJsonArray::fromStringList(args)},
                                 {"progress", "run-20261202-010000-000.jsonl"},
                                 {"log", "run-20261202-010000-000.log"},
                                 {"started_at", "2026-12-02T01:00:00Z"}};
        QVERIFY(writeText(folder + "/run-20261202-010000-000.json", QJsonDocument(record).toJson()));

        RunsView view;
        QVERIFY(!view.setStorePath(store));
        QTRY_VERIFY_WITH_TIMEOUT(view.session()->state() == RunSession::State::Ended, 5000);
        const QString expected = QString::fromStdString(note.message);
        QVERIFY(view.notesLabel()->isVisibleTo(&view));
        QCOMPARE(view.notesLabel()->text(), expected);
        QCOMPARE(view.logPane()->toPlainText().count(expected), 1);
        QCOMPARE(view.devicesEdit()->text(), QString("cpu:0,cpu:1")); // the form shows the replayed run's devices

        // Another project has no such note.
        QVERIFY(!view.setStorePath(newStore()));
        QVERIFY(!view.notesLabel()->isVisibleTo(&view));
        QVERIFY(view.notesLabel()->text().isEmpty());
    }

    void aRunOnTwoCpuDevicesGradesOnBoth() {
        const QString store = newStore();
        RunsView view;
        view.session()->setPollIntervalMs(50);
        QVERIFY(!view.setStorePath(store));
        view.setRequest(twoDeviceRequest("p01"));
        QSignalSpy ended(&view, &RunsView::runEnded);
        QCOMPARE(view.startRun(), QString());
        QCOMPARE(valueAfter(view.session()->arguments(), "--devices"), QString("cpu:0,cpu:1"));
        QVERIFY2(ended.wait(kRunTimeoutMs), qPrintable(view.logPane()->toPlainText()));
        QVERIFY2(ended.front().at(0).toInt() == 0, qPrintable(view.logPane()->toPlainText()));
        QCOMPARE(ended.front().at(1).toString(), QString("complete"));
        QCOMPARE(view.trialsModel()->countInState("finished"), 4); // p01's two solos and two skill arms
        QVERIFY(!view.notesLabel()->isVisibleTo(&view));           // no device was lost

        const std::multiset<std::string> devices = verdictDevices(store);
        QVERIFY(devices.size() >= 8); // a feedback submission and the final verdict of each trial
        for (const std::string& device : devices) {
            QVERIFY2(device == "cpu:0" || device == "cpu:1", device.c_str());
        }
        QVERIFY2(devices.count("cpu:0") > 0 && devices.count("cpu:1") > 0, "both devices graded");
        QTRY_VERIFY_WITH_TIMEOUT(!findLiveRun(store).has_value(), 30000);
    }

    void aDeviceLostDuringTheRunShowsItsNoteAndTheRunCompletes() {
        const QString store = newStore();
        RunsView view;
        view.session()->setPollIntervalMs(50);
        QVERIFY(!view.setStorePath(store));
        view.setRequest(twoDeviceRequest("p0[12]"));
        QSignalSpy ended(&view, &RunsView::runEnded);
        bool killed = false;
        // Once the first counted submission is reported, cpu:0's grader server is killed, as a device that fails.
        auto connection = connect(view.session(), &RunSession::runEvent, this, [&](const ProgressEvent& event) {
            if (!killed && event.kind == ProgressEventKind::Submission) {
                const pid_t server = poolServerOf(static_cast<pid_t>(view.session()->pid()), "cpu:0");
                killed = mkb::signalProcess(server, SIGKILL);
            }
        });
        QCOMPARE(view.startRun(), QString());
        QVERIFY2(ended.wait(kRunTimeoutMs), qPrintable(view.logPane()->toPlainText()));
        disconnect(connection);
        QVERIFY2(killed, qPrintable(view.logPane()->toPlainText()));
        QVERIFY2(ended.front().at(0).toInt() == 0, qPrintable(view.logPane()->toPlainText()));
        QCOMPARE(view.trialsModel()->countInState("finished"), 8);

        // One line, under the status and in the log, from core's parser of the run's own note event.
        QVERIFY(view.notesLabel()->isVisibleTo(&view));
        const QString note = view.notesLabel()->text();
        QVERIFY2(note.startsWith("device cpu:0 left the rotation: ") && !note.contains('\n'), qPrintable(note));
        QCOMPARE(view.logPane()->toPlainText().count("left the rotation"), 1);
        QVERIFY(verdictDevices(store).count("cpu:1") > 0);
        QTRY_VERIFY_WITH_TIMEOUT(!findLiveRun(store).has_value(), 30000);
    }
};

QTEST_MAIN(RunsDevicesTest)
#include "tst_runs_devices.moc"
