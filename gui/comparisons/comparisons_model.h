// The comparisons table: one row per comparison of the project (resolved or not), every number from core/analysis.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"

#include "gui/common/table_model.h"

#include <QStringList>
#include <vector>

namespace mkb::gui {

class ComparisonsModel : public TableModel {
    Q_OBJECT
public:
    enum Column {
        ModelColumn,
        DirectionColumn,
        ProblemColumn,
        FamilyColumn,
        ReplicateColumn,
        SourceVerdictColumn,
        SourceTierColumn,
        BaseTierColumn,
        BaseSpeedupColumn,
        SkillTierColumn,
        SkillSpeedupColumn,
        PairedRatioColumn,
        OutcomeColumn,
        StandingColumn,
        TagsColumn,
        PairedCiColumn,        // the re-timing's 95% CI of the skill/base ratio (after Tags: saved filter states
        UnpairedOutcomeColumn, // keep their column numbers) and MetaKernelBench's unpaired outcome beside the rule's
        BoundaryColumn,        // the implementation boundary of the arms' verdicts; "not comparable" when they differ
        ColumnCount
    };
    enum Role {
        FilterRole = FirstModelRole, // the plain text the filter combos match ("" when missing)
        ComparisonIndexRole,         // the row's index into comparisons()
        SignificantRole,             // bool: helped or harmed beyond noise (analysis::isSignificant)
    };

    explicit ComparisonsModel(QObject* parent = nullptr);

    void setComparisons(std::vector<analysis::Comparison> comparisons, const analysis::AnalysisSettings& settings);
    const std::vector<analysis::Comparison>& comparisons() const { return comparisons_; }
    const analysis::Comparison* comparisonAt(int row) const;

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// The distinct FilterRole texts of a column, sorted: what its filter combo offers.
    QStringList distinctValues(int column) const;

    /// What FilterRole gives for a filter column (model, direction, family, source verdict, outcome, standing,
    /// boundary), without building a QVariant: the filter calls it for every row on every change.
    const QString& filterTextAt(int row, int column) const;
    /// Whether some column of the row shows text containing lowerNeedle (already lower case). The rows' texts are
    /// joined and lowered once per data set (in setComparisons), so a keystroke is one substring scan per row.
    bool rowContains(int row, QStringView lowerNeedle) const;
    /// analysis::isSignificant of the row's outcome (false when unresolved).
    bool isSignificant(int row) const { return cache_[size_t(row)].significant; }

private:
    int tableRows() const override { return int(comparisons_.size()); }
    int tableColumns() const override { return ColumnCount; }

    struct RowCache {
        QString model, direction, family;
        QString sourceVerdict;
        int sourceTier = -1, baseTier = -1, skillTier = -1;           // -1: missing
        double baseSpeedup = -1, skillSpeedup = -1, pairedRatio = -1; // -1: missing
        QString outcome, standing, tags;
        QString pairedCi, unpairedOutcome, outcomeTip;
        QString boundary;
        bool significant = false, withinNoise = false, fellBack = false;
    };
    RowCache cacheFor(const analysis::Comparison& comparison) const;
    QVariant displayOf(int row, int column) const;
    QVariant sortOf(int row, int column) const;
    void buildSearchTexts() const;

    std::vector<analysis::Comparison> comparisons_;
    std::vector<RowCache> cache_;
    mutable std::vector<QString> searchTexts_; // per row: every column's text, lower case
    analysis::AnalysisSettings settings_;
};

/// The text a comparison's outcome shows ("" for an unresolved comparison): the outcome under the settings' rule,
/// "neutral (within noise)" when a paired CI contains 1.
QString outcomeText(const analysis::Comparison& comparison, const analysis::AnalysisSettings& settings);

} // namespace mkb::gui
