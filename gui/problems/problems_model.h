// The table model of the problems view: one row per ProblemRow, columns number, family, slug, title, tags,
// solutions, last grading results and suite.
#pragma once

#include "gui/problems/problem_grading.h"
#include "gui/problems/problem_rows.h"

#include "gui/common/table_model.h"

#include <vector>

namespace mkb::gui {

class ProblemsModel : public TableModel {
    Q_OBJECT
public:
    enum Column {
        NumberColumn,
        FamilyColumn,
        SlugColumn,
        TitleColumn,
        TagsColumn,
        SolutionsColumn,
        LastGradingColumn,
        SuiteColumn,
        ColumnCount
    };
    enum Role {
        FilterTextRole = FirstModelRole, // everything a text filter should match, lower case, one string per row
        FamilyRole,                      // the family, for the family filter
    };

    explicit ProblemsModel(QObject* parent = nullptr);

    /// Replaces every row (one model reset).
    void setRows(std::vector<ProblemRow> rows);
    const ProblemRow* rowAt(int row) const;
    const std::vector<ProblemRow>& rows() const { return rows_; }

    /// The project's last grading results per problem (from its trials); the column and tooltips follow.
    void setLastGradings(std::map<ProblemKey, std::vector<LastGrading>> gradings);
    /// The gradings of a row's problem (empty when it has none).
    const std::vector<LastGrading>& lastGradingsOf(int row) const;

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int tableRows() const override { return int(rows_.size()); }
    int tableColumns() const override { return ColumnCount; }

    std::vector<ProblemRow> rows_;
    std::map<ProblemKey, std::vector<LastGrading>> gradings_;
};

} // namespace mkb::gui
