// RunSession: launching mkb run detached with its output in files, following those files (or the store), and
// telling whether the process is still alive.
#include "gui/runs/run_session.h"

#include "core/store/store.h"
#include "core/util/shell_words.h"
#include "core/util/signals.h"
#include "gui/runs/run_request.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTimer>

#include <cerrno>
#include <csignal>
#include <filesystem>

namespace mkb::gui {
namespace {

constexpr int kDefaultPollMs = 250;
constexpr int kLivenessEveryTicks = 4; // the process is checked every fourth poll
constexpr int kStorePollEveryTicks = 8;

QJsonObject recordJson(const RunFiles& files) {
    QJsonObject object;
    object[QStringLiteral("pid")] = double(files.pid);
    object[QStringLiteral("program")] = files.program;
    object[QStringLiteral("arguments")] = QJsonArray::fromStringList(files.arguments);
    object[QStringLiteral("progress")] = QFileInfo(files.progress).fileName();
    object[QStringLiteral("log")] = QFileInfo(files.log).fileName();
    object[QStringLiteral("started_at")] = files.startedAt;
    return object;
}

std::optional<RunFiles> readRecord(const QString& recordPath) {
    QFile file(recordPath);
    if (!file.open(QIODevice::ReadOnly)) {
        return std::nullopt;
    }
    const QJsonObject object = QJsonDocument::fromJson(file.readAll()).object();
    if (object.isEmpty()) {
        return std::nullopt;
    }
    const QDir folder = QFileInfo(recordPath).dir();
    RunFiles files;
    files.record = recordPath;
    files.pid = qint64(object.value(QStringLiteral("pid")).toDouble());
    files.program = object.value(QStringLiteral("program")).toString();
    for (const QJsonValue& value : object.value(QStringLiteral("arguments")).toArray()) {
        files.arguments << value.toString();
    }
    files.progress = folder.filePath(object.value(QStringLiteral("progress")).toString());
    files.log = folder.filePath(object.value(QStringLiteral("log")).toString());
    files.startedAt = object.value(QStringLiteral("started_at")).toString();
    return files;
}

QString modelOfInvocation(const InvocationRecord& invocation) {
    const QJsonObject settings = QJsonDocument::fromJson(QByteArray::fromStdString(invocation.settingsJson)).object();
    return settings.value(QStringLiteral("model")).toString();
}

} // namespace

QString runFilesFolder(const QString& storePath) {
    const QFileInfo store(storePath);
    return store.absoluteDir().filePath(store.completeBaseName() + QStringLiteral(".runs"));
}

bool isLiveMkbProcess(qint64 pid) {
    if (pid <= 0) {
        return false;
    }
    if (::kill(pid_t(pid), 0) != 0 && errno != EPERM) {
        return false;
    }
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (stat.open(QIODevice::ReadOnly)) {
        // "pid (comm) S …": the state letter follows the closing parenthesis.
        const QByteArray text = stat.readAll();
        const qsizetype close = text.lastIndexOf(')');
        if (close >= 0 && close + 2 < text.size() && (text[close + 2] == 'Z' || text[close + 2] == 'X')) {
            return false;
        }
    }
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (cmdline.open(QIODevice::ReadOnly)) {
        const QByteArray program = cmdline.readAll().split('\0').value(0);
        return QFileInfo(QString::fromLocal8Bit(program)).fileName().startsWith(QLatin1String("mkb"));
    }
    return true; // no /proc: the signal check is all there is
}

std::optional<LiveRun> findLiveRunFromFiles(const QString& storePath) {
    QDir folder(runFilesFolder(storePath));
    const QStringList records =
        folder.entryList({QStringLiteral("run-*.json")}, QDir::Files, QDir::Name | QDir::Reversed);
    for (const QString& name : records) {
        auto files = readRecord(folder.filePath(name));
        if (files && isLiveMkbProcess(files->pid)) {
            LiveRun run;
            run.pid = files->pid;
            run.files = files;
            return run;
        }
    }
    return std::nullopt;
}

std::optional<LiveRun> findLiveRunInStore(const QString& storePath) {
    // A reader: no page-by-page check on open, so polling a store that a run is writing stays cheap.
    auto store = Store::open(std::filesystem::path(storePath.toStdString()), OpenMode::ReadExisting);
    if (!store) {
        return std::nullopt;
    }
    auto invocations = (*store)->invocations();
    if (!invocations) {
        return std::nullopt;
    }
    for (auto it = invocations->rbegin(); it != invocations->rend(); ++it) {
        if (it->finishedAt.empty() && isLiveMkbProcess(it->pid)) {
            LiveRun run;
            run.pid = it->pid;
            run.invocation = *it;
            run.model = modelOfInvocation(*it);
            return run;
        }
    }
    return std::nullopt;
}

std::optional<RunFiles> findLastRunFiles(const QString& storePath) {
    QDir folder(runFilesFolder(storePath));
    const QStringList records =
        folder.entryList({QStringLiteral("run-*.json")}, QDir::Files, QDir::Name | QDir::Reversed);
    for (const QString& name : records) {
        if (auto files = readRecord(folder.filePath(name))) {
            return files;
        }
    }
    return std::nullopt;
}

std::optional<LiveRun> findLiveRun(const QString& storePath) {
    if (auto live = findLiveRunFromFiles(storePath)) {
        return live;
    }
    return findLiveRunInStore(storePath);
}

QStringList argumentsFromCommandLine(const QString& commandLine) {
    QStringList words;
    for (const std::string& word : shellWords(commandLine.toStdString())) {
        words << QString::fromStdString(word);
    }
    if (!words.isEmpty() && QFileInfo(words.first()).fileName().startsWith(QLatin1String("mkb"))) {
        words.removeFirst();
    }
    return words;
}

RunSession::RunSession(QObject* parent) : QObject(parent), timer_(new QTimer(this)) {
    timer_->setInterval(kDefaultPollMs);
    connect(timer_, &QTimer::timeout, this, &RunSession::poll);
}

RunSession::~RunSession() = default; // storePolls_ cancels a poll still running and waits for it

void RunSession::setPollIntervalMs(int ms) {
    timer_->setInterval(ms);
}

QString RunSession::start(const QString& program, const QStringList& arguments, const QString& storePath) {
    if (state_ == State::Following) {
        return tr("a run is already being followed; cancel it or wait for it to end");
    }
    if (program.isEmpty()) {
        return tr("the mkb program was not found beside the workbench or on PATH; install it or set MKB_CLI");
    }
    const QString folder = runFilesFolder(storePath);
    if (!QDir().mkpath(folder)) {
        return tr("cannot create the folder %1 for the run's progress files; check it is writable").arg(folder);
    }
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString stem =
        QDir(folder).filePath(QStringLiteral("run-") + now.toString(QStringLiteral("yyyyMMdd-HHmmss-zzz")));
    RunFiles files;
    files.record = stem + QStringLiteral(".json");
    files.progress = stem + QStringLiteral(".jsonl");
    files.log = stem + QStringLiteral(".log");
    files.program = program;
    files.arguments = arguments;
    files.startedAt = now.toString(Qt::ISODate);

    QProcess process;
    process.setProgram(program);
    process.setArguments(arguments);
    process.setWorkingDirectory(QFileInfo(storePath).absolutePath());
    process.setStandardOutputFile(files.progress, QIODevice::Truncate);
    process.setStandardErrorFile(files.log, QIODevice::Truncate);
    process.setStandardInputFile(QProcess::nullDevice());
    qint64 pid = 0;
    if (!process.startDetached(&pid)) {
        return tr("could not start %1: %2").arg(program, process.errorString());
    }
    files.pid = pid;
    QFile record(files.record);
    if (record.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        record.write(QJsonDocument(recordJson(files)).toJson());
    }

    LiveRun run;
    run.pid = pid;
    run.files = files;
    attach(run, storePath);
    emit started();
    return {};
}

void RunSession::attach(const LiveRun& run, const QString& storePath) {
    storePath_ = storePath;
    pid_ = run.pid;
    progressOffset_ = 0;
    logOffset_ = 0;
    partialLine_.clear();
    counts_ = {};
    exitCode_ = -1;
    sawRunFinished_ = false;
    ticks_ = 0;
    if (run.files) {
        source_ = Source::ProgressFile;
        files_ = *run.files;
        program_ = files_.program;
        arguments_ = files_.arguments;
    } else {
        source_ = Source::Store;
        files_ = {};
        program_.clear();
        arguments_ = run.invocation ? argumentsFromCommandLine(QString::fromStdString(run.invocation->commandLine))
                                    : QStringList();
        invocationId_ = run.invocation ? run.invocation->id : 0;
        model_ = run.model;
    }
    state_ = State::Following;
    timer_->start();
    poll();
}

bool RunSession::cancel() {
    if (state_ != State::Following || pid_ <= 0) {
        return false;
    }
    return signalProcess(pid_t(pid_), SIGINT);
}

QString RunSession::resume() {
    if (arguments_.isEmpty()) {
        return tr("there is no run to resume");
    }
    // A run found through the store has no recorded program: the workbench's own mkb runs it again.
    const QString program = program_.isEmpty() ? locateMkb() : program_;
    return start(program, arguments_, storePath_);
}

void RunSession::detach() {
    timer_->stop();
    storePolls_.cancelAll();
    state_ = State::Idle;
    source_ = Source::None;
}

void RunSession::poll() {
    if (state_ != State::Following) {
        return;
    }
    ++ticks_;
    if (source_ == Source::ProgressFile) {
        readProgress(false);
        readLog();
        if (state_ != State::Following) {
            return;
        }
    } else if (source_ == Source::Store && (ticks_ == 1 || ticks_ % kStorePollEveryTicks == 0)) {
        pollStore(false);
    }
    if (ticks_ % kLivenessEveryTicks == 0 && !isLiveMkbProcess(pid_)) {
        if (source_ == Source::ProgressFile) {
            readProgress(true);
            readLog();
            if (state_ == State::Following) {
                finish(-1, QStringLiteral("ended"),
                       tr("mkb run (pid %1) ended without reporting how; Resume runs it again").arg(pid_));
            }
        } else {
            pollStore(true);
        }
    }
}

void RunSession::readProgress(bool final) {
    QFile file(files_.progress);
    if (!file.open(QIODevice::ReadOnly) || file.size() <= progressOffset_) {
        return;
    }
    file.seek(progressOffset_);
    QByteArray chunk = file.readAll();
    progressOffset_ += chunk.size();
    partialLine_ += chunk;
    qsizetype newline = -1;
    while ((newline = partialLine_.indexOf('\n')) >= 0) {
        const QByteArray line = partialLine_.left(newline);
        partialLine_.remove(0, newline + 1);
        if (auto event = parseProgressEventJson(std::string_view(line.constData(), size_t(line.size())))) {
            counts_ = event->counts;
            emit runEvent(*event);
            if (event->kind == ProgressEventKind::RunFinished) {
                sawRunFinished_ = true;
                finish(event->exitCode, QString::fromStdString(event->status), QString::fromStdString(event->message));
                return;
            }
        }
    }
    if (final && !partialLine_.isEmpty()) {
        if (auto event =
                parseProgressEventJson(std::string_view(partialLine_.constData(), size_t(partialLine_.size())))) {
            emit runEvent(*event);
        }
        partialLine_.clear();
    }
}

void RunSession::readLog() {
    QFile file(files_.log);
    if (!file.open(QIODevice::ReadOnly) || file.size() <= logOffset_) {
        return;
    }
    file.seek(logOffset_);
    const QByteArray chunk = file.readAll();
    logOffset_ += chunk.size();
    emit logText(QString::fromUtf8(chunk));
}

void RunSession::pollStore(bool final) {
    if (storePolls_.isJobRunning() && (!final || finalStorePollRunning_)) {
        return;
    }
    struct Snapshot {
        std::vector<TrialRecord> trials;
        QHash<qint64, int> submissions;
        bool finished = false; // the invocation has a finish time
    };
    const std::filesystem::path path(storePath_.toStdString());
    const std::string model = model_.toStdString();
    const qint64 invocationId = invocationId_;
    finalStorePollRunning_ = final;
    storePolls_.start(
        [path, model, invocationId](const JobControl& job) {
            Snapshot snapshot;
            auto store = Store::open(path, OpenMode::MustExist);
            if (!store) {
                return snapshot;
            }
            TrialFilter filter;
            if (!model.empty()) {
                filter.model = model;
            }
            auto trials = (*store)->loadTrials(filter);
            if (!trials) {
                return snapshot;
            }
            for (TrialRecord& trial : *trials) {
                if (job.cancelled()) {
                    return snapshot;
                }
                if (trial.invocationId != invocationId) {
                    continue;
                }
                if (trial.status == TrialStatus::Running) {
                    if (auto submissions = (*store)->submissions(trial.id)) {
                        snapshot.submissions.insert(trial.id, int(submissions->size()));
                    }
                }
                snapshot.trials.push_back(std::move(trial));
            }
            if (auto invocations = (*store)->invocations()) {
                for (const InvocationRecord& invocation : *invocations) {
                    if (invocation.id == invocationId) {
                        snapshot.finished = !invocation.finishedAt.empty();
                    }
                }
            }
            return snapshot;
        },
        [this, final](Snapshot& snapshot) {
            if (state_ != State::Following || source_ != Source::Store) {
                return;
            }
            emit storeSnapshot(snapshot.trials, snapshot.submissions);
            if (final || snapshot.finished) {
                int failed = 0;
                int interrupted = 0;
                int running = 0;
                for (const TrialRecord& trial : snapshot.trials) {
                    failed += trial.status == TrialStatus::InfrastructureError;
                    interrupted += trial.status == TrialStatus::Interrupted;
                    running += trial.status == TrialStatus::Running;
                }
                const QString status = interrupted + running > 0 ? QStringLiteral("interrupted")
                                       : failed > 0              ? QStringLiteral("incomplete")
                                                                 : QStringLiteral("ended");
                finish(-1, status,
                       tr("the run (pid %1) ended: %2 trials recorded, %3 failed, %4 interrupted or cut off")
                           .arg(pid_)
                           .arg(snapshot.trials.size())
                           .arg(failed)
                           .arg(interrupted + running));
            }
        });
}

void RunSession::finish(int exitCode, const QString& status, const QString& message) {
    timer_->stop();
    state_ = State::Ended;
    exitCode_ = exitCode;
    emit ended(exitCode, status, message);
}

} // namespace mkb::gui
