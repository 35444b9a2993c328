// The Problems view: a filterable, sortable table of problems (with the project's last grading results per DSL)
// beside the selected problem's highlighted source and its gradings.
#pragma once

#include "gui/problems/problem_grading.h"
#include "gui/problems/problems_listing.h"

#include <QByteArray>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSplitter;
class QTableView;

namespace mkb::gui {

class ProblemsFilter;
class ProblemsModel;
class PythonHighlighter;

class ProblemsView : public QWidget {
    Q_OBJECT
public:
    explicit ProblemsView(QWidget* parent = nullptr);

    /// Shows the listing: rows into the model, families into the combo, issues into the status line.
    void setListing(ProblemsListing listing);
    /// Shows the project's last grading results (computed from its trials with lastGradings()).
    void setLastGradings(std::map<ProblemKey, std::vector<LastGrading>> gradings);

    ProblemsModel* model() const { return model_; }
    ProblemsFilter* filter() const { return filter_; }
    QTableView* table() const { return table_; }
    QLineEdit* filterEdit() const { return filterEdit_; }
    QComboBox* familyCombo() const { return familyCombo_; }
    QPlainTextEdit* sourceEditor() const { return sourceEditor_; }
    QLabel* statusLine() const { return statusLine_; }
    /// The selected problem's gradings, per DSL and model.
    QLabel* gradingLabel() const { return gradingLabel_; }

    /// Splitter sizes and column widths/sort order, for the window's saved layout.
    QByteArray saveLayout() const;
    bool restoreLayout(const QByteArray& layout);

private:
    void showSelectedProblem();
    void updateStatusLine();

    ProblemsModel* model_;
    ProblemsFilter* filter_;
    QLineEdit* filterEdit_;
    QComboBox* familyCombo_;
    QTableView* table_;
    QSplitter* splitter_;
    QLabel* detailsHeader_;
    QLabel* gradingLabel_;
    QPlainTextEdit* sourceEditor_;
    PythonHighlighter* highlighter_;
    QLabel* statusLine_;
    QString issuesText_;
    QString issuesTooltip_;
    bool layoutRestored_ = false; // restored column widths win over sizing to contents
};

} // namespace mkb::gui
