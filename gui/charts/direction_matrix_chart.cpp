// The direction matrix heat map: a QCPColorMap of the measured cells beside its colour scale, rectangles for the
// cells within noise and without data, a label in every cell, and one mark per ordered pair.
#include "gui/charts/direction_matrix_chart.h"

#include "core/report/report_directions.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mkb::gui {

namespace {

using analysis::DirectionCell;
using analysis::DirectionCellState;

QString text(const std::string& value) {
    return QString::fromStdString(value);
}

QString signedScore(double value) {
    const QString number = QString::number(value, 'f', 1);
    return number == QLatin1String("0.0") || number == QLatin1String("-0.0")
               ? QStringLiteral("0.0")
               : (value > 0 ? QStringLiteral("+") : QString()) + number;
}

QString percentOf(std::optional<double> share) {
    return share ? QString::number(100.0 * *share, 'f', 1) + QLatin1Char('%') : QStringLiteral("—");
}

/// The value a cell is coloured by, NaN where it has none (the diagonal, no data, unresolved, a lift within noise).
double valueOf(const DirectionCell& cell, DirectionMatrixChart::Measure measure) {
    constexpr double none = std::numeric_limits<double>::quiet_NaN();
    if (cell.state != DirectionCellState::Measured) {
        return none;
    }
    const analysis::OutcomeCounts& outcomes = cell.transfer.outcomes;
    switch (measure) {
    case DirectionMatrixChart::Measure::Lift:
        return cell.lift() && !cell.liftWithinNoise() ? *cell.lift() : none;
    case DirectionMatrixChart::Measure::Helped:
        return outcomes.helpedShare ? 100.0 * *outcomes.helpedShare : none;
    case DirectionMatrixChart::Measure::Harmed:
        return outcomes.harmedShare ? 100.0 * *outcomes.harmedShare : none;
    }
    return none;
}

/// The label inside a cell: the measure's value, then what it rests on ("[…]" for a lift interval still pending).
QString labelOf(const DirectionCell& cell, DirectionMatrixChart::Measure measure, bool intervalsPending) {
    switch (cell.state) {
    case DirectionCellState::Diagonal:
        return QStringLiteral("—");
    case DirectionCellState::NoData:
        return QObject::tr("no data");
    case DirectionCellState::Unresolved:
        return QObject::tr("unresolved");
    case DirectionCellState::Measured:
        break;
    }
    const analysis::OutcomeCounts& outcomes = cell.transfer.outcomes;
    if (measure == DirectionMatrixChart::Measure::Helped) {
        return QObject::tr("%1\nT %2 of %3")
            .arg(percentOf(outcomes.helpedShare))
            .arg(outcomes.helped)
            .arg(outcomes.total);
    }
    if (measure == DirectionMatrixChart::Measure::Harmed) {
        return QObject::tr("%1\nH %2 of %3")
            .arg(percentOf(outcomes.harmedShare))
            .arg(outcomes.harmed)
            .arg(outcomes.total);
    }
    const QString lift = cell.lift() ? signedScore(*cell.lift()) : QStringLiteral("—");
    const QString interval =
        intervalsPending ? QStringLiteral("[…]")
        : cell.liftCi()
            ? QStringLiteral("[%1, %2]").arg(signedScore(cell.liftCi()->low), signedScore(cell.liftCi()->high))
            : QObject::tr("no CI");
    return QObject::tr("%1\n%2\nT %3 · H %4 of %5")
        .arg(lift, interval)
        .arg(outcomes.helped)
        .arg(outcomes.harmed)
        .arg(outcomes.total);
}

/// The report's cell text (report::directionCellText), or while the lift interval is pending the lift and outcomes
/// with the interval said to be coming (the report's text would call it missing).
QString cellTextOf(const DirectionCell& cell, bool intervalsPending) {
    if (!intervalsPending || cell.state != DirectionCellState::Measured) {
        return text(report::directionCellText(cell));
    }
    const analysis::OutcomeCounts& outcomes = cell.transfer.outcomes;
    return QObject::tr("%1 (95% CI being computed); helped %2, harmed %3 of %4")
        .arg(cell.lift() ? signedScore(*cell.lift()) : QStringLiteral("—"))
        .arg(outcomes.helped)
        .arg(outcomes.harmed)
        .arg(outcomes.total);
}

QString toolTipOf(const DirectionCell& cell, bool intervalsPending) {
    QString tip = QObject::tr("%1 → %2 (%3)\n%4")
                      .arg(text(cell.sourceDsl), text(cell.targetDsl), text(cell.direction()),
                           cellTextOf(cell, intervalsPending));
    if (cell.state == DirectionCellState::Measured) {
        const analysis::OutcomeCounts& outcomes = cell.transfer.outcomes;
        if (cell.ladder.base && cell.ladder.skill) {
            tip += QObject::tr("\nS base %1 → skill %2")
                       .arg(QString::number(cell.ladder.base->score, 'f', 1),
                            QString::number(cell.ladder.skill->score, 'f', 1));
        }
        tip +=
            QObject::tr("\nT %1 · neutral %2 · H %3 (%4 resolved of %5, %6 rule)")
                .arg(percentOf(outcomes.helpedShare), percentOf(outcomes.neutralShare), percentOf(outcomes.harmedShare))
                .arg(cell.resolved())
                .arg(cell.comparisons)
                .arg(QString::fromLatin1(analysis::toString(cell.ladder.timing)));
        if (cell.transfer.deltaGeometricMean) {
            const std::optional<analysis::Interval>& ci = cell.transfer.deltaGeometricMeanCi;
            tip += QObject::tr("\nΔGM %1%2")
                       .arg(percentOf(cell.transfer.deltaGeometricMean),
                            ci ? QStringLiteral(" [%1, %2]").arg(percentOf(ci->low), percentOf(ci->high)) : QString());
        }
    }
    if (cell.state != DirectionCellState::NoData) {
        tip += QObject::tr("\nClick to browse these comparisons");
    }
    return tip;
}

QCPColorGradient gradientOf(DirectionMatrixChart::Measure measure) {
    QCPColorGradient gradient;
    gradient.clearColorStops();
    switch (measure) {
    case DirectionMatrixChart::Measure::Lift:
        gradient.setColorStopAt(0, chartcolors::harmed());
        gradient.setColorStopAt(0.5, Qt::white);
        gradient.setColorStopAt(1, chartcolors::helped());
        break;
    case DirectionMatrixChart::Measure::Helped:
        gradient.setColorStopAt(0, Qt::white);
        gradient.setColorStopAt(1, chartcolors::helped());
        break;
    case DirectionMatrixChart::Measure::Harmed:
        gradient.setColorStopAt(0, Qt::white);
        gradient.setColorStopAt(1, chartcolors::harmed());
        break;
    }
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    return gradient;
}

/// Category labels at 0..n−1 on an axis spanning whole cells.
void setDslAxis(QCPAxis* axis, const std::vector<std::string>& dsls) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t i = 0; i < dsls.size(); ++i) {
        ticker->addTick(double(i), text(dsls[i]));
    }
    axis->setTicker(ticker);
    axis->setSubTicks(false);
    axis->grid()->setVisible(false);
    axis->setRange(-0.5, std::max(0.5, double(dsls.size()) - 0.5));
}

QCPItemRect* newCellRect(QCustomPlot* plot, double key, double value, const QBrush& brush) {
    auto* rect = new QCPItemRect(plot);
    rect->topLeft->setCoords(key - 0.5, value - 0.5);
    rect->bottomRight->setCoords(key + 0.5, value + 0.5);
    rect->setPen(Qt::NoPen);
    rect->setBrush(brush);
    return rect;
}

/// A legend entry with no data: the swatch of what a rectangle item stands for.
void addLegendSwatch(QCustomPlot* plot, const QBrush& brush, const QString& name) {
    auto* swatch = new QCPBars(plot->xAxis, plot->yAxis);
    swatch->setBrush(brush);
    swatch->setPen(QPen(brush.color().darker(130), 0));
    swatch->setName(name);
}

} // namespace

DirectionMatrixChart::DirectionMatrixChart(Measure measure, QWidget* parent) : Chart(parent), measure_(measure) {}

QString DirectionMatrixChart::title() const {
    switch (measure_) {
    case Measure::Lift:
        return tr("Direction matrix: S lift");
    case Measure::Helped:
        return tr("Direction matrix: helped share T");
    case Measure::Harmed:
        return tr("Direction matrix: harmed share H");
    }
    return tr("Direction matrix");
}

QString DirectionMatrixChart::measureId(Measure measure) {
    switch (measure) {
    case Measure::Lift:
        return QStringLiteral("lift");
    case Measure::Helped:
        return QStringLiteral("helped");
    case Measure::Harmed:
        return QStringLiteral("harmed");
    }
    return QStringLiteral("lift");
}

void DirectionMatrixChart::setMeasure(Measure measure) {
    measure_ = measure;
    setMatrix(analysis::DirectionMatrix(matrix_), intervalsPending_);
}

void DirectionMatrixChart::setMatrix(const analysis::DirectionMatrix& matrix, bool intervalsPending) {
    given_ = matrix;
    givenPending_ = intervalsPending;
    analysis::AnalysisSettings settings;
    settings.timing = matrix.timing;
    setComparisons({}, settings);
}

void DirectionMatrixChart::draw(const std::vector<analysis::Comparison>& comparisons,
                                const analysis::AnalysisSettings& settings) {
    if (given_) {
        matrix_ = std::move(*given_);
        intervalsPending_ = givenPending_;
        given_.reset();
    } else {
        matrix_ = analysis::directionMatrix(comparisons, settings);
        intervalsPending_ = false;
    }
    drawMatrix();
}

void DirectionMatrixChart::drawMatrix() {
    QCustomPlot* plot = this->plot();
    const std::size_t n = matrix_.size();
    setDslAxis(plot->xAxis, matrix_.dsls);
    setDslAxis(plot->yAxis, matrix_.dsls);
    plot->yAxis->setRangeReversed(true); // the first source on top, as the report's first row
    plot->xAxis->setLabel(tr("target DSL (skill handed to)"));
    plot->yAxis->setLabel(tr("source DSL (skill from)"));
    if (!scale_) {
        scale_ = new QCPColorScale(plot);
        scale_->setObjectName(QStringLiteral("directionMatrixScale"));
        scale_->setType(QCPAxis::atRight);
        scale_->setBarWidth(10);
        plot->plotLayout()->addElement(1, 1, scale_);
        auto* margins = new QCPMarginGroup(plot);
        plot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
        scale_->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    }
    scale_->axis()->setLabel(measure_ == Measure::Lift     ? tr("S lift (skill − base)")
                             : measure_ == Measure::Helped ? tr("helped share T (%)")
                                                           : tr("harmed share H (%)"));
    scale_->setVisible(n >= 2);
    if (n < 2) {
        return;
    }
    QCPColorGradient gradient = gradientOf(measure_); // color() is not const
    double reach = 1; // the lift scale is symmetric about 0, so white always means no lift
    for (const DirectionCell& cell : matrix_.cells) {
        const double value = valueOf(cell, measure_);
        if (measure_ == Measure::Lift && std::isfinite(value)) {
            reach = std::max(reach, std::abs(value));
        }
    }
    const QCPRange range = measure_ == Measure::Lift ? QCPRange(-reach, reach) : QCPRange(0, 100);
    auto* map = new QCPColorMap(plot->xAxis, plot->yAxis);
    map->setName(title());
    map->removeFromLegend();
    map->data()->setSize(int(n), int(n));
    map->data()->setRange(QCPRange(0, double(n - 1)), QCPRange(0, double(n - 1)));
    map->setInterpolate(false);
    map->setTightBoundary(false);
    map->setGradient(gradient);
    map->setColorScale(scale_); // after the gradient: the scale takes the map's gradient and range
    map->setDataRange(range);

    const QBrush noiseBrush(chartcolors::neutral());
    const QBrush noDataBrush(QColor(0x99, 0x99, 0x99), Qt::BDiagPattern);
    bool anyNoise = false;
    bool anyNoData = false;
    for (std::size_t source = 0; source < n; ++source) {
        for (std::size_t target = 0; target < n; ++target) {
            const DirectionCell& cell = matrix_.at(source, target);
            const double key = double(target);
            const double row = double(source);
            const double value = valueOf(cell, measure_);
            map->data()->setCell(int(target), int(source), value);
            const bool noise =
                measure_ == Measure::Lift && cell.state == DirectionCellState::Measured && cell.liftWithinNoise();
            if (noise) {
                newCellRect(plot, key, row, noiseBrush);
                anyNoise = true;
            } else if (cell.state == DirectionCellState::NoData) {
                newCellRect(plot, key, row, noDataBrush);
                anyNoData = true;
            }
            auto* label = new QCPItemText(plot);
            label->position->setCoords(key, row);
            label->setPositionAlignment(Qt::AlignCenter);
            label->setTextAlignment(Qt::AlignCenter);
            label->setText(labelOf(cell, measure_, intervalsPending_));
            if (noise) {
                label->setColor(Qt::white);
                label->setProperty("mkbOwnInk", true); // keeps its colour under every style: it sits on a fill
            } else if (std::isfinite(value)) {
                const QColor fill = QColor::fromRgb(gradient.color(value, range));
                label->setColor(fill.lightness() < 128 ? Qt::white : Qt::black);
                label->setProperty("mkbOwnInk", true);
            }
            if (cell.state == DirectionCellState::Diagonal) {
                continue; // not a direction: nothing to show or filter
            }
            addMark({ChartMark::Shape::Bar,
                     key,
                     row - 0.5,
                     row + 0.5,
                     1.0,
                     toolTipOf(cell, intervalsPending_),
                     {{}, cell.state == DirectionCellState::NoData ? QString() : text(cell.direction()), {}, {}}});
        }
    }
    if (anyNoise) {
        addLegendSwatch(plot, noiseBrush, tr("within noise (95% CI contains 0)"));
    }
    if (anyNoData) {
        addLegendSwatch(plot, noDataBrush, tr("no data"));
    }
    plot->legend->setVisible(anyNoise || anyNoData);
}

} // namespace mkb::gui
