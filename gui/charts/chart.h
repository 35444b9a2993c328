// The common frame of every chart: a QCustomPlot with its marks (what each bar or point stands for), hover tooltips,
// click-to-filter, and the screen or paper style.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"

#include <QColor>
#include <QFont>
#include <QPointF>
#include <QPolygonF>
#include <QSize>
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

class QCustomPlot;
class QCPTextElement;
class QMouseEvent;

namespace mkb::gui {

/// What a click on a mark asks the comparisons browser to show; empty fields do not filter.
struct ChartFilter {
    QString model;
    QString direction;
    QString family;
    QString problem;
};

/// One bar or point as the user sees it: its place in plot coordinates, its tooltip and the filter a click requests.
struct ChartMark {
    enum class Shape { Bar, Point };
    Shape shape = Shape::Point;
    double key = 0;   // x of the point, or the centre of the bar
    double lower = 0; // bottom of the bar (bars only)
    double upper = 0; // top of the bar, or y of the point
    double width = 0; // bar width in x units (bars only)
    QString toolTip;
    ChartFilter filter;
};

/// Colours and font of everything that is not data: background, text and axes, grid.
struct ChartStyle {
    QColor background = Qt::white; // Qt::transparent leaves the background unpainted
    QColor foreground = Qt::black;
    QColor grid = QColor(220, 220, 220);
    QFont font;
};

/// The style for the screen: follows the application palette (light or dark) and font.
ChartStyle screenChartStyle();
/// The light style of a paper figure. The font size is given in pixels of the layout, whose unit the exporters make
/// one typographic point, so text has the requested size in points on paper whatever the device resolution.
ChartStyle paperChartStyle(const QString& fontFamily, int fontPoints, bool transparentBackground,
                           bool forceLightPalette = true);

/// Colours of the data, shared by all charts so that a figure set reads alike.
namespace chartcolors {
QColor helped();
QColor neutral();
QColor harmed();
QColor base();
QColor skill();
} // namespace chartcolors

/// Turns the x axis's category labels (a text ticker) just as far as needed — 0, 30, 45, 60 or 90 degrees, ending at
/// the tick — that no label overlaps its neighbour when the plot is laid out at this size (pixels, or points on
/// paper), and wraps the legend into rows that fit its width. Lays the plot out at that size without painting and
/// leaves its viewport as it was; does not replot.
void fitCategoryLabels(QCustomPlot* plot, const QSize& size);
/// The x axis's category labels in the plot's current layout, each as its turned text box in plot pixels.
std::vector<QPolygonF> categoryLabelBoxes(const QCustomPlot* plot);
/// Fits the category labels (and wraps the legend) to the plot's own size before each of its replots (resizes and
/// data changes alike).
void keepCategoryLabelsApart(QCustomPlot* plot);

class Chart : public QWidget {
    Q_OBJECT
public:
    explicit Chart(QWidget* parent = nullptr);

    /// The chart's name, shown in the view's list and as its title.
    virtual QString title() const = 0;
    /// Redraws from these comparisons (unresolved ones are ignored by every series).
    void setComparisons(const std::vector<analysis::Comparison>& comparisons,
                        const analysis::AnalysisSettings& settings);

    QCustomPlot* plot() const { return plot_; }
    const std::vector<ChartMark>& marks() const { return marks_; }
    /// The mark under a pixel of the plot widget, nullptr when none (nearest point within a few pixels).
    const ChartMark* markAt(const QPointF& pixel) const;
    /// The pixel at the centre of a mark in the plot widget's current layout.
    QPointF markCentre(const ChartMark& mark) const;
    /// Text of the tooltip shown when hovering at pixel; empty when nothing is there.
    QString toolTipAt(const QPointF& pixel) const;

    /// fitCategoryLabels(plot(), size). On screen it happens before every replot; the exports call it for the page.
    void fitCategoryLabels(const QSize& size);
    /// categoryLabelBoxes(plot()).
    std::vector<QPolygonF> categoryLabelBoxes() const;

    const ChartStyle& style() const { return style_; }
    /// Applies a style to axes, grid, title, legend and background, and replots.
    void applyStyle(const ChartStyle& style);

signals:
    /// A click on a bar or point; empty fields do not filter.
    void filterRequested(const QString& model, const QString& direction, const QString& family, const QString& problem);

protected:
    /// Builds the plottables and appends one mark per bar or point. The plot arrives cleared (no plottables,
    /// items or legend entries; linear axes with the default ticker).
    virtual void draw(const std::vector<analysis::Comparison>& comparisons,
                      const analysis::AnalysisSettings& settings) = 0;
    void addMark(ChartMark mark) { marks_.push_back(std::move(mark)); }

private:
    void resetPlot();
    void onMouseMove(QMouseEvent* event);
    void onMousePress(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);

    QCustomPlot* plot_ = nullptr;
    QCPTextElement* titleElement_ = nullptr;
    std::vector<ChartMark> marks_;
    ChartStyle style_;
    std::optional<QPointF> pressPixel_;
};

} // namespace mkb::gui
