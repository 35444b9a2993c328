// The overview page: the model × direction table, per-family lift and harm-rate bar charts and the direction matrix
// heat map; clicking a row or a matrix cell asks the window to show those comparisons in the comparisons browser.
#pragma once

#include <QWidget>

class QComboBox;
class QCustomPlot;
class QLabel;
class QTableView;

namespace mkb::gui {

class DirectionMatrixChart;
class OverviewModel;
class ProjectData;
class TableSortProxy;
class TimingRuleSwitch;

class OverviewView : public QWidget {
    Q_OBJECT
public:
    explicit OverviewView(QWidget* parent = nullptr);
    void setProjectData(ProjectData* data);

    OverviewModel* model() const { return model_; }
    QTableView* table() const { return table_; }
    QCustomPlot* liftChart() const { return liftChart_; }
    QCustomPlot* harmChart() const { return harmChart_; }
    /// The direction matrix as a heat map of the S lift (every model; under the boundary filter when one is chosen).
    DirectionMatrixChart* directionMatrix() const { return matrixChart_; }
    /// "Boundary: all", then each implementation boundary the comparisons hold: the table and bars show that one's.
    QComboBox* boundaryFilter() const { return boundary_; }
    TimingRuleSwitch* timingRule() const { return timingRule_; }

signals:
    /// A table cell was clicked (or Enter pressed on it), or a cell of the direction matrix (model empty: every
    /// model): show these comparisons.
    void comparisonsRequested(const QString& model, const QString& direction);

private:
    void refresh();
    /// Takes in the overview's intervals when they arrive (ProjectData::overviewIntervalsLoaded): the table's interval
    /// columns, the lift bars' error bars and the matrix's lift intervals; only while every boundary is shown (a
    /// chosen boundary's numbers hold their intervals).
    void showIntervals();
    /// Refills the boundary combo with the boundaries present, keeping the chosen one while it is; returns it.
    QString refreshBoundaries();
    void activate(const QModelIndex& proxyIndex);

    ProjectData* data_ = nullptr;
    OverviewModel* model_ = nullptr;
    TableSortProxy* sorted_ = nullptr;
    QTableView* table_ = nullptr;
    QCustomPlot* liftChart_ = nullptr;
    QCustomPlot* harmChart_ = nullptr;
    DirectionMatrixChart* matrixChart_ = nullptr;
    QLabel* summary_ = nullptr;
    QComboBox* boundary_ = nullptr;
    TimingRuleSwitch* timingRule_ = nullptr;
};

} // namespace mkb::gui
