// The category chart: grouped bars (one group per category, one bar per series) with error bars on their intervals.
#include "gui/charts/kbx_category_chart.h"

#include <qcustomplot.h>

#include <algorithm>
#include <map>

namespace mkb::gui {
namespace {

QColor seriesColour(std::size_t index) {
    static const QColor colours[] = {chartcolors::base(), chartcolors::skill(), chartcolors::helped(),
                                     chartcolors::harmed()};
    return colours[index % 4];
}

std::optional<analysis::Interval> percentOf(const std::optional<analysis::Interval>& interval) {
    if (!interval) {
        return std::nullopt;
    }
    return analysis::Interval{100.0 * interval->low, 100.0 * interval->high};
}

std::optional<double> percentOf(const std::optional<double>& share) {
    return share ? std::optional<double>(100.0 * *share) : std::nullopt;
}

} // namespace

KbxCategoryChart::KbxCategoryChart(Measure measure, QWidget* parent) : Chart(parent), measure_(measure) {}

QString KbxCategoryChart::title() const {
    return measure_ == Measure::PassRate ? tr("KernelBench-X pass rate by category: theirs vs ours")
                                         : tr("KernelBench-X speedup by category: ours over theirs");
}

std::vector<KbxCategoryBar> KbxCategoryChart::bars(const std::vector<io::KbxBoundaryAgreement>& agreement,
                                                   Measure measure) {
    std::vector<KbxCategoryBar> bars;
    if (agreement.empty()) {
        return bars;
    }
    for (const analysis::AgreementGroup& first : agreement.front().groups) {
        const std::string category = first.category.empty() ? "all" : first.category;
        if (measure == Measure::PassRate) {
            bars.push_back({category, "theirs", percentOf(first.theirsCorrectShare),
                            percentOf(first.theirsCorrectInterval), first.rounds});
        }
        for (const io::KbxBoundaryAgreement& boundary : agreement) {
            const auto group =
                std::find_if(boundary.groups.begin(), boundary.groups.end(),
                             [&](const analysis::AgreementGroup& g) { return g.category == first.category; });
            KbxCategoryBar bar{category, "ours (" + boundary.boundary + ")", std::nullopt, std::nullopt, 0};
            if (group != boundary.groups.end()) {
                if (measure == Measure::PassRate) {
                    bar.value = percentOf(group->oursCorrectShare);
                    bar.interval = percentOf(group->oursCorrectInterval);
                    bar.n = group->rounds;
                } else {
                    bar.value = group->speedupRatioGeometricMean;
                    bar.interval = group->speedupRatioInterval;
                    bar.n = group->speedupPairs;
                }
            }
            bars.push_back(std::move(bar));
        }
    }
    return bars;
}

void KbxCategoryChart::setAgreement(std::vector<io::KbxBoundaryAgreement> agreement) {
    agreement_ = std::move(agreement);
}

void KbxCategoryChart::draw(const std::vector<analysis::Comparison>&, const analysis::AnalysisSettings&) {
    const std::vector<KbxCategoryBar> all = bars(agreement_, measure_);
    std::vector<std::string> categories;
    std::vector<std::string> series;
    for (const KbxCategoryBar& bar : all) {
        if (std::find(categories.begin(), categories.end(), bar.category) == categories.end()) {
            categories.push_back(bar.category);
        }
        if (std::find(series.begin(), series.end(), bar.series) == series.end()) {
            series.push_back(bar.series);
        }
    }
    const double width = 0.8 / double(std::max<std::size_t>(1, series.size()));
    std::map<std::string, QCPBars*> plotted;
    std::map<std::string, QCPGraph*> carriers;
    std::map<std::string, std::pair<QVector<double>, QVector<double>>> errors;
    for (std::size_t s = 0; s < series.size(); ++s) {
        auto* barPlot = new QCPBars(plot()->xAxis, plot()->yAxis);
        barPlot->setWidth(width);
        barPlot->setBrush(seriesColour(s));
        barPlot->setPen(QPen(seriesColour(s).darker(130), 0));
        barPlot->setName(QString::fromStdString(series[s]));
        plotted[series[s]] = barPlot;
    }
    double high = measure_ == Measure::PassRate ? 100 : 1;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t c = 0; c < categories.size(); ++c) {
        ticker->addTick(double(c + 1), QString::fromStdString(categories[c]));
    }
    for (const KbxCategoryBar& bar : all) {
        if (!bar.value) {
            continue;
        }
        const std::size_t c =
            std::size_t(std::find(categories.begin(), categories.end(), bar.category) - categories.begin());
        const std::size_t s = std::size_t(std::find(series.begin(), series.end(), bar.series) - series.begin());
        const double key = double(c + 1) - 0.4 + width * (double(s) + 0.5);
        plotted[bar.series]->addData(key, *bar.value);
        high = std::max(high, bar.interval ? bar.interval->high : *bar.value);
        QString interval;
        if (bar.interval) {
            QCPGraph*& carrier = carriers[bar.series];
            if (!carrier) {
                carrier = plot()->addGraph();
                carrier->setLineStyle(QCPGraph::lsNone);
                carrier->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
                carrier->removeFromLegend();
            }
            carrier->addData(key, *bar.value);
            errors[bar.series].first.push_back(std::max(0.0, *bar.value - bar.interval->low));
            errors[bar.series].second.push_back(std::max(0.0, bar.interval->high - *bar.value));
            interval = tr(", 95% CI [%1, %2]")
                           .arg(QString::number(bar.interval->low, 'f', measure_ == Measure::PassRate ? 1 : 3),
                                QString::number(bar.interval->high, 'f', measure_ == Measure::PassRate ? 1 : 3));
        }
        const QString value = measure_ == Measure::PassRate ? QString::number(*bar.value, 'f', 1) + QLatin1Char('%')
                                                            : QString::number(*bar.value, 'f', 3) + QStringLiteral("×");
        addMark({ChartMark::Shape::Bar,
                 key,
                 0,
                 *bar.value,
                 width,
                 tr("%1 · %2\n%3%4 (n = %5)")
                     .arg(QString::fromStdString(bar.category), QString::fromStdString(bar.series), value, interval)
                     .arg(bar.n),
                 {}});
    }
    for (const auto& [name, carrier] : carriers) {
        auto* errorBars = new QCPErrorBars(plot()->xAxis, plot()->yAxis);
        errorBars->setName(tr("95% CI"));
        errorBars->removeFromLegend();
        errorBars->setDataPlottable(carrier);
        errorBars->setData(errors[name].first, errors[name].second);
        errorBars->setErrorType(QCPErrorBars::etValueError);
        errorBars->setPen(QPen(QColor(0x55, 0x55, 0x55)));
        errorBars->setWhiskerWidth(4);
    }
    plot()->xAxis->setTicker(ticker);
    plot()->xAxis->setTickLabelRotation(categories.size() > 6 ? 40 : 0);
    plot()->xAxis->grid()->setVisible(false);
    plot()->xAxis->setRange(0.3, std::max(1.0, double(categories.size())) + 0.7);
    if (measure_ == Measure::PassRate) {
        plot()->yAxis->setLabel(tr("correct share of regraded rounds (%)"));
        plot()->yAxis->setRange(0, 105);
    } else {
        plot()->yAxis->setLabel(tr("geometric mean of our speedup / theirs"));
        plot()->yAxis->setRange(0, high * 1.1);
        auto* one = new QCPItemStraightLine(plot());
        one->point1->setCoords(0, 1);
        one->point2->setCoords(1, 1);
        one->setPen(QPen(Qt::black, 0, Qt::DashLine));
    }
    plot()->legend->setVisible(!all.empty());
}

} // namespace mkb::gui
