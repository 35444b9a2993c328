// The overview table: one row per (model, direction) with T, ΔGM, H, S (base, skill, lift), R@0 and coverage, as
// gui/project/overview_rows computes them.
#pragma once

#include "gui/common/table_model.h"
#include "gui/project/overview_rows.h"

#include <vector>

namespace mkb::gui {

class OverviewModel : public TableModel {
    Q_OBJECT
public:
    enum Column {
        ModelColumn,
        DirectionColumn,
        ComparisonsColumn,
        ResolvedColumn,
        TransferRateColumn,
        DeltaGmColumn,
        HarmRateColumn,
        BaseScoreColumn,
        SkillScoreColumn,
        LiftColumn,
        BasePassColumn,
        SkillPassColumn,
        SourcePassedColumn,
        SkillCoverageColumn,
        ColumnCount
    };
    explicit OverviewModel(QObject* parent = nullptr);
    void setRows(std::vector<OverviewRow> rows);
    /// Takes in the intervals of the same rows (fillIntervals: ΔGM, S base, S skill, lift), updating only the columns
    /// from ΔGM to the lift; rows of other groups replace the model's instead.
    void setIntervals(const std::vector<OverviewRow>& rows);
    const std::vector<OverviewRow>& rows() const { return rows_; }

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int tableRows() const override { return int(rows_.size()); }
    int tableColumns() const override { return ColumnCount; }

    std::vector<OverviewRow> rows_;
};

} // namespace mkb::gui
