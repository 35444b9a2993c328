// The live trial table of a run: one row per planned trial, updated from progress events or from the store.
#pragma once

#include "core/protocol/progress.h"
#include "core/records/trial.h"

#include "gui/common/table_model.h"

#include <QHash>
#include <optional>
#include <vector>

namespace mkb::gui {

struct RunTrialRow {
    QString coordinate;
    QString problem;
    QString arm;
    QString plan;  // the planner's status: run, rerun, reuse, stale, redo, skip
    QString state; // planned, running, finished, skipped, failed, interrupted, reused, …
    qint64 trialId = 0;
    int submissions = 0; // feedback submissions seen so far
    std::optional<bool> passed;
    std::optional<double> speedup;
    QString message;
    QString jobId;    // the trial's Slurm job ("1234_5"); "" for local runs
    QString jobState; // the job's state as Slurm last reported it (PENDING, RUNNING, COMPLETED, …)
};

class RunTrialsModel : public TableModel {
    Q_OBJECT
public:
    enum Column {
        CoordinateColumn,
        StateColumn,
        JobColumn,      // Slurm runs only (hasJobs)
        JobStateColumn, // Slurm runs only
        SubmissionsColumn,
        PassedColumn,
        SpeedupColumn,
        TrialColumn,
        MessageColumn,
        ColumnCount
    };

    explicit RunTrialsModel(QObject* parent = nullptr);

    void clear();
    /// Takes in one progress event: a plan fills the rows (one reset), trial events update or add one row.
    void applyEvent(const ProgressEvent& event);
    /// Takes in the store's view of a run (reattached to a run whose progress lines are not readable): each trial
    /// updates the row of its coordinate or adds one; submissionCounts maps trial id to submissions so far.
    void applyStoreTrials(const std::vector<TrialRecord>& trials, const QHash<qint64, int>& submissionCounts = {});

    const std::vector<RunTrialRow>& rows() const { return rows_; }
    const RunTrialRow* rowFor(const QString& coordinate) const;
    int countInState(const QString& state) const;
    /// Whether any trial of the run is a Slurm job: the view shows the job columns only then.
    bool hasJobs() const { return hasJobs_; }

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int tableRows() const override { return int(rows_.size()); }
    int tableColumns() const override { return ColumnCount; }
    int rowIndexFor(const QString& coordinate); // adds a row when missing
    void takeJob(RunTrialRow& trial, const ProgressEvent& event);
    void rowChanged(int row);

    std::vector<RunTrialRow> rows_;
    QHash<QString, int> rowByCoordinate_;
    bool hasJobs_ = false;
};

} // namespace mkb::gui
