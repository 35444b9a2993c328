// One line of `mkb run --progress json` as plain data (the events core/protocol/progress.h writes).
#pragma once

#include <QList>
#include <QString>
#include <optional>

class QByteArray;

namespace mkb::gui {

enum class RunEventKind { Plan, TrialStarted, Submission, TrialFinished, RunFinished };

struct RunCounts {
    int total = 0;
    int done = 0;
    int running = 0;
    int failed = 0;
    int interrupted = 0;
    int passed = 0;
    double elapsedSeconds = 0;
    std::optional<double> etaSeconds;
};

/// One entry of the plan event: a trial the run will run, rerun, reuse, keep stale or skip.
struct PlannedTrial {
    QString coordinate;
    QString problem;
    QString arm;
    QString status; // run, rerun, reuse, stale, redo, skip (mkb's plan statuses)
    QString reason;
};

struct RunEvent {
    RunEventKind kind = RunEventKind::Plan;
    RunCounts counts;
    QList<PlannedTrial> plan; // kind Plan
    QString coordinate;       // trial events
    qint64 trialId = 0;
    QString status;  // trial_finished: finished, skipped, …; run_finished: complete, interrupted, …
    QString message; // one line
    int submissionIndex = 0;
    bool counted = false;
    std::optional<bool> passed;
    std::optional<double> speedup;
    int submissionsLeft = 0;
    double secondsLeft = 0;
    int exitCode = 0; // run_finished
};

/// The event on one line, or nullopt for a line that is not a progress event (blank, foreign output).
std::optional<RunEvent> parseRunEventLine(const QByteArray& line);

/// "3/12 done · 2 running · 1 failed · 2 passed · 00:41 elapsed · ETA 01:10".
QString describeCounts(const RunCounts& counts);

} // namespace mkb::gui
