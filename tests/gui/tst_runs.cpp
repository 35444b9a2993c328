// Tests of the Runs view: the request as mkb run arguments, progress lines read back from core's own writer, the
// live trial model, and end to end with the reference driver on the CPU fixture suite: a run followed to its end,
// cancelled and resumed, and reattached after its view was closed (through its progress file, and through the store
// for a run started outside the workbench, held running by a gated command agent until the view attached).
#include "support/cli_files.h"
#include "support/testpaths.h"

#include "core/protocol/progress.h"
#include "core/protocol/run_options.h"
#include "core/store/store.h"
#include "core/vocabulary/grade_settings.h"
#include "gui/common/table_model.h"
#include "gui/runs/run_counts_text.h"
#include "gui/runs/run_request.h"
#include "gui/runs/run_session.h"
#include "gui/runs/run_trials_model.h"
#include "gui/runs/runs_view.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBrush>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <set>

using namespace mkb;
using namespace mkb::gui;

namespace {

using mkbtest::qpath;
using mkbtest::readText;
using mkbtest::writeText;

constexpr int kRunTimeoutMs = 300000;

std::vector<TrialRecord> storedTrials(const QString& store) {
    auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
    if (!opened) {
        return {};
    }
    auto trials = (*opened)->loadTrials();
    return trials ? *trials : std::vector<TrialRecord>{};
}

/// Feeds a recorded `mkb run --progress json` stream (tests/fixtures/progress) to the model, line by line through
/// core's one parser; returns how many lines were events (the recording's comment line is not one).
int feedStream(RunTrialsModel& model, const QString& name) {
    int events = 0;
    const QByteArray stream = readText(qpath(mkbtest::sourceDir() / "tests" / "fixtures" / "progress") + "/" + name);
    for (const QByteArray& line : stream.split('\n')) {
        if (auto event = parseProgressEventJson(std::string_view(line.constData(), size_t(line.size())))) {
            model.applyEvent(*event);
            ++events;
        }
    }
    return events;
}

ProgressEvent parsed(const ProgressEvent& event) {
    const auto result = parseProgressEventJson(progressEventJson(event));
    if (!result) {
        qFatal("a progress line of core's own writer did not parse");
    }
    return *result;
}

} // namespace

class RunsTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int storeCounter_ = 0;

    QString fixtures() const { return qpath(mkbtest::sourceDir() / "tests" / "fixtures"); }
    QString dslDir() const { return dir_.filePath("dsls"); }
    QString solutions() const { return dir_.filePath("solutions"); }
    QString newStore() { return dir_.filePath(QString("project%1.sqlite").arg(++storeCounter_)); }

    /// The reference driver on the CPU fixture suite (cpusim ⇄ cpusimb), like the CLI's own run tests.
    RunRequest fixtureRequest(const QString& problems, int concurrency) const {
        RunRequest request;
        request.model = "reference-cpu";
        request.driver = "reference";
        request.driverSettingsJson =
            QJsonDocument(QJsonObject{{"solutions_dir", solutions()}}).toJson(QJsonDocument::Compact);
        request.problems = problems;
        request.dslA = "cpusim";
        request.dslB = "cpusimb";
        request.suites = {fixtures() + "/problems"};
        request.dslDirs = {dslDir()};
        request.device = "cpu";
        request.python = QString::fromStdString(mkbtest::testPython());
        request.timingDraws = 5;
        request.concurrency = concurrency;
        request.wallClockSeconds = 300;
        return request;
    }

    /// Waits for the view's run to end and returns (exit code, status).
    static std::pair<int, QString> waitForEnd(RunsView& view) {
        QSignalSpy ended(&view, &RunsView::runEnded);
        if (view.session()->state() == RunSession::State::Following && !ended.wait(kRunTimeoutMs)) {
            return {-100, QString("timed out; log:\n") + view.logPane()->toPlainText()};
        }
        if (ended.isEmpty()) {
            return {view.session()->exitCode(), QString("already ended")};
        }
        return {ended.front().at(0).toInt(), ended.front().at(1).toString()};
    }

    static bool waitForTrialEvent(RunSession* session, ProgressEventKind kind, int timeoutMs = kRunTimeoutMs) {
        bool seen = false;
        auto connection = QObject::connect(session, &RunSession::runEvent,
                                           [&](const ProgressEvent& event) { seen = seen || event.kind == kind; });
        (void)QTest::qWaitFor([&] { return seen || session->state() != RunSession::State::Following; }, timeoutMs);
        QObject::disconnect(connection);
        return seen;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("MKB_DATA_DIR", qpath(mkbtest::sourceDir()).toUtf8());
        qputenv("MKB_STORE", dir_.filePath("never-used.sqlite").toUtf8());
        QVERIFY2(!locateMkb().isEmpty(), "mkb was not found (MKB_CLI, beside the test, PATH)");
        const QString written =
            mkbtest::writeCpusimPair(dir_.path(), {"01_vector_add", "02_row_softmax", "03_argmax_rows"});
        QVERIFY2(written.isEmpty(), qPrintable(written));
    }

    void requestBecomesMkbRunArguments() {
        RunRequest request = fixtureRequest("p0[12]", 1);
        request.replicates = 3;
        request.rerunStale = true;
        QCOMPARE(runRequestProblem(request), QString());
        const QStringList args = mkbRunArguments(request, "/p/store.sqlite", "/p/driver.json");
        QCOMPARE(args.mid(0, 7), QStringList({"run", "--model", "reference-cpu", "--driver", "reference",
                                              "--driver-config", "/p/driver.json"}));
        auto valueOf = [&](const QString& option) {
            const int at = int(args.indexOf(option));
            return at >= 0 && at + 1 < args.size() ? args[at + 1] : QString("<missing>");
        };
        QCOMPARE(valueOf("--problems"), QString("p0[12]"));
        QCOMPARE(valueOf("--dsls"), QString("cpusim,cpusimb"));
        QCOMPARE(valueOf("--replicates"), QString("3"));
        QCOMPARE(valueOf("--device"), QString("cpu"));
        QCOMPARE(valueOf("--timing-draws"), QString("5"));
        QCOMPARE(valueOf("--wall-clock"), QString("300"));
        QCOMPARE(valueOf("--submissions"), QString("10"));
        QCOMPARE(valueOf("--store"), QString("/p/store.sqlite"));
        QCOMPARE(valueOf("--progress"), QString("json"));
        QVERIFY(args.contains("--rerun-stale"));
        QCOMPARE(int(args.count("--suite")), 1);

        // Without driver settings there is no --driver-config; an empty device leaves mkb's default.
        request.device.clear();
        QVERIFY(!mkbRunArguments(request, "/p/s.sqlite", {}).contains("--driver-config"));
        QVERIFY(!mkbRunArguments(request, "/p/s.sqlite", {}).contains("--device"));

        RunRequest bad = request;
        bad.dslB = bad.dslA;
        QVERIFY(runRequestProblem(bad).contains("two different DSLs"));
        bad = request;
        bad.model.clear();
        QVERIFY(runRequestProblem(bad).contains("--model"));
        bad = request;
        bad.driverSettingsJson = "[1, 2]";
        QVERIFY(runRequestProblem(bad).contains("not a JSON object"));

        // Arguments read back into a request give the same arguments.
        const RunRequest back = runRequestFromArguments(mkbRunArguments(request, "/p/s.sqlite", {}));
        QCOMPARE(mkbRunArguments(back, "/p/s.sqlite", {}), mkbRunArguments(request, "/p/s.sqlite", {}));
    }

    void slurmRequestBecomesExecutorOptions() {
        RunRequest request = fixtureRequest("p01", 1);
        QVERIFY(!mkbRunArguments(request, "/p/s.sqlite", {}).contains("--executor")); // local: as before
        request.executor = "slurm";
        QVERIFY(runRequestProblem(request).contains("--shared"));
        request.sharedFolder = "/nfs/mkb";
        request.partition = "h200";
        QCOMPARE(runRequestProblem(request), QString());
        const QStringList args = mkbRunArguments(request, "/p/s.sqlite", {});
        const int at = int(args.indexOf("--executor"));
        QVERIFY(at > 0);
        QCOMPARE(args.mid(at, 6), QStringList({"--executor", "slurm", "--shared", "/nfs/mkb", "--partition", "h200"}));
        const RunRequest back = runRequestFromArguments(args);
        QCOMPARE(back.executor, QString("slurm"));
        QCOMPARE(back.sharedFolder, QString("/nfs/mkb"));
        QCOMPARE(back.partition, QString("h200"));
        request.partition.clear(); // the cluster's default partition: no --partition
        QVERIFY(!mkbRunArguments(request, "/p/s.sqlite", {}).contains("--partition"));
        request.executor = "kubernetes";
        QVERIFY(runRequestProblem(request).contains("local or slurm"));

        // The form carries the executor, partition and shared folder both ways.
        RunsView view;
        request.executor = "slurm";
        request.partition = "h200";
        view.setRequest(request);
        QCOMPARE(view.request().executor, QString("slurm"));
        QCOMPARE(view.request().partition, QString("h200"));
        QCOMPARE(view.request().sharedFolder, QString("/nfs/mkb"));
        view.setRequest(fixtureRequest("p01", 1));
        QCOMPARE(view.request().executor, QString("local"));
    }

    void boundaryTravelsFromTheFormToMkbRunAndBack() {
        RunRequest request = fixtureRequest("p01", 1);
        auto valueOf = [](const QStringList& args, const QString& option) {
            const int at = int(args.indexOf(option));
            return at >= 0 && at + 1 < args.size() ? args[at + 1] : QString("<missing>");
        };
        QCOMPARE(valueOf(mkbRunArguments(request, "/p/s.sqlite", {}), "--boundary"), QString("mkb")); // the default
        request.boundary = "strict";
        QCOMPARE(runRequestProblem(request), QString());
        const QStringList args = mkbRunArguments(request, "/p/s.sqlite", {});
        QCOMPARE(valueOf(args, "--boundary"), QString("strict"));
        QCOMPARE(runRequestFromArguments(args).boundary, QString("strict"));
        request.boundary = "loose";
        QVERIFY(runRequestProblem(request).contains("mkb or strict"));

        RunsView view;
        request.boundary = "strict";
        view.setRequest(request);
        QCOMPARE(view.request().boundary, QString("strict"));
        auto* combo = view.findChild<QComboBox*>("runBoundaryCombo");
        QVERIFY(combo);
        QCOMPARE(combo->currentText(), QString("strict"));
        combo->setCurrentText("mkb");
        QCOMPARE(valueOf(mkbRunArguments(view.request(), "/p/s.sqlite", {}), "--boundary"), QString("mkb"));
    }

    void everyRequestFieldRoundTripsThroughMkbRunArguments() {
        // Each field away from mkb run's declared default: request -> arguments -> request is the identity.
        RunRequest request;
        request.model = "m";
        request.driver = "command";
        request.problems = "p0[1-3]";
        request.dslA = "triton";
        request.dslB = "cuda";
        request.replicates = runOptionDefaults().replicates + 2;
        request.suites = {"/s/one", "/s/two words"};
        request.dslDirs = {"/d"};
        request.device = "cuda:3";
        request.python = "/opt/py/bin/python3";
        request.wallClockSeconds = runOptionDefaults().wallClockSeconds + 0.5;
        request.submissions = runOptionDefaults().submissions + 1;
        request.maxKernelBytes = runOptionDefaults().maxKernelBytes - 1;
        request.concurrency = runOptionDefaults().concurrency + 1;
        request.gradeTimeoutSeconds = runOptionDefaults().gradeTimeoutSeconds * 2;
        request.timingDraws = runOptionDefaults().timingDraws + 7;
        request.rerunStale = true;
        request.boundary = "strict";
        QVERIFY(runRequestFromArguments(mkbRunArguments(request, "/p/s.sqlite", {})) == request);
        request.device.clear();
        request.devices = "cuda:0,cuda:2";
        QVERIFY(runRequestFromArguments(mkbRunArguments(request, "/p/s.sqlite", {})) == request);
        request.devices.clear();
        request.executor = "slurm";
        request.sharedFolder = "/nfs/mkb";
        request.partition = "h200";
        QVERIFY(runRequestFromArguments(mkbRunArguments(request, "/p/s.sqlite", {})) == request);
        // and the arguments are mkb run's own: its parser reads the same options back
        QStringList args = mkbRunArguments(request, "/p/s.sqlite", {});
        args.removeFirst();
        std::vector<std::string> words;
        for (const QString& arg : args) {
            words.push_back(arg.toStdString());
        }
        auto parsed = parseRunOptions(words);
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
        QVERIFY(runRequestOf(*parsed) == request);
        QCOMPARE(parsed->store, std::string("/p/s.sqlite"));
    }

    void theFormStartsAtTheDeclaredDefaultsAndRanges() {
        RunsView view;
        const RunRequest shown = view.request();
        const RunOptions& defaults = runOptionDefaults();
        QCOMPARE(shown.replicates, defaults.replicates);
        QCOMPARE(shown.wallClockSeconds, defaults.wallClockSeconds);
        QCOMPARE(shown.submissions, defaults.submissions);
        QCOMPARE(shown.maxKernelBytes, defaults.maxKernelBytes);
        QCOMPARE(shown.concurrency, defaults.concurrency);
        QCOMPARE(shown.gradeTimeoutSeconds, defaults.gradeTimeoutSeconds);
        QCOMPARE(shown.timingDraws, defaults.timingDraws);
        QCOMPARE(shown.boundary.toStdString(), defaults.boundary);
        QCOMPARE(shown.executor.toStdString(), defaults.executor);
        QCOMPARE(shown.timingDraws, GradeSettings{}.timingDraws);
        auto* draws = view.findChild<QSpinBox*>("runTimingDrawsSpin");
        QVERIFY(draws);
        QCOMPARE(draws->minimum(), GradeSettings{}.recheckDraws); // fewer cannot grade, as mkb run says
        auto* replicates = view.findChild<QSpinBox*>("runReplicatesSpin");
        QVERIFY(replicates);
        QCOMPARE(double(replicates->maximum()), findOption(runOptionDeclarations(), "replicates")->maximum);
    }

    void recordedCommandLineReadsBackIntoItsWords() {
        // a run found in the store is followed with the arguments of its recorded (shell-quoted) command line
        QCOMPARE(argumentsFromCommandLine("mkb run --agent-command 'codex exec {prompt}' --store '/tmp/a b.mkb'"),
                 (QStringList{"run", "--agent-command", "codex exec {prompt}", "--store", "/tmp/a b.mkb"}));
        QCOMPARE(argumentsFromCommandLine("/usr/bin/mkb run --problems p0*"),
                 (QStringList{"run", "--problems", "p0*"}));
    }

    void progressLinesOfCoresWriterParse() {
        Plan plan;
        ProgressEvent planEvent;
        planEvent.kind = ProgressEventKind::Plan;
        planEvent.plan = &plan;
        planEvent.counts.total = 4;
        QCOMPARE(parsed(planEvent).kind, ProgressEventKind::Plan);
        QCOMPARE(parsed(planEvent).counts.total, 4);

        ProgressEvent submission;
        submission.kind = ProgressEventKind::Submission;
        submission.coordinate = "p01_r1_solo_cpusim";
        submission.trialId = 7;
        submission.submissionIndex = 2;
        submission.counted = true;
        submission.passed = true;
        submission.speedup = 1.5;
        submission.message = "passed";
        const ProgressEvent read = parsed(submission);
        QCOMPARE(read.kind, ProgressEventKind::Submission);
        QCOMPARE(read.coordinate, std::string("p01_r1_solo_cpusim"));
        QCOMPARE(read.trialId, std::int64_t(7));
        QCOMPARE(read.submissionIndex, 2);
        QVERIFY(read.counted);
        QCOMPARE(read.passed.value_or(false), true);
        QCOMPARE(read.speedup.value_or(0), 1.5);

        ProgressEvent finished;
        finished.kind = ProgressEventKind::RunFinished;
        finished.status = "interrupted";
        finished.exitCode = 130;
        finished.counts.elapsedSeconds = 75;
        finished.counts.etaSeconds = 3700;
        const ProgressEvent end = parsed(finished);
        QCOMPARE(end.status, std::string("interrupted"));
        QCOMPARE(end.exitCode, 130);
        QVERIFY(!end.passed.has_value());
        QVERIFY(describeCounts(end.counts).contains("01:15 elapsed"));
        QVERIFY(describeCounts(end.counts).contains("ETA 1:01:40"));

        ProgressEvent retimed;
        retimed.kind = ProgressEventKind::Retimed;
        retimed.coordinate = "p01_r1 solo_cpusim->skill";
        retimed.status = "converged";
        retimed.ratio = 1.25;
        retimed.rounds = 3;
        const ProgressEvent retimedRead = parsed(retimed);
        QCOMPARE(retimedRead.coordinate, retimed.coordinate);
        QCOMPARE(retimedRead.ratio.value_or(0), 1.25);
        QCOMPARE(retimedRead.rounds, 3);

        QVERIFY(!parseProgressEventJson("mkb: something on stdout").has_value());
        QVERIFY(!parseProgressEventJson("{\"event\": \"unknown\"}").has_value());
        QVERIFY(!parseProgressEventJson("{\"event\": \"plan\"").has_value());
    }

    // Every table shares one sort rule: a missing number sorts last, ascending or descending.
    void missingSpeedupSortsLastInBothDirections() {
        RunTrialsModel model;
        ProgressEvent plan;
        plan.kind = ProgressEventKind::Plan;
        plan.planned = {{"p01_r1_solo_a", "p01", "solo_a", "run", ""},
                        {"p02_r1_solo_a", "p02", "solo_a", "run", ""},
                        {"p03_r1_solo_a", "p03", "solo_a", "run", ""}};
        model.applyEvent(plan);
        for (const auto& [coordinate, speedup] : {std::pair{"p01_r1_solo_a", 2.0}, std::pair{"p03_r1_solo_a", 0.5}}) {
            ProgressEvent finished;
            finished.kind = ProgressEventKind::TrialFinished;
            finished.coordinate = coordinate;
            finished.passed = true;
            finished.speedup = speedup;
            model.applyEvent(finished);
        }
        TableSortProxy sorted;
        sorted.setSourceModel(&model);
        auto coordinates = [&sorted] {
            QStringList out;
            for (int row = 0; row < sorted.rowCount(); ++row) {
                out << sorted.index(row, RunTrialsModel::CoordinateColumn).data().toString();
            }
            return out;
        };
        sorted.sort(RunTrialsModel::SpeedupColumn, Qt::AscendingOrder);
        QCOMPARE(coordinates(), (QStringList{"p03_r1_solo_a", "p01_r1_solo_a", "p02_r1_solo_a"}));
        sorted.sort(RunTrialsModel::SpeedupColumn, Qt::DescendingOrder);
        QCOMPARE(coordinates(), (QStringList{"p01_r1_solo_a", "p03_r1_solo_a", "p02_r1_solo_a"}));
    }

    void trialModelFollowsEvents() {
        RunTrialsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        ProgressEvent plan;
        plan.kind = ProgressEventKind::Plan;
        plan.planned = {{"p01_r1_solo_a", "p01", "solo_a", "run", "no record"},
                        {"p01_r1_solo_b", "p01", "solo_b", "reuse", "finished"},
                        {"p01_r1_a2b_skill", "p01", "a2b_skill", "run", "no record"}};
        model.applyEvent(plan);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.rowFor("p01_r1_solo_b")->state, QString("reused"));

        ProgressEvent started;
        started.kind = ProgressEventKind::TrialStarted;
        started.coordinate = "p01_r1_solo_a";
        started.trialId = 11;
        model.applyEvent(started);
        QCOMPARE(model.rowFor("p01_r1_solo_a")->state, QString("running"));
        QCOMPARE(model.index(0, RunTrialsModel::TrialColumn).data().toLongLong(), qlonglong(11));

        ProgressEvent submission = started;
        submission.kind = ProgressEventKind::Submission;
        submission.submissionIndex = 3;
        submission.passed = false;
        model.applyEvent(submission);
        QCOMPARE(model.index(0, RunTrialsModel::SubmissionsColumn).data().toInt(), 3);
        QCOMPARE(model.index(0, RunTrialsModel::PassedColumn).data().toString(), QString("failed"));

        ProgressEvent finished = started;
        finished.kind = ProgressEventKind::TrialFinished;
        finished.status = "finished";
        finished.passed = true;
        finished.speedup = 2.25;
        model.applyEvent(finished);
        QCOMPARE(model.index(0, RunTrialsModel::StateColumn).data().toString(), QString("finished"));
        QCOMPARE(model.index(0, RunTrialsModel::SpeedupColumn).data().toString(), QString("2.25×"));

        // A trial the plan did not list (a newer mkb, a reattached run) gets its own row.
        ProgressEvent stray = started;
        stray.coordinate = "p02_r1_solo_a";
        model.applyEvent(stray);
        QCOMPARE(model.rowCount(), 4);

        // The store's view: a trial moves to its recorded status.
        TrialRecord record;
        record.id = 12;
        record.coordinate = "p01_r1_a2b_skill";
        record.status = TrialStatus::InfrastructureError;
        record.error = "grader crashed";
        model.applyStoreTrials({record}, {{12, 4}});
        QCOMPARE(model.rowFor("p01_r1_a2b_skill")->state, QString("failed"));
        QCOMPARE(model.rowFor("p01_r1_a2b_skill")->submissions, 4);
        QCOMPARE(model.countInState("failed"), 1);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void slurmEventStreamFillsTheJobColumns() {
        RunTrialsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(feedStream(model, "slurm_run.jsonl") > 10);
        QVERIFY(model.hasJobs());
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.headerData(RunTrialsModel::JobColumn, Qt::Horizontal).toString(), QString("Job"));
        QCOMPARE(model.headerData(RunTrialsModel::JobStateColumn, Qt::Horizontal).toString(), QString("Job state"));
        auto cell = [&](const QString& coordinate, int column) {
            for (int row = 0; row < model.rowCount(); ++row) {
                if (model.index(row, RunTrialsModel::CoordinateColumn).data().toString() == coordinate) {
                    return model.index(row, column).data().toString();
                }
            }
            return QString("<no row>");
        };
        // The solos went out as array 1, each skill arm on its own once its source was merged (arrays 3 and 4).
        QCOMPARE(cell("p01_r1_solo_cpusim", RunTrialsModel::JobColumn), QString("1_0"));
        QCOMPARE(cell("p01_r1_solo_cpusimb", RunTrialsModel::JobColumn), QString("1_1"));
        QCOMPARE(cell("p01_r1_cpusim2cpusimb_skill", RunTrialsModel::JobColumn), QString("3_0"));
        QCOMPARE(cell("p01_r1_cpusimb2cpusim_skill", RunTrialsModel::JobColumn), QString("4_0"));
        for (int row = 0; row < model.rowCount(); ++row) {
            QCOMPARE(model.index(row, RunTrialsModel::StateColumn).data().toString(), QString("finished"));
            QCOMPARE(model.index(row, RunTrialsModel::JobStateColumn).data().toString(), QString("COMPLETED"));
        }
        // A job that ended badly is shown in red; the job ids sort by array, then task, as numbers.
        ProgressEvent cancelled;
        cancelled.kind = ProgressEventKind::JobState;
        cancelled.coordinate = "p01_r1_solo_cpusim";
        cancelled.jobId = "10_0";
        cancelled.jobState = "CANCELLED";
        model.applyEvent(parsed(cancelled));
        QCOMPARE(cell("p01_r1_solo_cpusim", RunTrialsModel::JobColumn), QString("10_0"));
        QCOMPARE(cell("p01_r1_solo_cpusim", RunTrialsModel::StateColumn), QString("finished")); // the trial's own
        QCOMPARE(model.index(0, RunTrialsModel::JobStateColumn).data(Qt::ForegroundRole).value<QBrush>().color(),
                 QColor(0xc0, 0x39, 0x2b));
        TableSortProxy sorted;
        sorted.setSourceModel(&model);
        sorted.sort(RunTrialsModel::JobColumn, Qt::AscendingOrder); // as text, "10_0" would come first
        QCOMPARE(sorted.index(0, RunTrialsModel::JobColumn).data().toString(), QString("1_1"));
        QCOMPARE(sorted.index(3, RunTrialsModel::JobColumn).data().toString(), QString("10_0"));

        // A local run's stream names no job: the model says so and the cells stay empty.
        RunTrialsModel local;
        QAbstractItemModelTester localTester(&local, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(feedStream(local, "local_run.jsonl"), 14); // every line but the comment
        QVERIFY(!local.hasJobs());
        for (int row = 0; row < local.rowCount(); ++row) {
            QCOMPARE(local.index(row, RunTrialsModel::JobColumn).data().toString(), QString());
            QCOMPARE(local.index(row, RunTrialsModel::JobStateColumn).data().toString(), QString());
        }
    }

    void jobColumnsShowForASlurmRunOnly() {
        RunsView view;
        QTableView* table = view.trialsTable();
        QVERIFY(table->isColumnHidden(RunTrialsModel::JobColumn));
        QVERIFY(table->isColumnHidden(RunTrialsModel::JobStateColumn));
        ProgressEvent started;
        started.kind = ProgressEventKind::TrialStarted;
        started.coordinate = "p01_r1_solo_cpusim";
        started.trialId = 4;
        emit view.session()->runEvent(parsed(started)); // a local run's event
        QVERIFY(table->isColumnHidden(RunTrialsModel::JobColumn));
        started.jobId = "12_0";
        started.jobState = "RUNNING";
        emit view.session()->runEvent(parsed(started));
        QVERIFY(!table->isColumnHidden(RunTrialsModel::JobColumn));
        QVERIFY(!table->isColumnHidden(RunTrialsModel::JobStateColumn));
        QCOMPARE(view.trialsModel()->rowFor("p01_r1_solo_cpusim")->jobState, QString("RUNNING"));
        // A layout saved while a Slurm run showed them does not show them in a view without one.
        RunsView restored;
        QVERIFY(restored.restoreLayout(view.saveLayout()));
        QVERIFY(restored.trialsTable()->isColumnHidden(RunTrialsModel::JobColumn));
        QVERIFY(restored.trialsTable()->isColumnHidden(RunTrialsModel::JobStateColumn));
    }

    void startingWithoutAProjectOrWithABadFormSaysWhy() {
        RunsView view;
        QVERIFY(!view.startButton()->isEnabled());
        view.setRequest(fixtureRequest("p01", 1));
        QVERIFY(view.startRun().contains("open a project first"));
        QVERIFY(!view.setStorePath(newStore()));
        QVERIFY(view.startButton()->isEnabled());
        RunRequest bad = fixtureRequest("p01", 1);
        bad.problems.clear();
        view.setRequest(bad);
        const QString problem = view.startRun();
        QVERIFY(problem.contains("--problems"));
        QVERIFY(view.statusLabel()->text().contains(problem));
        QCOMPARE(view.session()->state(), RunSession::State::Idle);
    }

    void splitterProportionsAreRestoredBeforeTheViewIsShown() {
        QByteArray saved;
        QList<int> shownSizes;
        {
            RunsView view;
            view.resize(1000, 700);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            auto* splitter = view.findChild<QSplitter*>();
            QVERIFY(splitter && splitter->count() == 2);
            const int total = splitter->sizes()[0] + splitter->sizes()[1];
            splitter->setSizes({total / 2, total - total / 2});
            shownSizes = splitter->sizes();
            saved = view.saveLayout();
        }
        RunsView restored; // restored hidden, as the window does at start
        QVERIFY(restored.restoreLayout(saved));
        restored.resize(1000, 700);
        restored.show();
        QVERIFY(QTest::qWaitForWindowExposed(&restored));
        QApplication::processEvents();
        const QList<int> sizes = restored.findChild<QSplitter*>()->sizes();
        QVERIFY2(sizes.size() == 2 && std::abs(sizes[0] - shownSizes[0]) <= 2,
                 qPrintable(QString("%1 : %2, saved %3 : %4")
                                .arg(sizes.value(0))
                                .arg(sizes.value(1))
                                .arg(shownSizes.value(0))
                                .arg(shownSizes.value(1))));
        QVERIFY(!restored.restoreLayout("not a layout"));
    }

    void referenceRunIsFollowedToItsEnd() {
        const QString store = newStore();
        RunsView view;
        view.session()->setPollIntervalMs(50);
        QAbstractItemModelTester tester(view.trialsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!view.setStorePath(store));
        view.setRequest(fixtureRequest("p0[12]", 2));
        QCOMPARE(view.startRun(), QString());
        QVERIFY(view.cancelButton()->isEnabled());
        QVERIFY(!view.startButton()->isEnabled());
        const auto [exitCode, status] = waitForEnd(view);
        QVERIFY2(exitCode == 0, qPrintable(status + "\n" + view.logPane()->toPlainText()));
        QCOMPARE(status, QString("complete"));

        // The table holds the 8 planned trials (2 problems × 2 solos + 2 skill arms), every one finished and passed.
        RunTrialsModel* model = view.trialsModel();
        QCOMPARE(model->rowCount(), 8);
        for (const RunTrialRow& row : model->rows()) {
            QVERIFY2(row.state == "finished", qPrintable(row.coordinate + " is " + row.state));
            QVERIFY2(row.passed.value_or(false), qPrintable(row.coordinate));
            QVERIFY(row.trialId > 0);
        }
        QVERIFY(model->rowFor("p01_r1_cpusim2cpusimb_skill"));
        QVERIFY(view.statusLabel()->text().contains("complete"));
        QVERIFY(view.logPane()->toPlainText().contains("$ mkb run --model reference-cpu"));
        QVERIFY(view.resumeButton()->isEnabled());

        // What the table showed is what the store holds.
        const std::vector<TrialRecord> trials = storedTrials(store);
        QCOMPARE(int(trials.size()), 8);
        for (const TrialRecord& trial : trials) {
            const RunTrialRow* row = model->rowFor(QString::fromStdString(trial.coordinate));
            QVERIFY(row);
            QCOMPARE(row->trialId, qint64(trial.id));
        }
        // The run's files lie beside the store: the sidecar names the process and the progress ends with run_finished.
        const QDir runs(runFilesFolder(store));
        QCOMPARE(runs.entryList({"run-*.jsonl"}).size(), 1);
        const QByteArray progress = readText(runs.filePath(runs.entryList({"run-*.jsonl"}).front()));
        QVERIFY(progress.trimmed().split('\n').last().contains("\"run_finished\""));
        // mkb exits right after its last line (the grader shuts down first).
        QTRY_VERIFY_WITH_TIMEOUT(!findLiveRun(store).has_value(), 30000);

        // Opening the project again shows that last run, replayed from its file, without announcing its end anew.
        RunsView reopened;
        QSignalSpy endedAgain(&reopened, &RunsView::runEnded);
        QVERIFY(!reopened.setStorePath(store));
        QCOMPARE(reopened.trialsModel()->rowCount(), 8);
        QCOMPARE(reopened.trialsModel()->countInState("finished"), 8);
        QVERIFY2(reopened.statusLabel()->text().startsWith("Last run in this project"),
                 qPrintable(reopened.statusLabel()->text()));
        QVERIFY(reopened.resumeButton()->isEnabled());
        QVERIFY(endedAgain.isEmpty());
    }

    void cancelThenResumeCompletesTheRun() {
        const QString store = newStore();
        RunsView view;
        view.session()->setPollIntervalMs(50);
        view.setStorePath(store);
        view.setRequest(fixtureRequest("p0[1-3]", 1));
        QCOMPARE(view.startRun(), QString());
        QVERIFY(waitForTrialEvent(view.session(), ProgressEventKind::TrialFinished));
        QVERIFY(view.cancelRun());
        const auto [exitCode, status] = waitForEnd(view);
        QVERIFY2(exitCode == 130,
                 qPrintable(QString("%1 %2\n%3").arg(exitCode).arg(status, view.logPane()->toPlainText())));
        QCOMPARE(status, QString("interrupted"));
        const int finishedBefore = view.trialsModel()->countInState("finished");
        QVERIFY(finishedBefore >= 1);
        QVERIFY(finishedBefore < 12);
        QVERIFY(view.resumeButton()->isEnabled());

        QCOMPARE(view.resumeRun(), QString());
        const auto [resumedExit, resumedStatus] = waitForEnd(view);
        QVERIFY2(resumedExit == 0, qPrintable(resumedStatus + "\n" + view.logPane()->toPlainText()));
        QCOMPARE(resumedStatus, QString("complete"));
        // The resumed run reused what the cancelled one finished and ran the rest: all 12 live and done, once each.
        QCOMPARE(view.trialsModel()->countInState("reused"), finishedBefore);
        QCOMPARE(view.trialsModel()->countInState("reused") + view.trialsModel()->countInState("finished"), 12);
        std::set<std::string> coordinates;
        for (const TrialRecord& trial : storedTrials(store)) {
            QVERIFY(coordinates.insert(trial.coordinate).second);
            QVERIFY2(trial.status == TrialStatus::Finished, trial.coordinate.c_str());
        }
        QCOMPARE(int(coordinates.size()), 12);
    }

    void aRunOutlivesItsViewAndIsFollowedAgain() {
        const QString store = newStore();
        qint64 pid = 0;
        {
            RunsView first;
            first.session()->setPollIntervalMs(50);
            first.setStorePath(store);
            first.setRequest(fixtureRequest("p0[1-3]", 1));
            QCOMPARE(first.startRun(), QString());
            pid = first.session()->pid();
            QVERIFY(waitForTrialEvent(first.session(), ProgressEventKind::TrialStarted));
        } // the window closes; the run goes on
        QVERIFY(isLiveMkbProcess(pid));

        RunsView second;
        second.session()->setPollIntervalMs(50);
        QAbstractItemModelTester tester(second.trialsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reattached(&second, &RunsView::reattached);
        QVERIFY(second.setStorePath(store));
        QCOMPARE(reattached.size(), 1);
        QCOMPARE(reattached.front().front().toLongLong(), pid);
        QCOMPARE(second.session()->source(), RunSession::Source::ProgressFile);
        // The form shows the run followed, settings and all.
        const RunRequest shown = second.request();
        QCOMPARE(shown.model, QString("reference-cpu"));
        QCOMPARE(shown.problems, QString("p0[1-3]"));
        QCOMPARE(shown.dslB, QString("cpusimb"));
        QCOMPARE(shown.timingDraws, 5);
        QCOMPARE(shown.dslDirs, QStringList({dslDir()}));
        QVERIFY(shown.driverSettingsJson.contains(solutions()));
        QVERIFY(second.cancelButton()->isEnabled());
        // The progress file replays from the start: the whole plan is there at once.
        QTRY_COMPARE(second.trialsModel()->rowCount(), 12);
        const auto [exitCode, status] = waitForEnd(second);
        QVERIFY2(exitCode == 0, qPrintable(status + "\n" + second.logPane()->toPlainText()));
        QCOMPARE(second.trialsModel()->countInState("finished"), 12);
        QTRY_VERIFY_WITH_TIMEOUT(!isLiveMkbProcess(pid), 30000);
    }

    void aRunStartedOutsideTheWorkbenchIsFollowedThroughTheStore() {
        // The outside run is held in a known state: its first attempt is a command agent that waits for a gate file,
        // so the trial is marked running in the store and mkb is alive until the test opens the gate, after the view
        // has attached. Nothing depends on how fast the run or the machine is.
        const QString waiting = dir_.filePath("outside-agent-waiting");
        const QString gate = dir_.filePath("outside-gate");
        const QString agent = dir_.filePath("outside_agent.sh");
        QVERIFY(
            writeText(agent, "#!/bin/sh\n"
                             "touch '" +
                                 waiting.toUtf8() +
                                 "'\n"
                                 "n=0\n" // a leftover agent gives up after five minutes, like the run's wall clock
                                 "while [ ! -f '" +
                                 gate.toUtf8() +
                                 "' ] && [ $n -lt 6000 ]; do sleep 0.05; "
                                 "n=$((n+1)); done\n"
                                 "cp '" +
                                 solutions().toUtf8() +
                                 "/01_vector_add.cpusim.py' kernel.py\n"
                                 "echo 'Adding vectors is memory bound; the launch overhead dominates.' > SKILL.md\n"));
        RunRequest request = fixtureRequest("p01", 1);
        request.driver = "command";
        request.driverSettingsJson =
            QJsonDocument(QJsonObject{{"command", "sh '" + agent + "'"}, {"kill_grace_s", 0.5}})
                .toJson(QJsonDocument::Compact);
        const QString store = newStore();
        const QString config = dir_.filePath("outside-driver.json");
        QVERIFY(writeText(config, request.driverSettingsJson.toUtf8()));
        QProcess outside;
        outside.setStandardOutputFile(QProcess::nullDevice());
        outside.setStandardErrorFile(QProcess::nullDevice());
        outside.start(locateMkb(), mkbRunArguments(request, store, config));
        QVERIFY(outside.waitForStarted());
        // The agent is waiting: the run recorded its invocation (before any trial) and one trial is running.
        QVERIFY2(QTest::qWaitFor([&] { return QFile::exists(waiting) || outside.state() == QProcess::NotRunning; },
                                 kRunTimeoutMs),
                 "the outside run's agent never started");
        QVERIFY2(QFile::exists(waiting), "the outside run ended before its agent started");
        const std::optional<LiveRun> live = findLiveRun(store);
        QVERIFY(live.has_value());
        QVERIFY(!live->files.has_value());
        QCOMPARE(live->pid, outside.processId());
        QCOMPARE(live->model, QString("reference-cpu"));
        QVERIFY(argumentsFromCommandLine(QString::fromStdString(live->invocation->commandLine)).startsWith("run"));

        RunsView view;
        view.session()->setPollIntervalMs(50);
        QAbstractItemModelTester tester(view.trialsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reattached(&view, &RunsView::reattached);
        view.setStorePath(store); // the store is read off the GUI thread; the view says when it found the run
        QVERIFY(!reattached.isEmpty() || reattached.wait(kRunTimeoutMs));
        QCOMPARE(reattached.front().front().toLongLong(), outside.processId());
        QCOMPARE(view.session()->source(), RunSession::Source::Store);
        QCOMPARE(view.session()->state(), RunSession::State::Following);
        QVERIFY(view.statusLabel()->text().contains("started outside the workbench"));
        QVERIFY(view.cancelButton()->isEnabled());
        // The store's view of the held run reaches the table: the waiting trial shows as running.
        QVERIFY(QTest::qWaitFor([&] { return view.trialsModel()->countInState("running") == 1; }, kRunTimeoutMs));
        QCOMPARE(view.session()->state(), RunSession::State::Following);

        // Released, the run goes to its end and the view follows it there.
        QSignalSpy ended(&view, &RunsView::runEnded);
        QVERIFY(writeText(gate, "open"));
        QVERIFY(outside.waitForFinished(kRunTimeoutMs));
        QCOMPARE(outside.exitCode(), 0);
        QVERIFY(view.session()->state() == RunSession::State::Ended || ended.wait(kRunTimeoutMs));
        // p01 × (two solos + two skill arms), every one finished.
        QCOMPARE(view.trialsModel()->rowCount(), 4);
        QCOMPARE(view.trialsModel()->countInState("finished"), 4);
        QVERIFY(view.resumeButton()->isEnabled());
    }
};

QTEST_MAIN(RunsTest)
#include "tst_runs.moc"
