// OverviewModel: the overview's rows (gui/project/overview_rows) as a table, each number with its interval.
#include "gui/overview/overview_model.h"

#include <algorithm>

namespace mkb::gui {
namespace {

QString percent(const std::optional<double>& share) {
    return share ? QString::number(*share * 100.0, 'f', 1) + QLatin1Char('%') : QStringLiteral("—");
}

QString signedPercent(const std::optional<double>& value) {
    return value ? QString::asprintf("%+.1f%%", *value * 100.0) : QStringLiteral("—");
}

/// ΔGM with its 95% CI: "+1.2% [−0.4%, +2.9%]"; "+1.2% […]" while the interval is computed; the point alone when
/// there is no interval (one resolved comparison).
QString withInterval(const std::optional<double>& value, const std::optional<analysis::Interval>& interval,
                     bool pending) {
    if (value && pending) {
        return signedPercent(value) + QStringLiteral(" […]");
    }
    if (!value || !interval) {
        return signedPercent(value);
    }
    return signedPercent(value) + QStringLiteral(" [") + signedPercent(interval->low) + QStringLiteral(", ") +
           signedPercent(interval->high) + QLatin1Char(']');
}

QString score(const std::optional<double>& value, bool signedValue = false) {
    if (!value) {
        return QStringLiteral("—");
    }
    return signedValue ? QString::asprintf("%+.1f", *value) : QString::number(*value, 'f', 1);
}

/// S or lift with its 95% CI: "78.3 [70.0, 85.0]", "+1.7 [−3.3, +6.7]"; "78.3 […]" while the interval is computed;
/// the point alone without an interval.
QString scoreWithInterval(const std::optional<double>& value, const std::optional<analysis::Interval>& interval,
                          bool pending, bool signedValue = false) {
    if (value && pending) {
        return score(value, signedValue) + QStringLiteral(" […]");
    }
    if (!value || !interval) {
        return score(value, signedValue);
    }
    return score(value, signedValue) + QStringLiteral(" [") + score(interval->low, signedValue) + QStringLiteral(", ") +
           score(interval->high, signedValue) + QLatin1Char(']');
}

} // namespace

OverviewModel::OverviewModel(QObject* parent) : TableModel(parent) {}

void OverviewModel::setRows(std::vector<OverviewRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

void OverviewModel::setIntervals(const std::vector<OverviewRow>& rows) {
    const bool sameGroups = std::equal(rows.begin(), rows.end(), rows_.begin(), rows_.end(),
                                       [](const OverviewRow& left, const OverviewRow& right) {
                                           return left.model == right.model && left.direction == right.direction;
                                       });
    if (!sameGroups) {
        setRows(rows);
        return;
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows_[i].deltaGeometricMeanCi = rows[i].deltaGeometricMeanCi;
        rows_[i].baseScoreCi = rows[i].baseScoreCi;
        rows_[i].skillScoreCi = rows[i].skillScoreCi;
        rows_[i].liftCi = rows[i].liftCi;
        rows_[i].intervalsPending = rows[i].intervalsPending;
    }
    if (!rows_.empty()) { // ΔGM to the lift: the columns with intervals (and H between them)
        emit dataChanged(index(0, DeltaGmColumn), index(int(rows_.size()) - 1, LiftColumn));
    }
}

QVariant OverviewModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const OverviewRow& row = rows_[size_t(index.row())];
    const auto numberOf = &TableModel::sortKey;
    if (role == Qt::TextAlignmentRole) {
        return QVariant::fromValue(index.column() >= ComparisonsColumn ? Qt::AlignRight | Qt::AlignVCenter
                                                                       : Qt::AlignLeft | Qt::AlignVCenter);
    }
    const bool intervalColumn = index.column() == DeltaGmColumn || index.column() == BaseScoreColumn ||
                                index.column() == SkillScoreColumn || index.column() == LiftColumn;
    if (role == Qt::ToolTipRole && intervalColumn && row.intervalsPending) {
        return tr("The 95% bootstrap interval is being computed");
    }
    if (role == Qt::ToolTipRole) { // a column narrower than its text cuts it: the tooltip holds it whole
        switch (Column(index.column())) {
        case DeltaGmColumn:
            return tr("ΔGM %1 (95% bootstrap CI over the group's resolved comparisons)")
                .arg(withInterval(row.deltaGeometricMean, row.deltaGeometricMeanCi, false));
        case BaseScoreColumn:
            return tr("S base %1 (95% bootstrap CI over the group's cells)")
                .arg(scoreWithInterval(row.baseScore, row.baseScoreCi, false));
        case SkillScoreColumn:
            return tr("S skill %1 (95% bootstrap CI over the group's cells)")
                .arg(scoreWithInterval(row.skillScore, row.skillScoreCi, false));
        case LiftColumn:
            return tr("Lift %1 (95% bootstrap CI over the group's cells)%2")
                .arg(scoreWithInterval(row.lift, row.liftCi, false, true),
                     row.liftCi && row.liftCi->low <= 0 && row.liftCi->high >= 0 ? tr(": within noise") : QString());
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole && role != SortRole) {
        return {};
    }
    const bool display = role == Qt::DisplayRole;
    switch (Column(index.column())) {
    case ModelColumn:
        return QString::fromStdString(row.model);
    case DirectionColumn:
        return QString::fromStdString(row.direction);
    case ComparisonsColumn:
        return qulonglong(row.comparisons);
    case ResolvedColumn:
        return qulonglong(row.resolved);
    case TransferRateColumn:
        return display ? percent(row.transferRate) : numberOf(row.transferRate);
    case DeltaGmColumn:
        return display ? withInterval(row.deltaGeometricMean, row.deltaGeometricMeanCi, row.intervalsPending)
                       : numberOf(row.deltaGeometricMean);
    case HarmRateColumn:
        return display ? percent(row.harmRate) : numberOf(row.harmRate);
    case BaseScoreColumn:
        return display ? scoreWithInterval(row.baseScore, row.baseScoreCi, row.intervalsPending)
                       : numberOf(row.baseScore);
    case SkillScoreColumn:
        return display ? scoreWithInterval(row.skillScore, row.skillScoreCi, row.intervalsPending)
                       : numberOf(row.skillScore);
    case LiftColumn:
        return display ? scoreWithInterval(row.lift, row.liftCi, row.intervalsPending, true) : numberOf(row.lift);
    case BasePassColumn:
        return display ? percent(row.basePassRate) : numberOf(row.basePassRate);
    case SkillPassColumn:
        return display ? percent(row.skillPassRate) : numberOf(row.skillPassRate);
    case SourcePassedColumn:
        return display ? percent(row.sourcePassed) : numberOf(row.sourcePassed);
    case SkillCoverageColumn:
        return display ? percent(row.skillCoverage) : numberOf(row.skillCoverage);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant OverviewModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    static const char* const titles[ColumnCount] = {QT_TR_NOOP("Model"),
                                                    QT_TR_NOOP("Direction"),
                                                    QT_TR_NOOP("Comparisons"),
                                                    QT_TR_NOOP("Resolved"),
                                                    QT_TR_NOOP("T"),
                                                    QT_TR_NOOP("ΔGM"),
                                                    QT_TR_NOOP("H"),
                                                    QT_TR_NOOP("S base"),
                                                    QT_TR_NOOP("S skill"),
                                                    QT_TR_NOOP("Lift"),
                                                    QT_TR_NOOP("R@0 base"),
                                                    QT_TR_NOOP("R@0 skill"),
                                                    QT_TR_NOOP("Source passed"),
                                                    QT_TR_NOOP("Skill coverage")};
    static const char* const tips[ColumnCount] = {"",
                                                  "",
                                                  "Cell-replicates in the group, resolved or not",
                                                  "Comparisons with all three arms graded",
                                                  "Transfer rate: share of resolved comparisons the skill helped",
                                                  "Geometric mean of paired ratios − 1, with its 95% bootstrap CI "
                                                  "over the group's resolved comparisons (none for a single one)",
                                                  "Harm rate: share of resolved comparisons the skill harmed",
                                                  "Ladder score S of the solo target attempts, with its 95% "
                                                  "bootstrap CI over the group's cells (docs/metrics.md)",
                                                  "Ladder score S of the skill-conditioned attempts, with its 95% "
                                                  "bootstrap CI over the group's cells",
                                                  "S skill − S base, with its 95% bootstrap CI; under the paired "
                                                  "rule both arms are ranked on one re-timing (docs/metrics.md, "
                                                  "\"Paired ladder\")",
                                                  "Pass rate of the base",
                                                  "Pass rate of the skill outcome",
                                                  "Share of resolved comparisons whose source passed",
                                                  "Share of resolved comparisons whose source handed over a skill"};
    if (section < 0 || section >= ColumnCount) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        return tr(titles[section]);
    }
    if (role == Qt::ToolTipRole && tips[section][0] != '\0') {
        return tr(tips[section]);
    }
    return {};
}

} // namespace mkb::gui
