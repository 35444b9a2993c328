// OverviewView: fills the table, the two family bar charts and the direction matrix from ProjectData on every load.
#include "gui/overview/overview_view.h"

#include "gui/charts/chart.h"
#include "gui/charts/direction_matrix_chart.h"
#include "gui/common/table_layout.h"

#include "gui/common/table_copy.h"
#include "gui/overview/overview_boundary.h"
#include "gui/overview/overview_model.h"
#include "gui/project/project_data.h"
#include "gui/project/timing_rule_switch.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace mkb::gui {
namespace {

const QColor kLiftColor(0x2e, 0x7d, 0x32);

QCustomPlot* makeBarChart(QWidget* parent, const QString& name, const QString& title, const QString& valueLabel) {
    auto* plot = new QCustomPlot(parent);
    plot->setObjectName(name);
    plot->setMinimumHeight(180);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(QString(), 10, QFont::Bold)));
    plot->yAxis->setLabel(valueLabel);
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setWidth(0.6);
    keepCategoryLabelsApart(plot); // long family names turn instead of running into each other
    return plot;
}

void fillBarChart(QCustomPlot* plot, const std::vector<std::string>& labels,
                  const std::vector<std::optional<double>>& values, double scale, const QColor& color) {
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(0));
    QVector<double> keys, heights;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double lowest = 0, highest = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
        ticker->addTick(double(i + 1), QString::fromStdString(labels[i]));
        if (values[i]) {
            keys << double(i + 1);
            heights << *values[i] * scale;
            lowest = std::min(lowest, *values[i] * scale);
            highest = std::max(highest, *values[i] * scale);
        }
    }
    bars->setData(keys, heights);
    bars->setBrush(color);
    bars->setPen(color.darker(130));
    plot->xAxis->setTicker(ticker);
    plot->xAxis->setRange(0.3, double(labels.size()) + 0.7);
    const double pad = std::max(1.0, (highest - lowest) * 0.1);
    plot->yAxis->setRange(lowest - (lowest < 0 ? pad : 0), highest + pad);
    plot->replot();
}

/// The lift chart's title, which says while the intervals are being computed.
void setLiftChartTitle(QCustomPlot* plot, bool intervalsPending) {
    if (auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))) {
        title->setText(intervalsPending ? QObject::tr("Lift by family (S skill − S base); 95% intervals: computing…")
                                        : QObject::tr("Lift by family (S skill − S base)"));
    }
}

/// The lift bars: a family whose 95% interval contains 0 in the neutral colour (within noise), the others in the
/// lift colour; each interval as an error bar. While the intervals are pending every bar is drawn in a paler lift
/// colour, none within noise and without error bars, and the title says they are being computed. The within-noise
/// bars and the error bars are plottables of their own, made on the first call.
void fillLiftChart(QCustomPlot* plot, const FamilyBars& bars, const QColor& color) {
    std::vector<std::optional<double>> clear;
    std::vector<std::optional<double>> noise;
    QVector<double> ciKeys, ciValues, ciBelow, ciAbove;
    double lowest = 0, highest = 0;
    for (std::size_t i = 0; i < bars.families.size(); ++i) {
        const std::optional<double>& lift = bars.lift[i];
        const analysis::Interval* ci =
            !bars.intervalsPending && i < bars.liftCi.size() && bars.liftCi[i] ? &*bars.liftCi[i] : nullptr;
        const bool withinNoise = lift && ci && ci->low <= 0 && ci->high >= 0;
        clear.push_back(withinNoise ? std::nullopt : lift);
        noise.push_back(withinNoise ? lift : std::nullopt);
        if (lift && ci) {
            ciKeys << double(i + 1);
            ciValues << *lift;
            ciBelow << std::max(0.0, *lift - ci->low);
            ciAbove << std::max(0.0, ci->high - *lift);
            lowest = std::min(lowest, ci->low);
            highest = std::max(highest, ci->high);
        }
    }
    setLiftChartTitle(plot, bars.intervalsPending);
    fillBarChart(plot, bars.families, clear, 1.0, bars.intervalsPending ? color.lighter(150) : color);
    auto* noiseBars = plot->findChild<QCPBars*>(QStringLiteral("withinNoiseBars"));
    auto* carrier = plot->findChild<QCPGraph*>(QStringLiteral("liftCiCarrier"));
    auto* errorBars = plot->findChild<QCPErrorBars*>(QStringLiteral("liftErrorBars"));
    if (!noiseBars) {
        noiseBars = new QCPBars(plot->xAxis, plot->yAxis);
        noiseBars->setObjectName(QStringLiteral("withinNoiseBars"));
        noiseBars->setName(QObject::tr("within noise (95% CI contains 0)"));
        noiseBars->setWidth(0.6);
        noiseBars->setBrush(chartcolors::neutral());
        noiseBars->setPen(chartcolors::neutral().darker(130));
        carrier = plot->addGraph();
        carrier->setObjectName(QStringLiteral("liftCiCarrier"));
        carrier->setLineStyle(QCPGraph::lsNone);
        carrier->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
        errorBars = new QCPErrorBars(plot->xAxis, plot->yAxis);
        errorBars->setObjectName(QStringLiteral("liftErrorBars"));
        errorBars->setName(QObject::tr("lift 95% CI"));
        errorBars->setDataPlottable(carrier);
        errorBars->setErrorType(QCPErrorBars::etValueError);
        errorBars->setPen(QPen(QColor(0x55, 0x55, 0x55)));
        errorBars->setWhiskerWidth(5);
    }
    QVector<double> noiseKeys, noiseHeights;
    for (std::size_t i = 0; i < noise.size(); ++i) {
        if (noise[i]) {
            noiseKeys << double(i + 1);
            noiseHeights << *noise[i];
        }
        if (bars.lift[i]) {
            lowest = std::min(lowest, *bars.lift[i]);
            highest = std::max(highest, *bars.lift[i]);
        }
    }
    noiseBars->setData(noiseKeys, noiseHeights);
    carrier->setData(ciKeys, ciValues);
    errorBars->setData(ciBelow, ciAbove);
    const double pad = std::max(1.0, (highest - lowest) * 0.1);
    plot->yAxis->setRange(lowest - (lowest < 0 ? pad : 0), highest + pad);
    plot->replot();
}

} // namespace

OverviewView::OverviewView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("overviewView"));
    model_ = new OverviewModel(this);
    sorted_ = new TableSortProxy(this);
    sorted_->setSourceModel(model_);

    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("overviewSummary"));
    summary_->setWordWrap(true); // the timing-rule and calibration lines are long: unwrapped, they set the window's
                                 // minimum width (1410 px, over the 1280 px the README's screenshot is taken at)
    boundary_ = new QComboBox(this);
    boundary_->setObjectName(QStringLiteral("overviewBoundary"));
    boundary_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    boundary_->setToolTip(tr("Only comparisons graded under this implementation boundary; comparisons whose arms "
                             "were graded under different boundaries are never paired"));
    connect(boundary_, &QComboBox::currentIndexChanged, this, &OverviewView::refresh);
    timingRule_ = new TimingRuleSwitch(this); // T, H, ΔGM and the bars follow it (ProjectData::settingsChanged)
    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("overviewTable"));
    table_->setModel(sorted_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(-1, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->setToolTip(tr("Click a row to see its comparisons"));
    installCopyRowsAction(table_);
    connect(table_, &QTableView::clicked, this, &OverviewView::activate);
    connect(table_, &QTableView::activated, this, &OverviewView::activate);

    liftChart_ = makeBarChart(this, QStringLiteral("familyLiftChart"), tr("Lift by family (S skill − S base)"),
                              tr("Lift (S points)"));
    harmChart_ = makeBarChart(this, QStringLiteral("familyHarmChart"), tr("Harm rate by family (H)"), tr("H (%)"));
    matrixChart_ = new DirectionMatrixChart(DirectionMatrixChart::Measure::Lift, this);
    matrixChart_->setObjectName(QStringLiteral("directionMatrixChart"));
    matrixChart_->setMinimumHeight(180);
    connect(matrixChart_, &Chart::filterRequested, this, [this](const QString&, const QString& direction) {
        if (!direction.isEmpty()) {
            emit comparisonsRequested(QString(), direction);
        }
    });
    auto* charts = new QSplitter(Qt::Horizontal, this);
    charts->addWidget(liftChart_);
    charts->addWidget(harmChart_);
    charts->addWidget(matrixChart_);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(table_);
    split->addWidget(charts);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* header = new QHBoxLayout;
    header->addWidget(summary_, 1);
    header->addWidget(timingRule_, 0, Qt::AlignTop);
    layout->addLayout(header);
    layout->addWidget(boundary_, 0, Qt::AlignLeft);
    layout->addWidget(split, 1);
    refresh();
}

void OverviewView::setProjectData(ProjectData* data) {
    if (data_) {
        disconnect(data_, nullptr, this, nullptr);
    }
    data_ = data;
    timingRule_->setProjectData(data_);
    if (data_) {
        connect(data_, &ProjectData::summaryLoaded, this, &OverviewView::refresh); // shown before the trials are in
        connect(data_, &ProjectData::loaded, this, &OverviewView::refresh);
        connect(data_, &ProjectData::settingsChanged, this, &OverviewView::refresh);
        connect(data_, &ProjectData::overviewIntervalsLoaded, this, &OverviewView::showIntervals);
    }
    refresh();
}

void OverviewView::showIntervals() {
    if (!data_ || !boundary_->currentData().toString().isEmpty()) { // a chosen boundary's numbers hold their intervals
        return;
    }
    model_->setIntervals(data_->overviewRows());
    fillLiftChart(liftChart_, data_->familyBars(), kLiftColor);
    matrixChart_->setMatrix(data_->directionMatrix(), data_->intervalsPending());
}

void OverviewView::refresh() {
    // ProjectData computes the rows, bars and matrix with the data (off the GUI thread): showing them costs no
    // analysis (their bootstrap intervals fill in when they arrive, overviewIntervalsLoaded).
    static const std::vector<analysis::Comparison> none;
    static const FamilyBars noBars;
    const std::vector<analysis::Comparison>& all = data_ ? data_->comparisons() : none;
    // One boundary chosen: its comparisons' rows and bars are computed here (only then; "all" costs no analysis).
    const QString boundary = refreshBoundaries();
    std::vector<analysis::Comparison> ofBoundary;
    FamilyBars boundaryBars;
    if (!boundary.isEmpty() && data_) {
        ofBoundary = comparisonsUnderBoundary(all, boundary.toStdString());
        model_->setRows(gui::overviewRows(ofBoundary, data_->settings()));
        boundaryBars = gui::familyBars(ofBoundary, data_->settings());
    } else {
        model_->setRows(data_ ? data_->overviewRows() : std::vector<OverviewRow>{});
    }
    const std::vector<analysis::Comparison>& comparisons = boundary.isEmpty() ? all : ofBoundary;
    resizeColumnsUnlessRestored(table_);
    const FamilyBars& bars = !boundary.isEmpty() ? boundaryBars : data_ ? data_->familyBars() : noBars;
    fillLiftChart(liftChart_, bars, kLiftColor);
    fillBarChart(harmChart_, bars.families, bars.harmRate, 100.0, QColor(0xc6, 0x28, 0x28));
    if (!boundary.isEmpty() && data_) {
        matrixChart_->setMatrix(gui::overviewMatrix(ofBoundary, data_->settings()));
    } else if (data_) {
        matrixChart_->setMatrix(data_->directionMatrix(), data_->intervalsPending());
    } else {
        matrixChart_->setMatrix(analysis::DirectionMatrix{});
    }
    QString text =
        comparisons.empty()
            ? tr("No comparisons yet: run a transfer study to fill this page.")
            : tr("%n comparison(s) in %1 model × direction group(s); click a row to "
                 "browse them.",
                 nullptr, int(comparisons.size()))
                      .arg(model_->rowCount()) +
                  QStringLiteral("\n") +
                  QString::fromStdString(
                      timingRuleLine(model_->rows(), data_ ? data_->settings() : analysis::AnalysisSettings{})) +
                  QStringLiteral("\n") +
                  QString::fromStdString(
                      ladderRuleLine(model_->rows(), data_ ? data_->settings() : analysis::AnalysisSettings{}));
    if (!boundary.isEmpty()) {
        text += QStringLiteral("\n") + tr("Boundary %1: %2 of %3 comparisons (arms graded under it)")
                                           .arg(boundary)
                                           .arg(comparisons.size())
                                           .arg(all.size());
    }
    if (const std::string line = notComparableLine(notComparableCount(all)); !line.empty()) {
        text += QStringLiteral("\n") + QString::fromStdString(line);
    }
    // The calibration of the devices the data came from, under the timing rule (nothing when there is none to tell).
    if (const std::string calibration = data_ ? calibrationLine(data_->calibration()) : std::string();
        !calibration.empty()) {
        text += QStringLiteral("\n") + QString::fromStdString(calibration);
    }
    summary_->setText(text);
}

QString OverviewView::refreshBoundaries() {
    static const std::vector<analysis::Comparison> none;
    const std::vector<std::string> present = boundariesPresent(data_ ? data_->comparisons() : none);
    const QString chosen = boundary_->currentData().toString();
    QStringList offered;
    for (const std::string& name : present) {
        offered << QString::fromStdString(name);
    }
    QStringList shown;
    for (int i = 1; i < boundary_->count(); ++i) {
        shown << boundary_->itemData(i).toString();
    }
    if (boundary_->count() == 0 || shown != offered) {
        const QSignalBlocker quiet(boundary_); // refilling is no choice of the user's
        boundary_->clear();
        boundary_->addItem(tr("Boundary: all"), QString());
        for (const QString& name : offered) {
            boundary_->addItem(tr("Boundary: %1").arg(name), name);
        }
        boundary_->setCurrentIndex(std::max(0, boundary_->findData(chosen)));
    }
    return boundary_->currentData().toString();
}

void OverviewView::activate(const QModelIndex& proxyIndex) {
    if (!proxyIndex.isValid()) {
        return;
    }
    const int row = sorted_->mapToSource(proxyIndex).row();
    const OverviewRow& overviewRow = model_->rows()[size_t(row)];
    emit comparisonsRequested(QString::fromStdString(overviewRow.model), QString::fromStdString(overviewRow.direction));
}

} // namespace mkb::gui
