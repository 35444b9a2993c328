// The transitions list of the comparisons page: KernelBench-X's transitions of the project's corpus, filterable by
// category, kind and text; Enter or double-click opens one in the inspector.
#pragma once

#include "core/io/kbx_transitions.h"

#include <QWidget>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace mkb::gui {

class TransitionsFilter;
class TransitionsModel;

class TransitionsView : public QWidget {
    Q_OBJECT
public:
    explicit TransitionsView(QWidget* parent = nullptr);

    /// Shows these transitions; the combos are filled from them ("all" first) and keep a choice still offered.
    void setTransitions(std::vector<io::KbxTransition> transitions);

    TransitionsModel* model() const { return model_; }
    TransitionsFilter* filter() const { return filter_; }
    QTableView* table() const { return table_; }
    QComboBox* categoryCombo() const { return category_; }
    QComboBox* kindCombo() const { return kind_; }
    QLineEdit* searchField() const { return search_; }

signals:
    /// Enter or double-click on a row.
    void transitionActivated(const mkb::io::KbxTransition& transition);

private:
    void activateRow(const QModelIndex& proxyIndex);
    void updateCount();

    TransitionsModel* model_ = nullptr;
    TransitionsFilter* filter_ = nullptr;
    QTableView* table_ = nullptr;
    QComboBox* category_ = nullptr;
    QComboBox* kind_ = nullptr;
    QLineEdit* search_ = nullptr;
    QLabel* count_ = nullptr;
};

} // namespace mkb::gui
