// The events chart: one column per timed event, ascending by the paired ratio; a filled disc with its CI for ours, a
// hollow ring for the claimed ratio, a dashed line at 1 (no change).
#include "gui/charts/kbx_events_chart.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace mkb::gui {
namespace {

QColor standingColour(analysis::EventStanding standing) {
    switch (standing) {
    case analysis::EventStanding::Held:
        return chartcolors::helped();
    case analysis::EventStanding::Reversed:
        return chartcolors::harmed();
    default:
        return chartcolors::neutral();
    }
}

QString ratioText(double ratio) {
    return QString::number(ratio, 'f', 3) + QStringLiteral("×");
}

} // namespace

KbxEventsChart::KbxEventsChart(QWidget* parent) : Chart(parent) {}

QString KbxEventsChart::title() const {
    return tr("KernelBench-X performance events: claimed vs paired after/before");
}

KbxEventPoints KbxEventsChart::points(const std::vector<io::KbxTransition>& transitions) {
    KbxEventPoints result;
    for (const io::KbxTransition& transition : transitions) {
        const analysis::TransitionEvent& event = transition.event;
        const std::vector<std::string> kinds = analysis::performanceKinds(event.kinds);
        if (kinds.empty()) {
            continue;
        }
        ++result.performanceEvents;
        if (!event.paired) {
            continue;
        }
        result.points.push_back({event.task, kinds.front(), analysis::kindStanding(event, kinds.front()), *event.paired,
                                 event.claimedRatio, io::standingText(event)});
    }
    std::stable_sort(result.points.begin(), result.points.end(),
                     [](const KbxEventPoint& a, const KbxEventPoint& b) { return a.paired.ratio < b.paired.ratio; });
    return result;
}

void KbxEventsChart::setTransitions(std::vector<io::KbxTransition> transitions) {
    transitions_ = std::move(transitions);
}

void KbxEventsChart::draw(const std::vector<analysis::Comparison>&, const analysis::AnalysisSettings&) {
    const KbxEventPoints all = points(transitions_);
    std::map<analysis::EventStanding, QCPGraph*> discs;
    std::map<analysis::EventStanding, std::size_t> counts;
    for (const KbxEventPoint& point : all.points) {
        ++counts[point.standing];
    }
    for (const auto& [standing, count] : counts) {
        QCPGraph* graph = plot()->addGraph();
        graph->setLineStyle(QCPGraph::lsNone);
        const QColor colour = standingColour(standing);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 6));
        graph->setName(tr("paired, %1 (%2)").arg(QString::fromLatin1(analysis::toString(standing))).arg(count));
        discs[standing] = graph;
    }
    QCPGraph* claimed = plot()->addGraph();
    claimed->setLineStyle(QCPGraph::lsNone);
    claimed->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(chartcolors::base(), 1.2), Qt::NoBrush, 7));
    claimed->setName(tr("claimed by KernelBench-X (unpaired)"));
    QCPGraph* carrier = plot()->addGraph();
    carrier->setLineStyle(QCPGraph::lsNone);
    carrier->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
    carrier->removeFromLegend();
    QVector<double> below;
    QVector<double> above;
    double low = 1;
    double high = 1;
    for (std::size_t i = 0; i < all.points.size(); ++i) {
        const KbxEventPoint& point = all.points[i];
        const double key = double(i + 1);
        discs[point.standing]->addData(key, point.paired.ratio);
        carrier->addData(key, point.paired.ratio);
        below.push_back(std::max(0.0, point.paired.ratio - point.paired.ciLow));
        above.push_back(std::max(0.0, point.paired.ciHigh - point.paired.ratio));
        low = std::min(low, point.paired.ciLow);
        high = std::max(high, point.paired.ciHigh);
        QString claim = tr("not claimed");
        if (point.claimed && *point.claimed > 0) {
            claimed->addData(key, *point.claimed);
            low = std::min(low, *point.claimed);
            high = std::max(high, *point.claimed);
            claim = ratioText(*point.claimed);
        }
        addMark({ChartMark::Shape::Point,
                 key,
                 0,
                 point.paired.ratio,
                 0,
                 tr("%1 · %2\npaired after/before %3, 95% CI [%4, %5] (%6 rounds)\nclaimed %7 · %8")
                     .arg(QString::fromStdString(point.task), QString::fromStdString(point.kind),
                          ratioText(point.paired.ratio), QString::number(point.paired.ciLow, 'f', 3),
                          QString::number(point.paired.ciHigh, 'f', 3))
                     .arg(point.paired.n)
                     .arg(claim, QString::fromStdString(point.standingText)),
                 {}});
    }
    auto* errorBars = new QCPErrorBars(plot()->xAxis, plot()->yAxis);
    errorBars->setName(tr("95% CI"));
    errorBars->removeFromLegend();
    errorBars->setDataPlottable(carrier);
    errorBars->setData(below, above);
    errorBars->setErrorType(QCPErrorBars::etValueError);
    errorBars->setPen(QPen(QColor(0x55, 0x55, 0x55)));
    errorBars->setWhiskerWidth(3);

    plot()->xAxis->setLabel(tr("timed events, ascending by paired ratio (%1 of %2 performance events timed)")
                                .arg(all.points.size())
                                .arg(all.performanceEvents));
    plot()->xAxis->setRange(0, double(all.points.size()) + 1);
    plot()->xAxis->grid()->setVisible(false);
    plot()->yAxis->setLabel(tr("after kernel's speedup over before (above 1: faster)"));
    plot()->yAxis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    plot()->yAxis->setTicker(ticker);
    plot()->yAxis->setRange(low / 1.2, high * 1.2);
    auto* one = new QCPItemStraightLine(plot());
    one->point1->setCoords(0, 1);
    one->point2->setCoords(1, 1);
    one->setPen(QPen(Qt::black, 0, Qt::DashLine));
    plot()->legend->setVisible(!all.points.empty());
}

} // namespace mkb::gui
