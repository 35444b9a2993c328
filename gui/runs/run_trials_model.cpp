// RunTrialsModel: rows keyed by coordinate; events and store snapshots only ever move a row forward, and a Slurm
// run's events fill in each trial's job and its state.
#include "gui/runs/run_trials_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>

namespace mkb::gui {
namespace {

QString stateForPlan(const QString& plan) {
    if (plan == QLatin1String("reuse")) {
        return QStringLiteral("reused");
    }
    if (plan == QLatin1String("stale")) {
        return QStringLiteral("stale (kept)");
    }
    return QStringLiteral("planned");
}

QString stateForStatus(TrialStatus status) {
    switch (status) {
    case TrialStatus::Running:
        return QStringLiteral("running");
    case TrialStatus::Finished:
        return QStringLiteral("finished");
    case TrialStatus::Skipped:
        return QStringLiteral("skipped");
    case TrialStatus::InfrastructureError:
        return QStringLiteral("failed");
    case TrialStatus::Interrupted:
        return QStringLiteral("interrupted");
    }
    return {};
}

/// "1234_5" sorts by array, then task, as numbers (so 1234_10 follows 1234_9); other ids after them, as text.
QVariant jobSortKey(const QString& jobId) {
    const QString array = jobId.section(QLatin1Char('_'), 0, 0);
    const QString task = jobId.section(QLatin1Char('_'), 1, 1);
    bool arrayOk = false;
    bool taskOk = task.isEmpty();
    const qlonglong arrayNumber = array.toLongLong(&arrayOk);
    const qlonglong taskNumber = task.isEmpty() ? 0 : task.toLongLong(&taskOk);
    if (jobId.isEmpty() || !arrayOk || !taskOk) {
        return QVariant(); // a missing value: TableSortProxy puts it last
    }
    return QVariant(arrayNumber * 1000000 + taskNumber);
}

/// Slurm's final states other than COMPLETED: the job did not end as it should.
bool jobEndedBadly(const QString& state) {
    static const QStringList bad = {QStringLiteral("FAILED"),        QStringLiteral("CANCELLED"),
                                    QStringLiteral("TIMEOUT"),       QStringLiteral("NODE_FAIL"),
                                    QStringLiteral("OUT_OF_MEMORY"), QStringLiteral("PREEMPTED"),
                                    QStringLiteral("BOOT_FAIL"),     QStringLiteral("DEADLINE")};
    return bad.contains(state);
}

} // namespace

RunTrialsModel::RunTrialsModel(QObject* parent) : TableModel(parent) {}

void RunTrialsModel::clear() {
    beginResetModel();
    rows_.clear();
    rowByCoordinate_.clear();
    hasJobs_ = false;
    endResetModel();
}

void RunTrialsModel::takeJob(RunTrialRow& trial, const ProgressEvent& event) {
    if (!event.jobId.empty()) {
        trial.jobId = QString::fromStdString(event.jobId);
        hasJobs_ = true;
    }
    if (!event.jobState.empty()) {
        trial.jobState = QString::fromStdString(event.jobState);
    }
}

int RunTrialsModel::rowIndexFor(const QString& coordinate) {
    const auto found = rowByCoordinate_.constFind(coordinate);
    if (found != rowByCoordinate_.constEnd()) {
        return *found;
    }
    const int row = int(rows_.size());
    beginInsertRows({}, row, row);
    RunTrialRow added;
    added.coordinate = coordinate;
    added.state = QStringLiteral("planned");
    rows_.push_back(added);
    rowByCoordinate_.insert(coordinate, row);
    endInsertRows();
    return row;
}

void RunTrialsModel::rowChanged(int row) {
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void RunTrialsModel::applyEvent(const ProgressEvent& event) {
    switch (event.kind) {
    case ProgressEventKind::Plan: {
        beginResetModel();
        rows_.clear();
        rowByCoordinate_.clear();
        hasJobs_ = false;
        for (const PlannedTrial& planned : event.planned) {
            RunTrialRow row;
            row.coordinate = QString::fromStdString(planned.coordinate);
            row.problem = QString::fromStdString(planned.problem);
            row.arm = QString::fromStdString(planned.arm);
            row.plan = QString::fromStdString(planned.status);
            row.state = stateForPlan(row.plan);
            row.message = QString::fromStdString(planned.reason);
            rowByCoordinate_.insert(row.coordinate, int(rows_.size()));
            rows_.push_back(row);
        }
        endResetModel();
        return;
    }
    case ProgressEventKind::TrialStarted: {
        const int row = rowIndexFor(QString::fromStdString(event.coordinate));
        RunTrialRow& trial = rows_[size_t(row)];
        trial.state = QStringLiteral("running");
        trial.trialId = event.trialId;
        trial.message.clear();
        takeJob(trial, event);
        rowChanged(row);
        return;
    }
    case ProgressEventKind::Submission: {
        const int row = rowIndexFor(QString::fromStdString(event.coordinate));
        RunTrialRow& trial = rows_[size_t(row)];
        trial.trialId = event.trialId;
        trial.submissions = std::max(trial.submissions, event.submissionIndex);
        trial.passed = event.passed;
        trial.speedup = event.speedup;
        trial.message = QString::fromStdString(event.message);
        takeJob(trial, event);
        rowChanged(row);
        return;
    }
    case ProgressEventKind::TrialFinished: {
        const int row = rowIndexFor(QString::fromStdString(event.coordinate));
        RunTrialRow& trial = rows_[size_t(row)];
        trial.trialId = event.trialId;
        trial.state = event.status.empty() ? QStringLiteral("finished") : QString::fromStdString(event.status);
        trial.passed = event.passed;
        trial.speedup = event.speedup;
        trial.message = QString::fromStdString(event.message);
        takeJob(trial, event);
        rowChanged(row);
        return;
    }
    case ProgressEventKind::JobState: {
        // The job's state only: the trial's own state moves with trial_started and trial_finished.
        const int row = rowIndexFor(QString::fromStdString(event.coordinate));
        takeJob(rows_[size_t(row)], event);
        rowChanged(row);
        return;
    }
    case ProgressEventKind::RunFinished:
    case ProgressEventKind::Retimed: // re-timing is not a trial's state
    case ProgressEventKind::Note:    // about the run (a lost device), not a trial
        return;
    }
}

void RunTrialsModel::applyStoreTrials(const std::vector<TrialRecord>& trials,
                                      const QHash<qint64, int>& submissionCounts) {
    for (const TrialRecord& record : trials) {
        const int row = rowIndexFor(QString::fromStdString(record.coordinate));
        RunTrialRow& trial = rows_[size_t(row)];
        trial.trialId = record.id;
        trial.arm = QString::fromStdString(record.arm);
        trial.problem = QString::fromStdString(record.problemSlug);
        trial.state = stateForStatus(record.status);
        trial.submissions = std::max(trial.submissions, submissionCounts.value(record.id, 0));
        if (record.finalVerdict) {
            trial.passed = record.finalVerdict->passed;
            trial.speedup = record.finalVerdict->speedupVsEager;
        }
        trial.message = QString::fromStdString(record.error);
        rowChanged(row);
    }
}

const RunTrialRow* RunTrialsModel::rowFor(const QString& coordinate) const {
    const auto found = rowByCoordinate_.constFind(coordinate);
    return found == rowByCoordinate_.constEnd() ? nullptr : &rows_[size_t(*found)];
}

int RunTrialsModel::countInState(const QString& state) const {
    return int(std::count_if(rows_.begin(), rows_.end(), [&](const RunTrialRow& row) { return row.state == state; }));
}

QVariant RunTrialsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const RunTrialRow& row = rows_[size_t(index.row())];
    if (role == SortRole) {
        switch (index.column()) {
        case SubmissionsColumn:
            return row.submissions;
        case SpeedupColumn:
            return sortKey(row.speedup);
        case TrialColumn:
            return row.trialId;
        case JobColumn:
            return jobSortKey(row.jobId);
        default:
            break;
        }
        role = Qt::DisplayRole;
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case CoordinateColumn:
            return row.coordinate;
        case StateColumn:
            return row.state;
        case JobColumn:
            return row.jobId;
        case JobStateColumn:
            return row.jobState;
        case SubmissionsColumn:
            return row.submissions > 0 ? QVariant(row.submissions) : QVariant(QString());
        case PassedColumn:
            return row.passed ? (*row.passed ? tr("passed") : tr("failed")) : QString();
        case SpeedupColumn:
            return row.speedup ? QStringLiteral("%1×").arg(*row.speedup, 0, 'f', 2) : QString();
        case TrialColumn:
            return row.trialId > 0 ? QVariant(row.trialId) : QVariant(QString());
        case MessageColumn:
            return row.message;
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == MessageColumn) {
        return row.message;
    }
    if (role == Qt::TextAlignmentRole &&
        (index.column() == SubmissionsColumn || index.column() == SpeedupColumn || index.column() == TrialColumn)) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ForegroundRole && index.column() == StateColumn) {
        if (row.state == QLatin1String("failed") || row.state == QLatin1String("interrupted")) {
            return QBrush(QColor(0xc0, 0x39, 0x2b));
        }
        if (row.state == QLatin1String("running")) {
            return QBrush(QColor(0x1f, 0x6f, 0xb4));
        }
    }
    if (role == Qt::ForegroundRole && index.column() == JobStateColumn) {
        if (jobEndedBadly(row.jobState)) {
            return QBrush(QColor(0xc0, 0x39, 0x2b));
        }
        if (row.jobState == QLatin1String("RUNNING")) {
            return QBrush(QColor(0x1f, 0x6f, 0xb4));
        }
    }
    return {};
}

QVariant RunTrialsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case CoordinateColumn:
        return tr("Trial");
    case StateColumn:
        return tr("State");
    case JobColumn:
        return tr("Job");
    case JobStateColumn:
        return tr("Job state");
    case SubmissionsColumn:
        return tr("Submissions");
    case PassedColumn:
        return tr("Verdict");
    case SpeedupColumn:
        return tr("Speedup");
    case TrialColumn:
        return tr("Id");
    case MessageColumn:
        return tr("Message");
    default:
        return {};
    }
}

} // namespace mkb::gui
