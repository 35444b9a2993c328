// The Runs view's widgets and their wiring to a RunSession and a RunTrialsModel.
#include "gui/runs/runs_view.h"

#include "gui/common/background.h"
#include "gui/common/splitter_state.h"
#include "gui/common/table_copy.h"
#include "gui/runs/run_counts_text.h"
#include "gui/runs/run_session.h"
#include "gui/runs/run_trials_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDataStream>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIODevice>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace mkb::gui {
namespace {

constexpr quint32 kLayoutMagic = 0x4D4B5233; // 'MKR3': splitters as proportions, the table with its job columns
                                             // (older 'MKR2' and 'MKRV' states are ignored)
constexpr int kLogLines = 5000;

const QStringList kKnownDsls = {QStringLiteral("triton"), QStringLiteral("cuda"), QStringLiteral("cutedsl"),
                                QStringLiteral("tirx")};

QString driverTemplate(const QString& driver) {
    if (driver == QLatin1String("command")) {
        return QStringLiteral("{\n  \"command\": \"my-agent --prompt-file {instruction}\"\n}");
    }
    if (driver == QLatin1String("chat")) {
        return QStringLiteral("{\n  \"base_url\": \"http://localhost:8000/v1\",\n  \"model\": \"my-model\",\n"
                              "  \"api_key_env\": \"OPENAI_API_KEY\"\n}");
    }
    return QStringLiteral("{}");
}

QStringList listField(const QLineEdit* edit) {
    QStringList items;
    for (const QString& item : edit->text().split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        if (!item.trimmed().isEmpty()) {
            items << item.trimmed();
        }
    }
    return items;
}

QComboBox* dslCombo(const QString& chosen, QWidget* parent) {
    auto* combo = new QComboBox(parent);
    combo->setEditable(true);
    combo->addItems(kKnownDsls);
    combo->setCurrentText(chosen);
    return combo;
}

} // namespace

RunsView::RunsView(QWidget* parent)
    : QWidget(parent), session_(new RunSession(this)), model_(new RunTrialsModel(this)) {
    setObjectName(QStringLiteral("runsView"));

    startButton_ = new QPushButton(tr("&Start Run"), this);
    startButton_->setObjectName(QStringLiteral("startRunButton"));
    startButton_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    startButton_->setToolTip(tr("Start mkb run with these settings (Ctrl+R)"));
    cancelButton_ = new QPushButton(tr("&Cancel Run"), this);
    cancelButton_->setObjectName(QStringLiteral("cancelRunButton"));
    cancelButton_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    cancelButton_->setToolTip(tr("Ask the run to stop, as Ctrl+C does: finished trials stay, the rest are recorded "
                                 "as interrupted (Ctrl+.)"));
    resumeButton_ = new QPushButton(tr("Res&ume Run"), this);
    resumeButton_->setObjectName(QStringLiteral("resumeRunButton"));
    resumeButton_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    resumeButton_->setToolTip(tr("Run the last command again: mkb run picks up where it stopped (Ctrl+Shift+R)"));

    status_ = new QLabel(tr("No run yet."), this);
    status_->setObjectName(QStringLiteral("runStatusLabel"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("runProgressBar"));
    progress_->setRange(0, 1);
    progress_->setValue(0);

    auto* sorted = new TableSortProxy(this);
    sorted->setSourceModel(model_);
    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("runTrialsTable"));
    table_->setModel(sorted);
    table_->setSortingEnabled(true);
    table_->sortByColumn(-1, Qt::AscendingOrder); // plan order until the user sorts
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setColumnWidth(RunTrialsModel::CoordinateColumn, 240);
    installCopyRowsAction(table_);

    log_ = new QPlainTextEdit(this);
    log_->setObjectName(QStringLiteral("runLogPane"));
    log_->setReadOnly(true);
    log_->setLineWrapMode(QPlainTextEdit::NoWrap);
    log_->setMaximumBlockCount(kLogLines);
    log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    log_->setPlaceholderText(tr("mkb run's messages appear here."));

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(startButton_);
    buttons->addWidget(cancelButton_);
    buttons->addWidget(resumeButton_);
    buttons->addStretch(1);

    auto* followed = new QWidget(this);
    auto* followedLayout = new QVBoxLayout(followed);
    followedLayout->setContentsMargins(0, 0, 0, 0);
    followedLayout->addLayout(buttons);
    followedLayout->addWidget(status_);
    followedLayout->addWidget(progress_);
    followedLayout->addWidget(table_, 1);

    rightSplitter_ = new QSplitter(Qt::Vertical, this);
    rightSplitter_->addWidget(followed);
    rightSplitter_->addWidget(log_);
    rightSplitter_->setStretchFactor(0, 3);
    rightSplitter_->setStretchFactor(1, 1);

    auto* scroll = new QScrollArea(this);
    scroll->setWidget(buildForm());
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(scroll->widget()->sizeHint().width() + 24);

    splitter_ = new QSplitter(Qt::Horizontal, this);
    splitter_->addWidget(scroll);
    splitter_->addWidget(rightSplitter_);
    splitter_->setStretchFactor(0, 0);
    splitter_->setStretchFactor(1, 1);
    splitter_->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(splitter_);

    connect(startButton_, &QPushButton::clicked, this, [this] { startRun(); });
    connect(cancelButton_, &QPushButton::clicked, this, [this] { cancelRun(); });
    connect(resumeButton_, &QPushButton::clicked, this, [this] { resumeRun(); });
    connect(session_, &RunSession::runEvent, this, &RunsView::takeEvent);
    connect(session_, &RunSession::logText, this, &RunsView::appendLog);
    connect(session_, &RunSession::storeSnapshot, this,
            [this](const std::vector<TrialRecord>& trials, const QHash<qint64, int>& submissions) {
                model_->applyStoreTrials(trials, submissions);
                const int done =
                    model_->countInState(QStringLiteral("finished")) + model_->countInState(QStringLiteral("skipped"));
                status_->setText(tr("Following pid %1 through the project store: %2 trials recorded, %3 done, "
                                    "%4 running.")
                                     .arg(session_->pid())
                                     .arg(model_->rowCount())
                                     .arg(done)
                                     .arg(model_->countInState(QStringLiteral("running"))));
                progress_->setRange(0, std::max(1, model_->rowCount()));
                progress_->setValue(done);
            });
    connect(session_, &RunSession::ended, this, &RunsView::runEndedHere);
    updateButtons();
}

RunsView::~RunsView() {
    session_->detach(); // the run goes on without the window
    waitForWorkers(this);
}

QWidget* RunsView::buildForm() {
    auto* form = new QWidget(this);
    auto* layout = new QVBoxLayout(form);
    layout->setContentsMargins(0, 0, 6, 0);

    auto* what = new QGroupBox(tr("Run"), form);
    auto* whatForm = new QFormLayout(what);
    modelEdit_ = new QLineEdit(what);
    modelEdit_->setObjectName(QStringLiteral("runModelEdit"));
    modelEdit_->setPlaceholderText(tr("the model's name in the store"));
    driverCombo_ = new QComboBox(what);
    driverCombo_->setObjectName(QStringLiteral("runDriverCombo"));
    driverCombo_->addItems({QStringLiteral("reference"), QStringLiteral("command"), QStringLiteral("chat")});
    driverSettings_ = new QPlainTextEdit(what);
    driverSettings_->setObjectName(QStringLiteral("runDriverSettings"));
    driverSettings_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    driverSettings_->setPlainText(driverTemplate(QStringLiteral("reference")));
    driverSettings_->setFixedHeight(driverSettings_->fontMetrics().lineSpacing() * 5 + 12);
    driverSettings_->setToolTip(tr("The driver's settings as a JSON object (mkb run --driver-config). Never put a "
                                   "secret here: name the environment variable that holds it."));
    problemsEdit_ = new QLineEdit(QStringLiteral("*"), what);
    problemsEdit_->setObjectName(QStringLiteral("runProblemsEdit"));
    problemsEdit_->setToolTip(tr("A glob over problem names: *, p0[1-3], attention/*"));
    dslACombo_ = dslCombo(QStringLiteral("triton"), what);
    dslACombo_->setObjectName(QStringLiteral("runDslACombo"));
    dslBCombo_ = dslCombo(QStringLiteral("cuda"), what);
    dslBCombo_->setObjectName(QStringLiteral("runDslBCombo"));
    auto* pair = new QHBoxLayout;
    pair->addWidget(dslACombo_, 1);
    pair->addWidget(new QLabel(QStringLiteral("⇄"), what));
    pair->addWidget(dslBCombo_, 1);
    replicatesSpin_ = new QSpinBox(what);
    replicatesSpin_->setObjectName(QStringLiteral("runReplicatesSpin"));
    replicatesSpin_->setRange(1, 100);
    whatForm->addRow(tr("&Model:"), modelEdit_);
    whatForm->addRow(tr("&Driver:"), driverCombo_);
    whatForm->addRow(tr("Driver &settings:"), driverSettings_);
    whatForm->addRow(tr("&Problems:"), problemsEdit_);
    whatForm->addRow(tr("DSL pair:"), pair);
    whatForm->addRow(tr("Re&plicates:"), replicatesSpin_);

    auto* budget = new QGroupBox(tr("Budget per attempt"), form);
    auto* budgetForm = new QFormLayout(budget);
    wallClockSpin_ = new QDoubleSpinBox(budget);
    wallClockSpin_->setObjectName(QStringLiteral("runWallClockSpin"));
    wallClockSpin_->setRange(1, 7 * 24 * 3600);
    wallClockSpin_->setDecimals(0);
    wallClockSpin_->setSuffix(tr(" s"));
    wallClockSpin_->setValue(2400);
    submissionsSpin_ = new QSpinBox(budget);
    submissionsSpin_->setObjectName(QStringLiteral("runSubmissionsSpin"));
    submissionsSpin_->setRange(0, 10000);
    submissionsSpin_->setValue(10);
    maxBytesSpin_ = new QSpinBox(budget);
    maxBytesSpin_->setRange(1, 1 << 30);
    maxBytesSpin_->setValue(300000);
    maxBytesSpin_->setSuffix(tr(" bytes"));
    budgetForm->addRow(tr("&Wall clock:"), wallClockSpin_);
    budgetForm->addRow(tr("Su&bmissions:"), submissionsSpin_);
    budgetForm->addRow(tr("&Kernel size:"), maxBytesSpin_);

    auto* where = new QGroupBox(tr("Grading"), form);
    auto* whereForm = new QFormLayout(where);
    deviceEdit_ = new QLineEdit(where);
    deviceEdit_->setObjectName(QStringLiteral("runDeviceEdit"));
    deviceEdit_->setPlaceholderText(QStringLiteral("cuda:0"));
    pythonEdit_ = new QLineEdit(where);
    pythonEdit_->setObjectName(QStringLiteral("runPythonEdit"));
    pythonEdit_->setPlaceholderText(tr("$MKB_PYTHON, else python3"));
    concurrencySpin_ = new QSpinBox(where);
    concurrencySpin_->setRange(1, 64);
    concurrencySpin_->setValue(2);
    gradeTimeoutSpin_ = new QDoubleSpinBox(where);
    gradeTimeoutSpin_->setRange(1, 24 * 3600);
    gradeTimeoutSpin_->setDecimals(0);
    gradeTimeoutSpin_->setSuffix(tr(" s"));
    gradeTimeoutSpin_->setValue(600);
    timingDrawsSpin_ = new QSpinBox(where);
    timingDrawsSpin_->setObjectName(QStringLiteral("runTimingDrawsSpin"));
    timingDrawsSpin_->setRange(1, 100000);
    timingDrawsSpin_->setValue(50);
    suitesEdit_ = new QLineEdit(where);
    suitesEdit_->setObjectName(QStringLiteral("runSuitesEdit"));
    suitesEdit_->setPlaceholderText(tr("the shipped suite; folders separated by ;"));
    dslDirsEdit_ = new QLineEdit(where);
    dslDirsEdit_->setObjectName(QStringLiteral("runDslDirsEdit"));
    dslDirsEdit_->setPlaceholderText(tr("extra DSL descriptor folders, separated by ;"));
    rerunStaleCheck_ = new QCheckBox(tr("Archive stale trials and run them again"), where);
    rerunStaleCheck_->setObjectName(QStringLiteral("runRerunStaleCheck"));
    whereForm->addRow(tr("De&vice:"), deviceEdit_);
    whereForm->addRow(tr("P&ython:"), pythonEdit_);
    whereForm->addRow(tr("C&oncurrency:"), concurrencySpin_);
    whereForm->addRow(tr("Grade &timeout:"), gradeTimeoutSpin_);
    whereForm->addRow(tr("Timing dra&ws:"), timingDrawsSpin_);
    whereForm->addRow(tr("S&uites:"), suitesEdit_);
    whereForm->addRow(tr("DSL &folders:"), dslDirsEdit_);
    whereForm->addRow(rerunStaleCheck_);

    auto* executor = new QGroupBox(tr("Executor"), form);
    auto* executorForm = new QFormLayout(executor);
    executorCombo_ = new QComboBox(executor);
    executorCombo_->setObjectName(QStringLiteral("runExecutorCombo"));
    executorCombo_->addItems({QStringLiteral("local"), QStringLiteral("slurm")});
    executorCombo_->setToolTip(tr("local: attempts and gradings run on this host. slurm: each trial is a Slurm job "
                                  "holding one GPU on a node (mkb run --executor slurm)."));
    partitionEdit_ = new QLineEdit(executor);
    partitionEdit_->setObjectName(QStringLiteral("runPartitionEdit"));
    partitionEdit_->setPlaceholderText(tr("the cluster's default"));
    sharedEdit_ = new QLineEdit(executor);
    sharedEdit_->setObjectName(QStringLiteral("runSharedEdit"));
    sharedEdit_->setPlaceholderText(tr("a folder this host and every node see at the same path"));
    sharedEdit_->setToolTip(tr("Batches, shards and job logs go here (mkb run --shared); the store stays on this "
                               "host."));
    executorForm->addRow(tr("E&xecutor:"), executorCombo_);
    executorForm->addRow(tr("P&artition:"), partitionEdit_);
    executorForm->addRow(tr("S&hared folder:"), sharedEdit_);

    layout->addWidget(what);
    layout->addWidget(budget);
    layout->addWidget(where);
    layout->addWidget(executor);
    layout->addStretch(1);

    connect(driverCombo_, &QComboBox::currentTextChanged, this, &RunsView::driverChosen);
    connect(executorCombo_, &QComboBox::currentTextChanged, this, &RunsView::executorChosen);
    executorChosen();
    return form;
}

void RunsView::executorChosen() {
    const bool slurm = executorCombo_->currentText() == QLatin1String("slurm");
    partitionEdit_->setEnabled(slurm);
    sharedEdit_->setEnabled(slurm);
}

void RunsView::updateJobColumns() {
    // Shown for a Slurm run from its start (its command line says so) or as soon as an event names a job.
    const QStringList args = session_->arguments();
    const int executor = int(args.indexOf(QStringLiteral("--executor")));
    const bool slurm = model_->hasJobs() || (executor >= 0 && args.value(executor + 1) == QLatin1String("slurm"));
    table_->setColumnHidden(RunTrialsModel::JobColumn, !slurm);
    table_->setColumnHidden(RunTrialsModel::JobStateColumn, !slurm);
}

void RunsView::driverChosen() {
    // Replace the settings only while they are still some driver's untouched template.
    const QString current = driverSettings_->toPlainText().trimmed();
    for (const QString& driver : {QStringLiteral("reference"), QStringLiteral("command"), QStringLiteral("chat")}) {
        if (current == driverTemplate(driver) || current.isEmpty()) {
            driverSettings_->setPlainText(driverTemplate(driverCombo_->currentText()));
            return;
        }
    }
}

RunRequest RunsView::request() const {
    RunRequest request;
    request.model = modelEdit_->text();
    request.driver = driverCombo_->currentText();
    request.driverSettingsJson = driverSettings_->toPlainText();
    request.problems = problemsEdit_->text();
    request.dslA = dslACombo_->currentText();
    request.dslB = dslBCombo_->currentText();
    request.replicates = replicatesSpin_->value();
    request.suites = listField(suitesEdit_);
    request.dslDirs = listField(dslDirsEdit_);
    request.device = deviceEdit_->text();
    request.python = pythonEdit_->text();
    request.wallClockSeconds = wallClockSpin_->value();
    request.submissions = submissionsSpin_->value();
    request.maxKernelBytes = maxBytesSpin_->value();
    request.concurrency = concurrencySpin_->value();
    request.gradeTimeoutSeconds = gradeTimeoutSpin_->value();
    request.timingDraws = timingDrawsSpin_->value();
    request.rerunStale = rerunStaleCheck_->isChecked();
    request.executor = executorCombo_->currentText();
    request.partition = partitionEdit_->text();
    request.sharedFolder = sharedEdit_->text();
    return request;
}

void RunsView::setRequest(const RunRequest& request) {
    modelEdit_->setText(request.model);
    driverCombo_->setCurrentText(request.driver);
    driverSettings_->setPlainText(request.driverSettingsJson);
    problemsEdit_->setText(request.problems);
    dslACombo_->setCurrentText(request.dslA);
    dslBCombo_->setCurrentText(request.dslB);
    replicatesSpin_->setValue(request.replicates);
    suitesEdit_->setText(request.suites.join(QLatin1Char(';')));
    dslDirsEdit_->setText(request.dslDirs.join(QLatin1Char(';')));
    deviceEdit_->setText(request.device);
    pythonEdit_->setText(request.python);
    wallClockSpin_->setValue(request.wallClockSeconds);
    submissionsSpin_->setValue(request.submissions);
    maxBytesSpin_->setValue(request.maxKernelBytes);
    concurrencySpin_->setValue(request.concurrency);
    gradeTimeoutSpin_->setValue(request.gradeTimeoutSeconds);
    timingDrawsSpin_->setValue(request.timingDraws);
    rerunStaleCheck_->setChecked(request.rerunStale);
    executorCombo_->setCurrentText(request.executor.isEmpty() ? QStringLiteral("local") : request.executor);
    partitionEdit_->setText(request.partition);
    sharedEdit_->setText(request.sharedFolder);
}

bool RunsView::setStorePath(const QString& storePath) {
    if (storePath == storePath_) {
        return session_->state() == RunSession::State::Following;
    }
    session_->detach();
    storePath_ = storePath;
    model_->clear();
    log_->clear();
    progress_->setRange(0, 1);
    progress_->setValue(0);
    status_->setText(storePath.isEmpty() ? tr("No project open.") : tr("No run followed in this project."));
    bool found = false;
    ++storeLookup_;
    if (!storePath.isEmpty()) {
        if (auto live = findLiveRunFromFiles(storePath)) {
            followLiveRun(*live);
            found = true;
        } else {
            if (auto last = findLastRunFiles(storePath)) {
                replayingLastRun_ = true;
                LiveRun replay;
                replay.pid = last->pid;
                replay.files = last;
                session_->attach(replay, storePath);
                setRequest(runRequestFromArguments(last->arguments));
            }
            // A run started outside the workbench shows only in the store, which a worker reads.
            const int lookup = storeLookup_;
            runInBackground<std::optional<LiveRun>>(
                this, [storePath] { return findLiveRunInStore(storePath); },
                [this, lookup](std::optional<LiveRun>& live) {
                    const bool following = session_->state() == RunSession::State::Following && !replayingLastRun_;
                    if (lookup != storeLookup_ || !live || following) {
                        return;
                    }
                    session_->detach();
                    replayingLastRun_ = false;
                    model_->clear();
                    log_->clear();
                    followLiveRun(*live);
                    updateButtons();
                });
        }
    }
    updateButtons();
    return found;
}

void RunsView::followLiveRun(const LiveRun& live) {
    session_->attach(live, storePath_);
    if (!session_->arguments().isEmpty()) {
        setRequest(runRequestFromArguments(session_->arguments())); // the form shows the run followed
    }
    status_->setText(live.files ? tr("Following the run still going in this project (pid %1).").arg(live.pid)
                                : tr("Following the run still going in this project (pid %1, started outside the "
                                     "workbench) through the store.")
                                      .arg(live.pid));
    appendLog(tr("[workbench] reattached to mkb run, pid %1\n").arg(live.pid));
    emit reattached(live.pid);
}

QString RunsView::startRun() {
    replayingLastRun_ = false;
    ++storeLookup_; // a look-up still running must not replace the run started now
    QString problem;
    const RunRequest chosen = request();
    if (storePath_.isEmpty()) {
        problem = tr("open a project first: a run records its trials in the project's store");
    } else {
        problem = runRequestProblem(chosen);
    }
    QString configFile;
    if (problem.isEmpty() && !chosen.driverSettingsJson.trimmed().isEmpty()) {
        const QString folder = runFilesFolder(storePath_);
        QDir().mkpath(folder);
        configFile = QDir(folder).filePath(
            QStringLiteral("driver-%1.json")
                .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"))));
        QFile file(configFile);
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            file.write(chosen.driverSettingsJson.toUtf8()) < 0) {
            problem = tr("cannot write the driver settings to %1; check the folder is writable").arg(configFile);
        }
    }
    if (problem.isEmpty()) {
        model_->clear();
        log_->clear();
        const QStringList args = mkbRunArguments(chosen, storePath_, configFile);
        problem = session_->start(locateMkb(), args, storePath_);
        if (problem.isEmpty()) {
            appendLog(QStringLiteral("$ mkb %1\n").arg(args.join(QLatin1Char(' '))));
            status_->setText(tr("Started mkb run (pid %1).").arg(session_->pid()));
        }
    }
    if (!problem.isEmpty()) {
        status_->setText(tr("Cannot start the run: %1").arg(problem));
    }
    updateButtons();
    return problem;
}

bool RunsView::cancelRun() {
    const bool sent = session_->cancel();
    if (sent) {
        appendLog(tr("[workbench] asked pid %1 to stop (SIGINT)\n").arg(session_->pid()));
        status_->setText(tr("Stopping: finished trials stay, the rest are recorded as interrupted…"));
    }
    return sent;
}

QString RunsView::resumeRun() {
    replayingLastRun_ = false;
    ++storeLookup_;
    model_->clear();
    const QString problem = session_->resume();
    if (problem.isEmpty()) {
        appendLog(QStringLiteral("$ mkb %1\n").arg(session_->arguments().join(QLatin1Char(' '))));
        status_->setText(tr("Resumed the run (pid %1).").arg(session_->pid()));
    } else {
        status_->setText(tr("Cannot resume: %1").arg(problem));
    }
    updateButtons();
    return problem;
}

void RunsView::takeEvent(const ProgressEvent& event) {
    model_->applyEvent(event);
    updateJobColumns();
    progress_->setRange(0, std::max(1, event.counts.total));
    progress_->setValue(event.counts.done);
    if (event.kind != ProgressEventKind::RunFinished) {
        status_->setText(tr("Running (pid %1): %2").arg(session_->pid()).arg(describeCounts(event.counts)));
    }
    if (event.kind == ProgressEventKind::TrialFinished) {
        const QString message = QString::fromStdString(event.message);
        appendLog(QStringLiteral("%1 %2%3\n")
                      .arg(QString::fromStdString(event.coordinate), QString::fromStdString(event.status),
                           message.isEmpty() ? QString() : QStringLiteral(": ") + message));
    }
}

void RunsView::runEndedHere(int exitCode, const QString& status, const QString& message) {
    if (replayingLastRun_) {
        replayingLastRun_ = false;
        status_->setText(tr("Last run in this project (started %1): %2%3")
                             .arg(session_->files().startedAt, status,
                                  message.isEmpty() ? QString() : QStringLiteral(" — ") + message));
        updateButtons();
        return;
    }
    status_->setText(tr("The run ended: %1%2%3")
                         .arg(status, exitCode >= 0 ? tr(" (exit code %1)").arg(exitCode) : QString(),
                              message.isEmpty() ? QString() : QStringLiteral(" — ") + message));
    appendLog(QStringLiteral("[workbench] run ended: %1 %2\n").arg(status, message));
    updateButtons();
    emit runEnded(exitCode, status);
}

void RunsView::updateButtons() {
    updateJobColumns(); // called whenever a run starts, is attached or ends
    const bool following = session_->state() == RunSession::State::Following;
    startButton_->setEnabled(!following && !storePath_.isEmpty());
    cancelButton_->setEnabled(following);
    resumeButton_->setEnabled(!following && !session_->arguments().isEmpty());
}

void RunsView::appendLog(const QString& text) {
    QString trimmed = text;
    if (trimmed.endsWith(QLatin1Char('\n'))) {
        trimmed.chop(1);
    }
    if (!trimmed.isEmpty()) {
        log_->appendPlainText(trimmed);
    }
}

QByteArray RunsView::saveLayout() const {
    QByteArray layout;
    QDataStream stream(&layout, QIODevice::WriteOnly);
    stream << kLayoutMagic << splitterProportions(splitter_) << splitterProportions(rightSplitter_)
           << table_->horizontalHeader()->saveState();
    return layout;
}

bool RunsView::restoreLayout(const QByteArray& layout) {
    QDataStream stream(layout);
    quint32 magic = 0;
    QByteArray outer;
    QByteArray inner;
    QByteArray header;
    stream >> magic >> outer >> inner >> header;
    if (stream.status() != QDataStream::Ok || magic != kLayoutMagic) {
        return false;
    }
    // Proportions, applied once the splitters are laid out: the view is restored before it is first shown.
    const bool restored = restoreSplitterProportions(splitter_, outer) &&
                          restoreSplitterProportions(rightSplitter_, inner) &&
                          table_->horizontalHeader()->restoreState(header);
    updateJobColumns(); // the saved header may have shown them for another project's Slurm run
    return restored;
}

} // namespace mkb::gui
