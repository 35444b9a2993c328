// ComparisonsModel: caches each row's tiers, speedups, ratio, outcome and standing once per setComparisons.
#include "gui/comparisons/comparisons_model.h"

#include "core/analysis/transfer.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QSet>
#include <algorithm>

namespace mkb::gui {
namespace {

QString verdictText(const analysis::Attempt* attempt) {
    if (!attempt) {
        return {};
    }
    if (attempt->skipped) {
        return QStringLiteral("skipped");
    }
    return attempt->passed ? QStringLiteral("passed") : QStringLiteral("failed");
}

QString numberText(double value, int decimals) {
    return value < 0 ? QString() : QString::number(value, 'f', decimals);
}

} // namespace

QString outcomeText(const analysis::Comparison& comparison, const analysis::AnalysisSettings& settings) {
    if (!comparison.resolved()) {
        return {};
    }
    const analysis::OutcomeJudgement judgement = analysis::judgeOutcome(comparison, settings);
    const QString outcome = QString::fromLatin1(analysis::toString(judgement.outcome));
    return judgement.withinNoise ? QObject::tr("%1 (within noise)").arg(outcome) : outcome;
}

QString pairedCiText(const analysis::PairedTiming& paired) {
    return QStringLiteral("[%1, %2]").arg(paired.ciLow, 0, 'f', 3).arg(paired.ciHigh, 0, 'f', 3);
}

ComparisonsModel::ComparisonsModel(QObject* parent) : TableModel(parent) {}

ComparisonsModel::RowCache ComparisonsModel::cacheFor(const analysis::Comparison& comparison) const {
    RowCache row;
    row.model = QString::fromStdString(comparison.model);
    row.direction = QString::fromStdString(comparison.direction);
    row.family = QString::fromStdString(comparison.family);
    // Arms graded under different boundaries are never paired (analysis::Comparison::notComparable), as in the report.
    row.boundary =
        comparison.notComparable() ? QStringLiteral("not comparable") : QString::fromStdString(comparison.boundary());
    row.sourceVerdict = verdictText(comparison.source.get());
    if (comparison.source) {
        row.sourceTier = analysis::tier(*comparison.source, settings_);
    }
    if (comparison.base) {
        row.baseTier = analysis::tier(*comparison.base, settings_);
        row.baseSpeedup = comparison.base->passed ? comparison.base->speedup : 0;
    }
    if (comparison.skill && !comparison.skill->skipped) {
        row.skillTier = analysis::tier(*comparison.skill, settings_);
        row.skillSpeedup = comparison.skill->passed ? comparison.skill->speedup : 0;
    } else if (comparison.skillSkipped() && comparison.base) {
        row.skillTier = row.baseTier; // a skipped skill arm counts as its base
        row.skillSpeedup = row.baseSpeedup;
    }
    QStringList tags;
    if (comparison.resolved()) {
        row.pairedRatio = analysis::pairedRatio(comparison, settings_);
        row.outcome = outcomeText(comparison, settings_);
        const analysis::OutcomeJudgement judgement = analysis::judgeOutcome(comparison, settings_);
        row.significant = analysis::isSignificant(judgement);
        row.withinNoise = judgement.withinNoise;
        row.fellBack = judgement.fellBack;
        analysis::AnalysisSettings unpaired = settings_;
        unpaired.timing = analysis::TimingRule::Unpaired;
        row.unpairedOutcome = QString::fromLatin1(analysis::toString(analysis::transferOutcome(comparison, unpaired)));
        if (judgement.ratio) {
            row.pairedCi = pairedCiText(*judgement.ratio);
            row.outcomeTip = tr("Paired rule: re-timed ratio %1, 95% CI %2, %3 rounds%4")
                                 .arg(judgement.ratio->ratio, 0, 'f', 3)
                                 .arg(row.pairedCi)
                                 .arg(judgement.ratio->n)
                                 .arg(judgement.withinNoise ? tr(": the CI contains 1, within noise") : QString());
        } else if (judgement.fellBack) {
            row.outcomeTip = tr("No paired re-timing: judged by the unpaired rule on two separate gradings, which "
                                "cannot tell a 5% change from noise");
        } else if (judgement.decisive) {
            row.outcomeTip = tr("Decided by pass/fail");
        }
        row.standing = QString::fromLatin1(analysis::toString(analysis::sourceStanding(comparison, settings_)));
    } else {
        tags << (comparison.notComparable() ? QStringLiteral("not comparable") : QStringLiteral("unresolved"));
    }
    if (comparison.skillSkipped()) {
        tags << QStringLiteral("skill skipped");
    }
    if (comparison.source && !comparison.source->wroteSkill) {
        tags << QStringLiteral("no source skill");
    }
    row.tags = tags.join(QStringLiteral(", "));
    return row;
}

void ComparisonsModel::setComparisons(std::vector<analysis::Comparison> comparisons,
                                      const analysis::AnalysisSettings& settings) {
    beginResetModel();
    comparisons_ = std::move(comparisons);
    settings_ = settings;
    cache_.clear();
    searchTexts_.clear();
    cache_.reserve(comparisons_.size());
    for (const analysis::Comparison& comparison : comparisons_) {
        cache_.push_back(cacheFor(comparison));
    }
    buildSearchTexts(); // here, once per data set, so the first keystroke costs what the others do
    endResetModel();
}

const analysis::Comparison* ComparisonsModel::comparisonAt(int row) const {
    return row >= 0 && size_t(row) < comparisons_.size() ? &comparisons_[size_t(row)] : nullptr;
}

QVariant ComparisonsModel::displayOf(int row, int column) const {
    const analysis::Comparison& comparison = comparisons_[size_t(row)];
    const RowCache& cache = cache_[size_t(row)];
    auto tierText = [](int tier) { return tier < 0 ? QString() : QString::number(tier); };
    switch (Column(column)) {
    case ModelColumn:
        return cache.model;
    case DirectionColumn:
        return cache.direction;
    case ProblemColumn:
        return QStringLiteral("%1 %2")
            .arg(comparison.problemNumber, 2, 10, QLatin1Char('0'))
            .arg(QString::fromStdString(comparison.problemSlug));
    case FamilyColumn:
        return cache.family;
    case ReplicateColumn:
        return comparison.replicate;
    case SourceVerdictColumn:
        return cache.sourceVerdict;
    case SourceTierColumn:
        return tierText(cache.sourceTier);
    case BaseTierColumn:
        return tierText(cache.baseTier);
    case BaseSpeedupColumn:
        return numberText(cache.baseSpeedup, 2);
    case SkillTierColumn:
        return tierText(cache.skillTier);
    case SkillSpeedupColumn:
        return numberText(cache.skillSpeedup, 2);
    case PairedRatioColumn:
        return numberText(cache.pairedRatio, 3);
    case OutcomeColumn:
        return cache.outcome;
    case StandingColumn:
        return cache.standing;
    case TagsColumn:
        return cache.tags;
    case PairedCiColumn:
        return cache.pairedCi;
    case UnpairedOutcomeColumn:
        return cache.unpairedOutcome;
    case BoundaryColumn:
        return cache.boundary;
    case ColumnCount:
        break;
    }
    return {};
}

QVariant ComparisonsModel::sortOf(int row, int column) const {
    const analysis::Comparison& comparison = comparisons_[size_t(row)];
    const RowCache& cache = cache_[size_t(row)];
    const auto unlessMissing = [](double value) { return value < 0 ? QVariant() : QVariant(value); };
    switch (Column(column)) {
    case ProblemColumn:
        return comparison.problemNumber;
    case ReplicateColumn:
        return comparison.replicate;
    case SourceTierColumn:
        return unlessMissing(cache.sourceTier);
    case BaseTierColumn:
        return unlessMissing(cache.baseTier);
    case SkillTierColumn:
        return unlessMissing(cache.skillTier);
    case BaseSpeedupColumn:
        return unlessMissing(cache.baseSpeedup);
    case SkillSpeedupColumn:
        return unlessMissing(cache.skillSpeedup);
    case PairedRatioColumn:
        return unlessMissing(cache.pairedRatio);
    default:
        return displayOf(row, column);
    }
}

QVariant ComparisonsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const int row = index.row();
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
    case FilterRole:
        return displayOf(row, column).toString();
    case SortRole:
        return sortOf(row, column);
    case ComparisonIndexRole:
        return row;
    case SignificantRole:
        return cache_[size_t(row)].significant;
    case Qt::ForegroundRole:
        // Noise reads grey, a significant harm red and a significant help green: a reviewer scanning regressions
        // tells a real one from noise at a glance (an unverified fallback keeps the plain colour).
        if (column == OutcomeColumn) {
            const RowCache& cache = cache_[size_t(row)];
            if (cache.withinNoise) {
                return QBrush(QColor(0x80, 0x80, 0x80));
            }
            if (cache.significant) {
                return QBrush(cache.outcome == QLatin1String("harmed") ? QColor(0xc0, 0x1c, 0x28)
                                                                       : QColor(0x1a, 0x7f, 0x37));
            }
        }
        return {};
    case Qt::FontRole:
        if (column == OutcomeColumn) {
            const RowCache& cache = cache_[size_t(row)];
            if (cache.withinNoise || cache.significant) {
                QFont font;
                font.setItalic(cache.withinNoise);
                font.setBold(cache.significant);
                return font;
            }
        }
        return {};
    case Qt::TextAlignmentRole: {
        const bool numeric = column == ReplicateColumn || column == SourceTierColumn || column == BaseTierColumn ||
                             column == SkillTierColumn || column == BaseSpeedupColumn || column == SkillSpeedupColumn ||
                             column == PairedRatioColumn;
        return QVariant::fromValue(numeric ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    }
    case Qt::ToolTipRole:
        if (column == PairedRatioColumn && cache_[size_t(row)].pairedRatio >= 0) {
            return cache_[size_t(row)].pairedCi.isEmpty()
                       ? tr("e(skill outcome) / e(base), effective speedups")
                       : tr("The paired re-timing's ratio of the two kernels (clipped at eager)");
        }
        if (column == BaseSpeedupColumn || column == SkillSpeedupColumn) {
            const analysis::Comparison& comparison = comparisons_[size_t(row)];
            const analysis::Attempt* attempt =
                column == BaseSpeedupColumn
                    ? comparison.base.get()
                    : (comparison.skillSkipped() ? comparison.base.get() : comparison.skill.get());
            if (attempt && attempt->passed && attempt->speedupCiLow && attempt->speedupCiHigh) {
                return tr("95% CI [%1, %2]")
                    .arg(*attempt->speedupCiLow, 0, 'f', 3)
                    .arg(*attempt->speedupCiHigh, 0, 'f', 3);
            }
            return {};
        }
        if (column == OutcomeColumn && !cache_[size_t(row)].outcomeTip.isEmpty()) {
            return cache_[size_t(row)].outcomeTip;
        }
        return {};
    default:
        return {};
    }
}

QVariant ComparisonsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (Column(section)) {
    case ModelColumn:
        return tr("Model");
    case DirectionColumn:
        return tr("Direction");
    case ProblemColumn:
        return tr("Problem");
    case FamilyColumn:
        return tr("Family");
    case ReplicateColumn:
        return tr("Rep");
    case SourceVerdictColumn:
        return tr("Source verdict");
    case SourceTierColumn:
        return tr("Source tier");
    case BaseTierColumn:
        return tr("Base tier");
    case BaseSpeedupColumn:
        return tr("Base speedup");
    case SkillTierColumn:
        return tr("Skill tier");
    case SkillSpeedupColumn:
        return tr("Skill speedup");
    case PairedRatioColumn:
        return tr("Paired ratio");
    case OutcomeColumn:
        return tr("Outcome");
    case StandingColumn:
        return tr("Standing");
    case TagsColumn:
        return tr("Tags");
    case PairedCiColumn:
        return tr("Paired 95% CI");
    case UnpairedOutcomeColumn:
        return tr("Unpaired outcome");
    case BoundaryColumn:
        return tr("Boundary");
    case ColumnCount:
        break;
    }
    return {};
}

const QString& ComparisonsModel::filterTextAt(int row, int column) const {
    static const QString none;
    const RowCache& cache = cache_[size_t(row)];
    switch (Column(column)) {
    case ModelColumn:
        return cache.model;
    case DirectionColumn:
        return cache.direction;
    case FamilyColumn:
        return cache.family;
    case SourceVerdictColumn:
        return cache.sourceVerdict;
    case OutcomeColumn:
        return cache.outcome;
    case StandingColumn:
        return cache.standing;
    case TagsColumn:
        return cache.tags;
    case UnpairedOutcomeColumn:
        return cache.unpairedOutcome;
    case BoundaryColumn:
        return cache.boundary;
    default:
        return none;
    }
}

void ComparisonsModel::buildSearchTexts() const {
    searchTexts_.clear();
    searchTexts_.reserve(comparisons_.size());
    QString text;
    for (int row = 0; row < int(comparisons_.size()); ++row) {
        text.clear();
        for (int column = 0; column < ColumnCount; ++column) {
            text += displayOf(row, column).toString();
            text += QChar(0x1f); // a separator no search text holds: matches never span two columns
        }
        searchTexts_.push_back(text.toLower());
    }
}

bool ComparisonsModel::rowContains(int row, QStringView lowerNeedle) const {
    if (searchTexts_.size() != comparisons_.size()) {
        buildSearchTexts();
    }
    return searchTexts_[size_t(row)].contains(lowerNeedle);
}

QStringList ComparisonsModel::distinctValues(int column) const {
    QSet<QString> values;
    const bool cached = column == ModelColumn || column == DirectionColumn || column == FamilyColumn ||
                        column == SourceVerdictColumn || column == OutcomeColumn || column == StandingColumn ||
                        column == TagsColumn || column == UnpairedOutcomeColumn || column == BoundaryColumn;
    for (int row = 0; row < rowCount(); ++row) {
        const QString value = cached ? filterTextAt(row, column) : displayOf(row, column).toString();
        if (!value.isEmpty()) {
            values.insert(value);
        }
    }
    QStringList sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted;
}

} // namespace mkb::gui
