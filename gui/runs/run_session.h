// One `mkb run` followed by the workbench: started detached (so it outlives the window) with its JSON progress and
// its stderr written to files beside the store, then followed by tailing those files; or, for a run started
// elsewhere, followed by polling the store. Cancel sends SIGINT, as mkb run documents; Resume runs it again.
#pragma once

#include "core/protocol/progress.h"
#include "core/records/store_records.h"
#include "core/records/trial.h"
#include "gui/common/job_runner.h"

#include <QFile>
#include <QHash>
#include <QObject>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

class QTimer;

namespace mkb::gui {

/// The files of a run the workbench started: <store stem>.runs/run-<stamp>.{json,jsonl,log} beside the store.
struct RunFiles {
    QString record;   // the .json sidecar: pid, program, arguments, file names
    QString progress; // mkb run's stdout: one JSON event per line
    QString log;      // mkb run's stderr
    qint64 pid = 0;
    QString program;
    QStringList arguments;
    QString startedAt;
};

/// A run of the project still going: an unfinished invocation, or a sidecar, whose mkb process is alive.
struct LiveRun {
    qint64 pid = 0;
    std::optional<RunFiles> files;              // when the workbench started it: follow its progress file
    std::optional<InvocationRecord> invocation; // from the store: follow the store when there are no files
    QString model;                              // the run's model (from the invocation's settings), for store polling
};

/// The folder holding the run files of this store: "<dir>/<stem>.runs".
QString runFilesFolder(const QString& storePath);
/// Whether pid is a live mkb process (not a zombie, and named mkb when /proc tells).
bool isLiveMkbProcess(qint64 pid);
/// The newest run the workbench started in this project that is still going (from the sidecars; cheap).
std::optional<LiveRun> findLiveRunFromFiles(const QString& storePath);
/// The newest unfinished invocation of the store whose mkb process is alive (opens the store: not on the GUI thread).
std::optional<LiveRun> findLiveRunInStore(const QString& storePath);
/// The newest run of the project that is still going, if any: sidecars first (their progress can be replayed),
/// else the store's unfinished invocations.
std::optional<LiveRun> findLiveRun(const QString& storePath);
/// The newest run the workbench started in this project (alive or not), from its sidecar.
std::optional<RunFiles> findLastRunFiles(const QString& storePath);
/// The arguments of an invocation's recorded command line ("mkb run --model m …" → {"run", "--model", "m", …});
/// arguments holding spaces cannot be told apart there and come back split.
QStringList argumentsFromCommandLine(const QString& commandLine);

class RunSession : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Following, Ended };
    enum class Source { None, ProgressFile, Store };

    explicit RunSession(QObject* parent = nullptr);
    ~RunSession() override;

    /// Starts `program arguments` detached, writing the run files for storePath; "" on success, else why not.
    QString start(const QString& program, const QStringList& arguments, const QString& storePath);
    /// Follows a run found by findLiveRun (replaying its progress file from the start when it has one).
    void attach(const LiveRun& run, const QString& storePath);
    /// Asks the run to stop (SIGINT): mkb finishes what it must and records the rest as interrupted.
    bool cancel();
    /// Starts the last run's command again (mkb run is convergent: it picks up where the run stopped).
    QString resume();
    /// Stops following (the run itself goes on).
    void detach();

    State state() const { return state_; }
    Source source() const { return source_; }
    qint64 pid() const { return pid_; }
    QString program() const { return program_; }
    QStringList arguments() const { return arguments_; }
    const RunFiles& files() const { return files_; }
    /// The last counts seen (from progress events).
    const ProgressCounts& counts() const { return counts_; }
    /// The run_finished event's exit code, or -1 when the run ended without one.
    int exitCode() const { return exitCode_; }

    /// How often the files are read and the process checked; tests shorten it.
    void setPollIntervalMs(int ms);

signals:
    void started();
    void runEvent(const mkb::ProgressEvent& event);
    void logText(const QString& text);
    /// Store mode: the run's trials and how many submissions each running trial made so far.
    void storeSnapshot(const std::vector<mkb::TrialRecord>& trials, const QHash<qint64, int>& submissionCounts);
    /// The run ended: its exit code (-1 unknown), mkb's final status ("complete", "interrupted", … or "ended")
    /// and a one-line message.
    void ended(int exitCode, const QString& status, const QString& message);

private:
    void poll();
    void readProgress(bool final);
    void readLog();
    void pollStore(bool final);
    void finish(int exitCode, const QString& status, const QString& message);

    State state_ = State::Idle;
    Source source_ = Source::None;
    QString storePath_;
    qint64 pid_ = 0;
    QString program_;
    QStringList arguments_;
    RunFiles files_;
    QString model_;
    qint64 invocationId_ = 0;
    qint64 progressOffset_ = 0;
    qint64 logOffset_ = 0;
    QByteArray partialLine_;
    ProgressCounts counts_;
    int exitCode_ = -1;
    bool sawRunFinished_ = false;
    bool finalStorePollRunning_ = false; // the store poll running is the final one, which no other replaces
    QTimer* timer_ = nullptr;
    int ticks_ = 0;
    JobRunner storePolls_{this}; // a newer (final) poll supersedes an older one
};

} // namespace mkb::gui
