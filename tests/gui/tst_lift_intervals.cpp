// The lift-by-family chart's 95% intervals: an error bar per family with two or more cells, a family whose interval
// contains 0 drawn in the neutral colour ("within noise"), a clear loss in the harmed colour, rendered offscreen.
#include "gui/charts/chart.h"
#include "gui/charts/chart_data.h"
#include "gui/charts/chart_kinds.h"

#include "tst_charts_fixtures.h"

#include <qcustomplot.h>

#include <QTest>

using namespace mkb::gui;
using mkbtest::CellPlace;
using mkbtest::failing;
using mkbtest::passing;

namespace {

CellPlace inFamily(const char* family, int problem) {
    CellPlace place;
    place.family = family;
    place.problem = problem;
    return place;
}

/// "loss": four cells, each base 2.5 (S 80) against skill 1.2 (S 60): lift −20 in every cell, interval [−20, −20].
/// "mixed": base 1.0 (S 60) against skill 2.5 (S 80) and base 2.5 against skill 1.0: lift +20 and −20, interval
/// [−20, +20], within noise. Unpaired, so the verdicts' speedups rank them.
std::vector<mkb::analysis::Comparison> liftComparisons() {
    std::vector<mkb::analysis::Comparison> comparisons;
    for (int problem = 1; problem <= 4; ++problem) {
        comparisons.push_back(mkbtest::cell(passing(1), passing(2.5), passing(1.2), inFamily("loss", problem)));
    }
    comparisons.push_back(mkbtest::cell(passing(1), passing(1.0), passing(2.5), inFamily("mixed", 5)));
    comparisons.push_back(mkbtest::cell(passing(1), passing(2.5), passing(1.0), inFamily("mixed", 6)));
    return comparisons;
}

mkb::analysis::AnalysisSettings unpaired() {
    mkb::analysis::AnalysisSettings settings;
    settings.timing = mkb::analysis::TimingRule::Unpaired;
    return settings;
}

int pixelsOf(Chart& chart, const QColor& colour) {
    const QImage image = chart.plot()->toPixmap(800, 500).toImage();
    int count = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            count += image.pixelColor(x, y) == colour ? 1 : 0;
        }
    }
    return count;
}

QCPErrorBars* errorBarsOf(Chart& chart) {
    for (int i = 0; i < chart.plot()->plottableCount(); ++i) {
        if (auto* bars = qobject_cast<QCPErrorBars*>(chart.plot()->plottable(i))) {
            return bars;
        }
    }
    return nullptr;
}

} // namespace

class LiftIntervalsTest : public QObject {
    Q_OBJECT
private slots:
    // the data: each family's lift interval, and within noise exactly where it contains 0
    void familyLiftBarsCarryTheirIntervals() {
        const std::vector<FamilyLiftBar> bars = familyLiftBars(liftComparisons(), unpaired());
        QCOMPARE(bars.size(), std::size_t(2));
        QCOMPARE(bars[0].family, std::string("loss"));
        QVERIFY(bars[0].liftCi.has_value());
        QCOMPARE(bars[0].lift, -20.0);
        QCOMPARE(bars[0].liftCi->low, -20.0);
        QCOMPARE(bars[0].liftCi->high, -20.0);
        QVERIFY(!bars[0].withinNoise);
        QCOMPARE(bars[1].liftCi->low, -20.0);
        QCOMPARE(bars[1].liftCi->high, 20.0);
        QVERIFY(bars[1].withinNoise);
    }

    // the chart: one error bar per family at its lift, spanning its interval; the loss in the harmed colour, the
    // within-noise family in the neutral colour, and the tooltip names the interval
    void liftChartDrawsErrorBarsAndWithinNoiseAsNeutral() {
        FamilyLiftChart chart;
        chart.resize(800, 500);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setComparisons(liftComparisons(), unpaired());
        chart.plot()->replot();
        QCPErrorBars* errorBars = errorBarsOf(chart);
        QVERIFY(errorBars);
        QCOMPARE(errorBars->dataCount(), 2);
        QCOMPARE(errorBars->data()->at(0).errorMinus, 0.0); // loss: [−20, −20] around −20
        QCOMPARE(errorBars->data()->at(0).errorPlus, 0.0);
        QCOMPARE(errorBars->data()->at(1).errorMinus, 20.0); // mixed: [−20, +20] around 0
        QCOMPARE(errorBars->data()->at(1).errorPlus, 20.0);
        QVERIFY(chart.plot()->yAxis->range().upper > 20); // the range holds the whole interval
        QVERIFY(pixelsOf(chart, chartcolors::harmed()) > 100);
        QCOMPARE(pixelsOf(chart, chartcolors::helped()), 0);
        QCOMPARE(int(chart.marks().size()), 2);
        QVERIFY2(chart.marks()[0].toolTip.contains(QStringLiteral("95% CI [-20.0, -20.0]")) ||
                     chart.marks()[0].toolTip.contains(QStringLiteral("95% CI [−20.0, −20.0]")),
                 qPrintable(chart.marks()[0].toolTip));
        QVERIFY2(chart.marks()[1].toolTip.contains(QStringLiteral(", within noise")),
                 qPrintable(chart.marks()[1].toolTip));
        // a lift of 0 draws no area: give "mixed" a visible within-noise bar by shifting one cell
        std::vector<mkb::analysis::Comparison> shifted = liftComparisons();
        shifted.push_back(mkbtest::cell(passing(1), passing(1.0), passing(2.5), inFamily("mixed", 7)));
        chart.setComparisons(shifted, unpaired());
        chart.plot()->replot();
        QVERIFY(pixelsOf(chart, chartcolors::neutral()) > 100);
    }

    // a family of one cell has no interval: no error bar, and it keeps its gain or loss colour
    void singleCellFamilyHasNoErrorBar() {
        FamilyLiftChart chart;
        chart.resize(800, 500);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setComparisons({mkbtest::cell(passing(1), passing(1.0), passing(2.5), inFamily("one", 1))}, unpaired());
        chart.plot()->replot();
        QVERIFY(!errorBarsOf(chart));
        QVERIFY(pixelsOf(chart, chartcolors::helped()) > 100);
    }
};

QTEST_MAIN(LiftIntervalsTest)
#include "tst_lift_intervals.moc"
