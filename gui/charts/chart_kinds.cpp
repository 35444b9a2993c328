// The six charts: plottables, axes and marks built from the chart_data series.
#include "gui/charts/chart_kinds.h"

#include "gui/charts/chart_data.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace mkb::gui {

namespace {

constexpr double kBarWidth = 0.6;
constexpr int kMaxLabelledColumns = 40;

QString text(const std::string& value) {
    return QString::fromStdString(value);
}
QString percent(double value) {
    return QString::number(value, 'f', 1) + QLatin1Char('%');
}
QString signedNumber(double value) {
    return (value >= 0 ? QStringLiteral("+") : QString()) + QString::number(value, 'f', 1);
}
QString times(double value) {
    return QString::number(value, 'g', 4) + QStringLiteral("×");
}

QCPBars* newBars(QCustomPlot* plot, const QColor& colour, const QString& name) {
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setWidth(kBarWidth);
    bars->setPen(QPen(colour.darker(130), 0));
    bars->setBrush(colour);
    bars->setName(name);
    return bars;
}

/// An invisible graph, out of the legend, that carries the points an error-bar plottable hangs its 95% CIs on.
QCPGraph* newCiCarrier(QCustomPlot* plot, const QString& name) {
    QCPGraph* carrier = plot->addGraph();
    carrier->setLineStyle(QCPGraph::lsNone);
    carrier->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
    carrier->removeFromLegend();
    carrier->setName(name);
    return carrier;
}

QCPGraph* newPoints(QCustomPlot* plot, const QColor& colour, const QString& name) {
    QCPGraph* graph = plot->addGraph();
    graph->setLineStyle(QCPGraph::lsNone);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 6));
    graph->setName(name);
    return graph;
}

/// Category labels at 1..n on the x axis; labels are tilted when there are many.
void setCategoryAxis(QCPAxis* axis, const std::vector<std::pair<double, QString>>& ticks, double lastKey) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (const auto& [key, label] : ticks) {
        ticker->addTick(key, label);
    }
    axis->setTicker(ticker);
    axis->setTickLabelRotation(ticks.size() > 6 ? 40 : 0);
    axis->grid()->setVisible(false);
    axis->setRange(0.3, std::max(1.0, lastKey) + 0.7);
}

/// A logarithmic axis over [low, high]: plain ticks within a short span (a log ticker would show one or two labels),
/// decades with sub-ticks over a long one.
void setLogAxis(QCPAxis* axis, double low, double high) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    if (high / low <= 30) {
        QSharedPointer<QCPAxisTicker> ticker(new QCPAxisTicker);
        ticker->setTickCount(6);
        axis->setTicker(ticker);
        axis->setSubTicks(false);
    } else {
        QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
        ticker->setSubTickCount(8);
        axis->setTicker(ticker);
        axis->setSubTicks(true);
    }
    axis->setRange(low, high);
}

void addDashedLine(QCustomPlot* plot, QPointF a, QPointF b) {
    auto* line = new QCPItemStraightLine(plot);
    line->point1->setCoords(a);
    line->point2->setCoords(b);
    line->setPen(QPen(Qt::black, 0, Qt::DashLine));
}

std::vector<QString> outcomeNames() {
    return {QObject::tr("helped"), QObject::tr("neutral"), QObject::tr("harmed")};
}

int outcomeIndex(analysis::Outcome outcome) {
    return outcome == analysis::Outcome::Helped ? 0 : outcome == analysis::Outcome::Neutral ? 1 : 2;
}

} // namespace

void FamilyLiftChart::draw(const std::vector<analysis::Comparison>& comparisons,
                           const analysis::AnalysisSettings& settings) {
    const std::vector<FamilyLiftBar> bars = familyLiftBars(comparisons, settings);
    QCPBars* gains = newBars(plot(), chartcolors::helped(), tr("lift ≥ 0"));
    QCPBars* losses = newBars(plot(), chartcolors::harmed(), tr("lift < 0"));
    // Made with the first family whose interval contains 0 (and the error bars' carrier with the first interval), so
    // a chart without intervals holds the plottables it always did.
    QCPBars* withinNoise = nullptr;
    QCPGraph* ciCarrier = nullptr;
    QVector<double> ciBelow;
    QVector<double> ciAbove;
    std::vector<std::pair<double, QString>> ticks;
    double low = 0;
    double high = 0;
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const FamilyLiftBar& bar = bars[i];
        const double key = double(i + 1);
        if (bar.withinNoise && !withinNoise) {
            withinNoise = newBars(plot(), chartcolors::neutral(), tr("within noise (95% CI contains 0)"));
        }
        (bar.withinNoise ? withinNoise : bar.lift >= 0 ? gains : losses)->addData(key, bar.lift);
        ticks.emplace_back(key, text(bar.family));
        low = std::min(low, bar.lift);
        high = std::max(high, bar.lift);
        QString interval;
        if (bar.liftCi) {
            if (!ciCarrier) {
                ciCarrier = newCiCarrier(plot(), tr("95% CI"));
            }
            ciCarrier->addData(key, bar.lift);
            ciBelow.push_back(std::max(0.0, bar.lift - bar.liftCi->low));
            ciAbove.push_back(std::max(0.0, bar.liftCi->high - bar.lift));
            low = std::min(low, bar.liftCi->low);
            high = std::max(high, bar.liftCi->high);
            interval = tr(", 95% CI [%1, %2]%3")
                           .arg(signedNumber(bar.liftCi->low), signedNumber(bar.liftCi->high),
                                bar.withinNoise ? tr(", within noise") : QString());
        }
        addMark({ChartMark::Shape::Bar,
                 key,
                 std::min(0.0, bar.lift),
                 std::max(0.0, bar.lift),
                 kBarWidth,
                 tr("%1\nS base %2 → skill %3\nlift %4%6 (%5 resolved)")
                     .arg(text(bar.family), QString::number(bar.baseScore, 'f', 1),
                          QString::number(bar.skillScore, 'f', 1), signedNumber(bar.lift))
                     .arg(bar.resolved)
                     .arg(interval),
                 {{}, {}, text(bar.family), {}}});
    }
    if (ciCarrier) {
        auto* errorBars = new QCPErrorBars(plot()->xAxis, plot()->yAxis);
        errorBars->setName(tr("lift 95% CI"));
        errorBars->setDataPlottable(ciCarrier);
        errorBars->setData(ciBelow, ciAbove);
        errorBars->setErrorType(QCPErrorBars::etValueError);
        errorBars->setPen(QPen(QColor(0x55, 0x55, 0x55)));
        errorBars->setWhiskerWidth(5);
    }
    setCategoryAxis(plot()->xAxis, ticks, double(bars.size()));
    plot()->yAxis->setLabel(tr("S lift (skill − base)"));
    const double span = std::max(1.0, high - low);
    plot()->yAxis->setRange(low - 0.1 * span, high + 0.1 * span);
}

void FamilyHarmChart::draw(const std::vector<analysis::Comparison>& comparisons,
                           const analysis::AnalysisSettings& settings) {
    const std::vector<FamilyHarmBar> bars = familyHarmBars(comparisons, settings);
    QCPBars* harm = newBars(plot(), chartcolors::harmed(), tr("harmed"));
    std::vector<std::pair<double, QString>> ticks;
    double high = 10;
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const FamilyHarmBar& bar = bars[i];
        const double key = double(i + 1);
        harm->addData(key, bar.harmedPercent);
        ticks.emplace_back(key, text(bar.family));
        high = std::max(high, bar.harmedPercent);
        addMark({ChartMark::Shape::Bar,
                 key,
                 0,
                 bar.harmedPercent,
                 kBarWidth,
                 tr("%1\nharmed %2 of %3 (%4)")
                     .arg(text(bar.family))
                     .arg(bar.harmed)
                     .arg(bar.resolved)
                     .arg(percent(bar.harmedPercent)),
                 {{}, {}, text(bar.family), {}}});
    }
    setCategoryAxis(plot()->xAxis, ticks, double(bars.size()));
    plot()->yAxis->setLabel(tr("harmed share H (%)"));
    plot()->yAxis->setRange(0, std::min(105.0, high * 1.15));
}

void PairedRatioChart::draw(const std::vector<analysis::Comparison>& comparisons,
                            const analysis::AnalysisSettings& settings) {
    const std::vector<PairedRatioColumn> columns = pairedRatioColumns(comparisons, settings);
    const std::vector<QString> names = outcomeNames();
    QCPGraph* series[3] = {newPoints(plot(), chartcolors::helped(), names[0]),
                           newPoints(plot(), chartcolors::neutral(), names[1]),
                           newPoints(plot(), chartcolors::harmed(), names[2])};
    // Error bars of the paired CIs ride on a graph of their own (no marker, no legend entry) whose points come in
    // ascending key order, the order QCPErrorBars indexes them in.
    // Made with the first CI, so a chart without re-timings holds the plottables it always did.
    QCPGraph* ciCarrier = nullptr;
    QVector<double> ciBelow;
    QVector<double> ciAbove;
    std::vector<std::pair<double, QString>> ticks;
    double low = 1;
    double high = 1;
    for (std::size_t c = 0; c < columns.size(); ++c) {
        const PairedRatioColumn& column = columns[c];
        const double centre = double(c + 1);
        const QString problem = text(problemLabel(column.problemNumber, column.problemSlug));
        if (columns.size() <= kMaxLabelledColumns) {
            ticks.emplace_back(centre, problem);
        }
        const std::size_t count = column.points.size();
        const QString geometricMeanCi = column.geometricMeanCi
                                            ? tr(" (95% CI [%1, %2])")
                                                  .arg(QString::number(column.geometricMeanCi->low, 'g', 4),
                                                       QString::number(column.geometricMeanCi->high, 'g', 4))
                                            : QString();
        for (std::size_t p = 0; p < count; ++p) {
            const PairedRatioPoint& point = column.points[p];
            // Points of one problem spread a little sideways so that equal ratios stay visible.
            const double key = count > 1 ? centre - 0.25 + 0.5 * double(p) / double(count - 1) : centre;
            series[outcomeIndex(point.outcome)]->addData(key, point.ratio);
            low = std::min(low, point.ratio);
            high = std::max(high, point.ratio);
            QString interval;
            if (point.ciLow && point.ciHigh) {
                if (!ciCarrier) {
                    ciCarrier = newCiCarrier(plot(), tr("95% CI"));
                }
                ciCarrier->addData(key, point.ratio);
                ciBelow.push_back(std::max(0.0, point.ratio - *point.ciLow));
                ciAbove.push_back(std::max(0.0, *point.ciHigh - point.ratio));
                low = std::min(low, *point.ciLow);
                high = std::max(high, *point.ciHigh);
                interval = tr(", 95% CI [%1, %2]%3")
                               .arg(QString::number(*point.ciLow, 'g', 4), QString::number(*point.ciHigh, 'g', 4),
                                    point.withinNoise ? tr(", within noise") : QString());
            }
            addMark(
                {ChartMark::Shape::Point,
                 key,
                 0,
                 point.ratio,
                 0,
                 tr("%1 (%2)\n%3 · %4 · replicate %5\nr = %6%9, %7\nproblem geometric mean r = %8")
                     .arg(problem, text(column.family), text(point.model), text(point.direction))
                     .arg(point.replicate)
                     .arg(QString::number(point.ratio, 'g', 4), QString::fromLatin1(analysis::toString(point.outcome)),
                          QString::number(column.geometricMeanRatio, 'g', 4) + geometricMeanCi, interval),
                 {text(point.model), text(point.direction), text(column.family), problem}});
        }
    }
    if (ticks.empty() && !columns.empty()) {
        plot()->xAxis->setRange(0.3, double(columns.size()) + 0.7);
        plot()->xAxis->setLabel(tr("problems, sorted by geometric mean ratio"));
    } else {
        setCategoryAxis(plot()->xAxis, ticks, double(columns.size()));
    }
    if (ciCarrier) {
        auto* bars = new QCPErrorBars(plot()->xAxis, plot()->yAxis);
        bars->setName(tr("paired 95% CI"));
        bars->setDataPlottable(ciCarrier);
        bars->setData(ciBelow, ciAbove);
        bars->setErrorType(QCPErrorBars::etValueError);
        bars->setPen(QPen(QColor(0x55, 0x55, 0x55)));
        bars->setWhiskerWidth(5);
    }
    setLogAxis(plot()->yAxis, low / 1.5, high * 1.5);
    plot()->yAxis->setLabel(tr("paired ratio r = e(skill) / e(base)"));
    addDashedLine(plot(), QPointF(0, 1), QPointF(1, 1));
    plot()->legend->setVisible(!columns.empty());
}

void StandingOutcomesChart::draw(const std::vector<analysis::Comparison>& comparisons,
                                 const analysis::AnalysisSettings& settings) {
    const std::vector<StandingOutcomeBar> bars = standingOutcomeBars(comparisons, settings);
    const std::vector<QString> names = outcomeNames();
    QCPBars* stack[3] = {newBars(plot(), chartcolors::helped(), names[0]),
                         newBars(plot(), chartcolors::neutral(), names[1]),
                         newBars(plot(), chartcolors::harmed(), names[2])};
    stack[1]->moveAbove(stack[0]);
    stack[2]->moveAbove(stack[1]);
    std::vector<std::pair<double, QString>> ticks;
    double lastKey = 0;
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const StandingOutcomeBar& bar = bars[i];
        const std::size_t modelIndex = i / 3;
        const double key = double(modelIndex * 4 + i % 3 + 1); // a gap between models
        lastKey = key;
        const QString standing = QString::fromLatin1(analysis::toString(bar.standing));
        ticks.emplace_back(key, i % 3 == 1 ? standing + QLatin1Char('\n') + text(bar.model) : standing);
        const analysis::OutcomeCounts& counts = bar.outcomes;
        const std::size_t parts[3] = {counts.helped, counts.neutral, counts.harmed};
        const std::optional<double> shares[3] = {counts.helpedShare, counts.neutralShare, counts.harmedShare};
        double lower = 0;
        for (int part = 0; part < 3; ++part) {
            const double value = 100.0 * shares[part].value_or(0);
            stack[part]->addData(key, value);
            if (parts[part] == 0) {
                continue;
            }
            addMark({ChartMark::Shape::Bar,
                     key,
                     lower,
                     lower + value,
                     kBarWidth,
                     tr("%1 · source %2 base\n%3 %4 of %5 (%6)")
                         .arg(text(bar.model), standing, names[std::size_t(part)])
                         .arg(parts[part])
                         .arg(counts.total)
                         .arg(percent(value)),
                     {text(bar.model), {}, {}, {}}});
            lower += value;
        }
    }
    setCategoryAxis(plot()->xAxis, ticks, lastKey);
    plot()->xAxis->setTickLabelRotation(0);
    plot()->yAxis->setLabel(tr("share of resolved comparisons (%)"));
    plot()->yAxis->setRange(0, 105);
    plot()->legend->setVisible(!bars.empty());
}

void LadderChart::draw(const std::vector<analysis::Comparison>& comparisons,
                       const analysis::AnalysisSettings& settings) {
    const std::vector<LadderStep> steps = ladderSteps(comparisons, settings);
    constexpr double kOffset = 0.2;
    constexpr double kWidth = 0.38;
    QCPBars* base = newBars(plot(), chartcolors::base(), tr("base"));
    QCPBars* skill = newBars(plot(), chartcolors::skill(), tr("skill"));
    base->setWidth(kWidth);
    skill->setWidth(kWidth);
    std::vector<std::pair<double, QString>> ticks;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const LadderStep& step = steps[i];
        const double key = double(i + 1);
        const QString label = text(step.label);
        ticks.emplace_back(key, label);
        base->addData(key - kOffset, step.basePercent);
        skill->addData(key + kOffset, step.skillPercent);
        const QString toolTip = tr("%1\nbase %2\nskill %3\nlift %4 points")
                                    .arg(label, percent(step.basePercent), percent(step.skillPercent),
                                         signedNumber(step.skillPercent - step.basePercent));
        addMark({ChartMark::Shape::Bar, key - kOffset, 0, step.basePercent, kWidth, toolTip, {}});
        addMark({ChartMark::Shape::Bar, key + kOffset, 0, step.skillPercent, kWidth, toolTip, {}});
    }
    setCategoryAxis(plot()->xAxis, ticks, double(steps.size()));
    plot()->xAxis->setTickLabelRotation(0);
    plot()->yAxis->setLabel(tr("R@t (%)"));
    plot()->yAxis->setRange(0, 105);
    plot()->legend->setVisible(!steps.empty());
}

void SpeedupScatterChart::draw(const std::vector<analysis::Comparison>& comparisons,
                               const analysis::AnalysisSettings& settings) {
    const SpeedupScatter scatter = speedupScatter(comparisons, settings);
    const std::vector<QString> names = outcomeNames();
    QCPGraph* series[3] = {newPoints(plot(), chartcolors::helped(), names[0]),
                           newPoints(plot(), chartcolors::neutral(), names[1]),
                           newPoints(plot(), chartcolors::harmed(), names[2])};
    double low = 1;
    double high = 1;
    for (const SpeedupPoint& point : scatter.points) {
        series[outcomeIndex(point.outcome)]->addData(point.sourceSpeedup, point.targetSpeedup);
        low = std::min({low, point.sourceSpeedup, point.targetSpeedup});
        high = std::max({high, point.sourceSpeedup, point.targetSpeedup});
        const QString problem = text(problemLabel(point.problemNumber, point.problemSlug));
        addMark({ChartMark::Shape::Point,
                 point.sourceSpeedup,
                 0,
                 point.targetSpeedup,
                 0,
                 tr("%1 (%2)\n%3 · %4 · replicate %5\nsource %6 → target %7, %8")
                     .arg(problem, text(point.family), text(point.model), text(point.direction))
                     .arg(point.replicate)
                     .arg(times(point.sourceSpeedup), times(point.targetSpeedup),
                          QString::fromLatin1(analysis::toString(point.outcome))),
                 {text(point.model), text(point.direction), text(point.family), problem}});
    }
    for (QCPAxis* axis : {plot()->xAxis, plot()->yAxis}) {
        setLogAxis(axis, low / 1.5, high * 1.5);
    }
    plot()->xAxis->setLabel(scatter.leftOut == 0
                                ? tr("source speedup over eager")
                                : tr("source speedup over eager (%1 left out: a side failed)").arg(scatter.leftOut));
    plot()->yAxis->setLabel(tr("target speedup with skill"));
    addDashedLine(plot(), QPointF(1, 1), QPointF(10, 10));
    plot()->legend->setVisible(!scatter.points.empty());
}

} // namespace mkb::gui
