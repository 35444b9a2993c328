// The Runs view: its table, log and buttons, and their wiring to a RunSession and a RunTrialsModel (its run form is
// runs_view_form.cpp).
#include "gui/runs/runs_view.h"

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
    notes_ = new QLabel(this);
    notes_->setObjectName(QStringLiteral("runNotesLabel"));
    notes_->setWordWrap(true);
    notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    notes_->setToolTip(tr("What mkb run said about the run itself, e.g. a device that left the rotation (its "
                          "gradings went to the other devices)"));
    notes_->hide();
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
    followedLayout->addWidget(notes_);
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
    session_->detach(); // the run goes on without the window; storeLookups_ cancels a look-up and waits for it
}

void RunsView::updateJobColumns() {
    // Shown for a Slurm run from its start (its command line says so) or as soon as an event names a job.
    const QStringList args = session_->arguments();
    const int executor = int(args.indexOf(QStringLiteral("--executor")));
    const bool slurm = model_->hasJobs() || (executor >= 0 && args.value(executor + 1) == QLatin1String("slurm"));
    table_->setColumnHidden(RunTrialsModel::JobColumn, !slurm);
    table_->setColumnHidden(RunTrialsModel::JobStateColumn, !slurm);
}

bool RunsView::setStorePath(const QString& storePath) {
    if (storePath == storePath_) {
        return session_->state() == RunSession::State::Following;
    }
    session_->detach();
    storePath_ = storePath;
    model_->clear();
    log_->clear();
    clearNotes();
    progress_->setRange(0, 1);
    progress_->setValue(0);
    status_->setText(storePath.isEmpty() ? tr("No project open.") : tr("No run followed in this project."));
    bool found = false;
    storeLookups_.cancelAll();
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
            // A run started outside the workbench shows only in the store, which a job reads.
            storeLookups_.start([storePath](const JobControl&) { return findLiveRunInStore(storePath); },
                                [this](std::optional<LiveRun>& live) {
                                    const bool following =
                                        session_->state() == RunSession::State::Following && !replayingLastRun_;
                                    if (!live || following) {
                                        return;
                                    }
                                    session_->detach();
                                    replayingLastRun_ = false;
                                    model_->clear();
                                    log_->clear();
                                    clearNotes();
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
    storeLookups_.cancelAll(); // a look-up still running must not replace the run started now
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
        clearNotes();
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
    storeLookups_.cancelAll();
    model_->clear();
    clearNotes();
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
    if (event.kind == ProgressEventKind::Note) {
        // A device that left the rotation, said once by mkb run: one line in the log, and kept under the status.
        const QString note = QString::fromStdString(event.message);
        appendLog(QStringLiteral("note: %1\n").arg(note));
        notes_->setText(notes_->text().isEmpty() ? note : notes_->text() + QLatin1Char('\n') + note);
        notes_->show();
    }
}

void RunsView::clearNotes() {
    notes_->clear();
    notes_->hide();
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
    startButton_->setEnabled(!following && !storePath_.isEmpty() && devicesProblem_.isEmpty());
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
