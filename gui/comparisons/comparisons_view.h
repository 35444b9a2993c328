// The comparisons browser: the filterable, sortable table of every comparison, with filters saved per project, and
// beside it, when the project holds an imported KernelBench-X corpus, the list of its transitions.
#pragma once

#include "core/analysis/comparison.h"
#include "core/io/kbx_transitions.h"

#include <QMap>
#include <QTimer>
#include <QWidget>

class QCheckBox;

class QComboBox;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTableView;

namespace mkb::gui {

class ComparisonsFilter;
class ComparisonsModel;
class ProjectData;
class TimingRuleSwitch;
class TransitionsView;

class ComparisonsView : public QWidget {
    Q_OBJECT
public:
    explicit ComparisonsView(QWidget* parent = nullptr);
    ~ComparisonsView() override; // writes filters saved within the last moments

    /// Shows data's comparisons and follows its reloads; data must outlive the view.
    void setProjectData(ProjectData* data);
    /// Restores (and from now on saves) the filters stored for this project; "" = no persistence.
    void setProjectKey(const QString& storePath);

    /// Clears the filters, then shows only this model, direction and implementation boundary (an empty argument
    /// leaves that filter off).
    void filterTo(const QString& model, const QString& direction, const QString& boundary = {});

    ComparisonsModel* model() const { return model_; }
    ComparisonsFilter* filter() const { return filter_; }
    QTableView* table() const { return table_; }
    QComboBox* filterCombo(int column) const { return combos_.value(column); }
    QLineEdit* searchField() const { return search_; }
    TimingRuleSwitch* timingRule() const { return timingRule_; }
    /// The Comparisons and Transitions tabs; the Transitions tab shows only while the project holds transitions.
    QTabWidget* tabs() const { return tabs_; }
    TransitionsView* transitions() const { return transitions_; }
    /// Shows the Transitions tab (when the project holds transitions).
    void showTransitions();

    /// The QSettings group holding a project's saved filters.
    static QString settingsGroupFor(const QString& storePath);

signals:
    /// Enter or double-click on a row.
    void comparisonActivated(const mkb::analysis::Comparison& comparison);
    /// Enter or double-click on a row of the transitions list.
    void transitionActivated(const mkb::io::KbxTransition& transition);

protected:
    void showEvent(QShowEvent* event) override;

private:
    /// Refreshes now, or when next shown if this is a hidden page of a shown window (a load does not wait for it).
    void refreshWhenShown();
    void refresh();
    void refillCombos();
    void syncControlsFromFilter();
    /// Saves the filters a moment after the last change (a burst of keystrokes writes the settings file once); a
    /// save still pending is written when the project changes and when the view goes.
    void saveFilters();
    void writePendingFilters();
    void activateRow(const QModelIndex& proxyIndex);

    QTimer* saveTimer_ = nullptr;
    bool savePending_ = false; // a change saveTimer_ has yet to write, under projectKey_
    ProjectData* data_ = nullptr;
    ComparisonsModel* model_ = nullptr;
    ComparisonsFilter* filter_ = nullptr;
    QTableView* table_ = nullptr;
    QMap<int, QComboBox*> combos_;
    QLineEdit* search_ = nullptr;
    QCheckBox* significantOnly_ = nullptr;
    QLabel* countLabel_ = nullptr;
    TimingRuleSwitch* timingRule_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    TransitionsView* transitions_ = nullptr;
    QString projectKey_;
    bool syncing_ = false;
    bool stale_ = false; // data arrived while hidden
};

} // namespace mkb::gui
