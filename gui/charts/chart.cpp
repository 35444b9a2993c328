// Chart: plot set-up shared by all charts, hit testing of marks in pixels, tooltips, click-to-filter and styling.
#include "gui/charts/chart.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPalette>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtMath>

#include <algorithm>
#include <cmath>

namespace mkb::gui {

namespace {

constexpr double kPointHitRadius = 7; // pixels
constexpr double kBarHitSlack = 1;    // pixels around a bar that still count as the bar

bool isDark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128;
}

QFont enlarged(QFont font, int by) {
    if (font.pixelSize() > 0) {
        font.setPixelSize(font.pixelSize() + by);
    } else {
        font.setPointSizeF(font.pointSizeF() + by);
    }
    return font;
}

/// What QCustomPlot's replot does to place the axes in the viewport, without painting (the layout's three phases).
void layOut(QCustomPlot* plot) {
    for (const auto phase :
         {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout}) {
        plot->plotLayout()->update(phase);
    }
}

/// Neutral is dark grey so that it stands apart in lightness on paper; on a dark background it would vanish, so there
/// its marks are drawn light grey instead (and dark again for a light style, such as a paper export's).
void inkNeutralMarks(QCustomPlot* plot, bool darkBackground) {
    const QColor paper = chartcolors::neutral();
    const QColor screen(0xbb, 0xbb, 0xbb);
    const QColor from = darkBackground ? paper : screen;
    const QColor to = darkBackground ? screen : paper;
    for (int i = 0; i < plot->plottableCount(); ++i) {
        if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(i))) {
            if (bars->brush().color() == from) {
                bars->setBrush(to);
                bars->setPen(QPen(to.darker(130), 0));
            }
        } else if (auto* graph = qobject_cast<QCPGraph*>(plot->plottable(i))) {
            QCPScatterStyle scatter = graph->scatterStyle();
            if (scatter.brush().color() == from) {
                QPen pen = scatter.pen();
                pen.setColor(to);
                scatter.setPen(pen);
                scatter.setBrush(to);
                graph->setScatterStyle(scatter);
            }
        }
    }
    for (int i = 0; i < plot->itemCount(); ++i) { // the filled cells of a heat map
        if (auto* rect = qobject_cast<QCPItemRect*>(plot->item(i)); rect && rect->brush().color() == from) {
            QBrush brush = rect->brush();
            brush.setColor(to);
            rect->setBrush(brush);
        }
    }
}

/// Wraps the legend's one row into as few rows as keep it within the width (a narrow figure cut its entries short).
void fitLegend(QCustomPlot* plot, int width) {
    QCPLegend* legend = plot->legend;
    if (!legend->visible() || legend->itemCount() == 0) {
        return;
    }
    for (int columns = legend->itemCount(); columns >= 1; --columns) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true); // lays the entries out again under the new wrap
        if (columns == 1 || legend->minimumOuterSizeHint().width() <= width) {
            break;
        }
    }
}

} // namespace

namespace chartcolors {
// Okabe & Ito's colour-blind safe palette, chosen so that each chart's colours also differ in lightness (CIE L*):
// helped 46, harmed 71, neutral 21; base 70, skill 54 — a grayscale print keeps them apart.
QColor helped() {
    return QColor(0x00, 0x72, 0xb2); // blue
}
QColor neutral() {
    return QColor(0x33, 0x33, 0x33); // dark grey
}
QColor harmed() {
    return QColor(0xe6, 0x9f, 0x00); // orange
}
QColor base() {
    return QColor(0x56, 0xb4, 0xe9); // sky blue
}
QColor skill() {
    return QColor(0xd5, 0x5e, 0x00); // vermillion
}
} // namespace chartcolors

ChartStyle screenChartStyle() {
    ChartStyle style;
    const QPalette palette = QApplication::palette();
    style.font = QApplication::font();
    if (isDark(palette)) {
        style.background = palette.color(QPalette::Base);
        style.foreground = palette.color(QPalette::Text);
        style.grid = QColor(80, 80, 80);
    }
    return style;
}

ChartStyle paperChartStyle(const QString& fontFamily, int fontPoints, bool transparentBackground,
                           bool forceLightPalette) {
    ChartStyle style = forceLightPalette ? ChartStyle{} : screenChartStyle();
    style.font = QFont(fontFamily);
    style.font.setPixelSize(std::max(1, fontPoints));
    if (transparentBackground) {
        style.background = Qt::transparent;
    }
    return style;
}

Chart::Chart(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    plot_->setMouseTracking(true);
    plot_->plotLayout()->insertRow(0);
    titleElement_ = new QCPTextElement(plot_, QString());
    plot_->plotLayout()->addElement(0, 0, titleElement_);
    // The legend sits in a row under the axes, laid out in one line, so that it never hides a mark.
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->plotLayout()->addElement(2, 0, plot_->legend);
    plot_->plotLayout()->setRowStretchFactor(2, 0.001);
    plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot_->legend->setIconSize(14, 8);
    plot_->legend->setMargins(QMargins(4, 2, 4, 2));
    keepCategoryLabelsApart(plot_);
    connect(plot_, &QCustomPlot::mouseMove, this, &Chart::onMouseMove);
    connect(plot_, &QCustomPlot::mousePress, this, &Chart::onMousePress);
    connect(plot_, &QCustomPlot::mouseRelease, this, &Chart::onMouseRelease);
    style_ = screenChartStyle();
}

void Chart::resetPlot() {
    plot_->clearPlottables();
    plot_->clearItems();
    plot_->legend->setVisible(false);
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        axis->setScaleType(QCPAxis::stLinear);
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        axis->setLabel(QString());
        axis->setTickLabelRotation(0);
        axis->grid()->setVisible(true);
        axis->setSubTicks(true);
    }
    marks_.clear();
}

void Chart::setComparisons(const std::vector<analysis::Comparison>& comparisons,
                           const analysis::AnalysisSettings& settings) {
    resetPlot();
    draw(comparisons, settings);
    // An invisible legend would still take its row: it leaves the layout while hidden.
    QCPLayoutGrid* layout = plot_->plotLayout();
    const bool legendInLayout = layout->hasElement(2, 0) && layout->element(2, 0) == plot_->legend;
    if (plot_->legend->visible() && !legendInLayout) {
        layout->addElement(2, 0, plot_->legend);
        layout->setRowStretchFactor(2, 0.001);
    } else if (!plot_->legend->visible() && legendInLayout) {
        layout->take(plot_->legend);
        layout->simplify();
    }
    titleElement_->setText(marks_.empty() ? title() + tr(" — no resolved comparisons") : title());
    applyStyle(style_);
}

void Chart::applyStyle(const ChartStyle& style) {
    style_ = style;
    plot_->setBackground(style.background.alpha() == 0 ? QBrush(Qt::NoBrush) : QBrush(style.background));
    const QPen ink(style.foreground, 0);
    QList<QCPAxis*> axes = plot_->axisRect()->axes();
    for (QCPLayoutElement* element : plot_->plotLayout()->elements(true)) {
        if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
            axes << scale->axis(); // a heat map's colour scale reads like the axes
        }
    }
    for (QCPAxis* axis : axes) {
        axis->setBasePen(ink);
        axis->setTickPen(ink);
        axis->setSubTickPen(ink);
        axis->setLabelColor(style.foreground);
        axis->setTickLabelColor(style.foreground);
        axis->setLabelFont(style.font);
        axis->setTickLabelFont(style.font);
        axis->grid()->setPen(QPen(style.grid, 0, Qt::DotLine));
        axis->grid()->setZeroLinePen(QPen(style.grid, 0, Qt::SolidLine));
    }
    inkNeutralMarks(plot_, style.foreground.lightness() > 128); // light text: a dark background
    titleElement_->setFont(enlarged(style.font, 1));
    titleElement_->setTextColor(style.foreground);
    plot_->legend->setFont(style.font);
    plot_->legend->setTextColor(style.foreground);
    plot_->legend->setBrush(style.background.alpha() == 0 ? QBrush(Qt::NoBrush) : QBrush(style.background));
    plot_->legend->setBorderPen(Qt::NoPen);
    for (int i = 0; i < plot_->itemCount(); ++i) {
        QCPAbstractItem* item = plot_->item(i);
        if (auto* line = qobject_cast<QCPItemStraightLine*>(item)) {
            QPen pen = line->pen();
            pen.setColor(style.foreground);
            line->setPen(pen);
        } else if (auto* text = qobject_cast<QCPItemText*>(item)) {
            if (!text->property("mkbOwnInk").toBool()) { // a label on a fill keeps the colour chosen for the fill
                text->setColor(style.foreground);
            }
            text->setFont(style.font);
        }
    }
    plot_->replot();
}

std::vector<QPolygonF> categoryLabelBoxes(const QCustomPlot* plot) {
    std::vector<QPolygonF> boxes;
    const QCPAxis* axis = plot->xAxis;
    auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
    if (!ticker) {
        return boxes;
    }
    const QFontMetricsF metrics(axis->tickLabelFont());
    const double radians = qDegreesToRadians(axis->tickLabelRotation());
    const QPointF along(std::cos(radians), std::sin(radians));
    const QPointF across(-std::sin(radians), std::cos(radians));
    const double top = axis->axisRect()->bottom() + axis->tickLabelPadding();
    for (auto tick = ticker->ticks().constBegin(); tick != ticker->ticks().constEnd(); ++tick) {
        if (!axis->range().contains(tick.key())) {
            continue;
        }
        double width = 0;
        const QStringList lines = tick.value().split(QLatin1Char('\n'));
        for (const QString& line : lines) {
            width = std::max(width, metrics.horizontalAdvance(line));
        }
        const double height = metrics.height() * double(lines.size());
        const double x = axis->coordToPixel(tick.key());
        // Level labels are centred under their tick; turned ones (negative angles) end at it, slanting down-left.
        const QPointF start =
            axis->tickLabelRotation() == 0 ? QPointF(x - width / 2, top) : QPointF(x, top) - along * width;
        boxes.push_back(QPolygonF(
            {start, start + along * width, start + along * width + across * height, start + across * height}));
    }
    return boxes;
}

void fitCategoryLabels(QCustomPlot* plot, const QSize& size) {
    if (size.isEmpty()) {
        return;
    }
    fitLegend(plot, size.width());
    if (!plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>()) {
        return;
    }
    const QRect viewport = plot->viewport();
    plot->setViewport(QRect(QPoint(0, 0), size));
    for (const double angle : {0.0, -30.0, -45.0, -60.0, -90.0}) {
        plot->xAxis->setTickLabelRotation(angle);
        layOut(plot);
        const std::vector<QPolygonF> boxes = categoryLabelBoxes(plot);
        bool overlaps = false;
        for (std::size_t i = 1; i < boxes.size() && !overlaps; ++i) {
            overlaps = boxes[i - 1].intersects(boxes[i]);
        }
        if (!overlaps) {
            break;
        }
    }
    plot->setViewport(viewport);
}

void keepCategoryLabelsApart(QCustomPlot* plot) {
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot,
                     [plot] { fitCategoryLabels(plot, plot->viewport().size()); });
}

std::vector<QPolygonF> Chart::categoryLabelBoxes() const {
    return gui::categoryLabelBoxes(plot_);
}

void Chart::fitCategoryLabels(const QSize& size) {
    gui::fitCategoryLabels(plot_, size);
}

QPointF Chart::markCentre(const ChartMark& mark) const {
    const double x = plot_->xAxis->coordToPixel(mark.key);
    if (mark.shape == ChartMark::Shape::Point) {
        return {x, plot_->yAxis->coordToPixel(mark.upper)};
    }
    return {x, (plot_->yAxis->coordToPixel(mark.lower) + plot_->yAxis->coordToPixel(mark.upper)) / 2};
}

const ChartMark* Chart::markAt(const QPointF& pixel) const {
    const ChartMark* nearest = nullptr;
    double nearestDistance = kPointHitRadius;
    for (const ChartMark& mark : marks_) {
        if (mark.shape == ChartMark::Shape::Bar) {
            const QRectF bar = QRectF(QPointF(plot_->xAxis->coordToPixel(mark.key - mark.width / 2),
                                              plot_->yAxis->coordToPixel(mark.lower)),
                                      QPointF(plot_->xAxis->coordToPixel(mark.key + mark.width / 2),
                                              plot_->yAxis->coordToPixel(mark.upper)))
                                   .normalized()
                                   .adjusted(-kBarHitSlack, -kBarHitSlack, kBarHitSlack, kBarHitSlack);
            if (bar.contains(pixel)) {
                return &mark;
            }
            continue;
        }
        const QPointF delta = markCentre(mark) - pixel;
        const double distance = std::hypot(delta.x(), delta.y());
        if (distance <= nearestDistance) {
            nearestDistance = distance;
            nearest = &mark;
        }
    }
    return nearest;
}

QString Chart::toolTipAt(const QPointF& pixel) const {
    const ChartMark* mark = markAt(pixel);
    return mark ? mark->toolTip : QString();
}

void Chart::onMouseMove(QMouseEvent* event) {
    const QString text = toolTipAt(event->position());
    if (text.isEmpty()) {
        QToolTip::hideText();
        return;
    }
    QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
}

void Chart::onMousePress(QMouseEvent* event) {
    pressPixel_ = event->position();
}

void Chart::onMouseRelease(QMouseEvent* event) {
    const bool isClick = pressPixel_ && (event->position() - *pressPixel_).manhattanLength() <= 3;
    pressPixel_.reset();
    if (!isClick || event->button() != Qt::LeftButton) {
        return;
    }
    if (const ChartMark* mark = markAt(event->position())) {
        emit filterRequested(mark->filter.model, mark->filter.direction, mark->filter.family, mark->filter.problem);
    }
}

} // namespace mkb::gui
