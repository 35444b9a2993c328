// The comparisons browser: the filterable, sortable table of every comparison, with filters saved per project.
#pragma once

#include "core/analysis/comparison.h"

#include <QMap>
#include <QWidget>

class QCheckBox;

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace mkb::gui {

class ComparisonsFilter;
class ComparisonsModel;
class ProjectData;
class TimingRuleSwitch;

class ComparisonsView : public QWidget {
    Q_OBJECT
public:
    explicit ComparisonsView(QWidget* parent = nullptr);

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

    /// The QSettings group holding a project's saved filters.
    static QString settingsGroupFor(const QString& storePath);

signals:
    /// Enter or double-click on a row.
    void comparisonActivated(const mkb::analysis::Comparison& comparison);

protected:
    void showEvent(QShowEvent* event) override;

private:
    /// Refreshes now, or when next shown if this is a hidden page of a shown window (a load does not wait for it).
    void refreshWhenShown();
    void refresh();
    void refillCombos();
    void syncControlsFromFilter();
    void saveFilters() const;
    void activateRow(const QModelIndex& proxyIndex);

    ProjectData* data_ = nullptr;
    ComparisonsModel* model_ = nullptr;
    ComparisonsFilter* filter_ = nullptr;
    QTableView* table_ = nullptr;
    QMap<int, QComboBox*> combos_;
    QLineEdit* search_ = nullptr;
    QCheckBox* significantOnly_ = nullptr;
    QLabel* countLabel_ = nullptr;
    TimingRuleSwitch* timingRule_ = nullptr;
    QString projectKey_;
    bool syncing_ = false;
    bool stale_ = false; // data arrived while hidden
};

} // namespace mkb::gui
