// One import of a MetaKernelBench results folder into the project store, run off the GUI thread: progress as
// signals (merged, so a large import posts few events), a cancel that stops between two trials, and the outcome.
#pragma once

#include "gui/common/job_runner.h"

#include <QObject>
#include <QString>
#include <memory>

namespace mkb::gui {

/// What an import came to, for the status bar and the views.
struct ImportOutcome {
    bool ok = false;        // imported (issues may have been skipped); false when failed or cancelled
    bool cancelled = false; // stopped between two trials; importing again completes it
    bool changed = false;   // the store holds something new: the views reload
    QString summary;        // core's one-line summary (importOutcomeText), or why the import failed
};

class ImportSession : public QObject {
    Q_OBJECT
public:
    explicit ImportSession(QObject* parent = nullptr);
    /// Cancels a running import and waits for it (it stops after its current trial).
    ~ImportSession() override;

    /// Starts importing folder into the store at storePath (opened by the import job: a Store is single-threaded).
    /// Returns false, and starts nothing, while an import runs.
    bool start(const QString& storePath, const QString& folder);
    /// Asks the running import to stop after its current trial.
    void cancel();

    bool isRunning() const { return state_ != nullptr; }
    bool isCancelling() const;
    /// The folder being imported (or last imported).
    QString folder() const { return folder_; }

signals:
    /// Trial folders handled, all of them, the trial being imported ("" once all are handled). Consecutive updates
    /// may be merged; the last one has done == total.
    void progress(qint64 done, qint64 total, const QString& where);
    void finished(const mkb::gui::ImportOutcome& outcome);

private:
    struct State;
    void showProgress();

    std::shared_ptr<State> state_;
    QString folder_;
    JobRunner imports_{this}; // last: cancels and waits for the import before the state it reports to goes
};

} // namespace mkb::gui
