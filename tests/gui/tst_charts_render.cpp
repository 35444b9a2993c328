// Each chart rendered offscreen from the fixture: marks, tooltips, hit testing, click-to-filter, and the Charts page
// fed by ProjectData.
#include "gui/charts/chart.h"
#include "gui/charts/chart_kinds.h"
#include "gui/charts/charts_view.h"
#include "gui/project/project_data.h"

#include "tst_charts_fixtures.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>

#include <memory>

using namespace mkb::gui;

namespace {

/// Shows the chart at a fixed size and draws the fixture into it.
void showWithFixture(Chart& chart) {
    chart.resize(800, 500);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.setComparisons(mkbchartstest::chartComparisons(), {});
    chart.plot()->replot();
}

/// Pixels of the rendered plot that carry the given colour (drawn marks), counted on a grab of the widget.
int pixelsOf(Chart& chart, const QColor& colour) {
    const QImage image = chart.plot()->toPixmap(800, 500).toImage();
    int count = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            if (image.pixelColor(x, y).rgb() == colour.rgb()) {
                ++count;
            }
        }
    }
    return count;
}

mkb::TrialRecord trialOf(std::int64_t id, int problem, const std::string& arm, const std::string& dsl, bool passed,
                         double speedup, const std::string& family) {
    mkb::TrialRecord trial = mkbtest::finishedTrial(id, problem, 1, arm, dsl, passed, speedup);
    trial.family = family;
    return trial;
}

} // namespace

class ChartsRenderTest : public QObject {
    Q_OBJECT
private slots:
    void everyChartRendersItsMarksFromTheFixture_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("marks");
        QTest::newRow("family lift") << 0 << 3;       // attention, mlp, moe
        QTest::newRow("family harm") << 1 << 3;       // one bar per family, even at 0%
        QTest::newRow("paired ratio") << 2 << 4;      // one point per resolved comparison
        QTest::newRow("standing outcomes") << 3 << 3; // k same neutral; m above helped; m below harmed
        QTest::newRow("ladder") << 4 << 10;           // base and skill for five thresholds
        QTest::newRow("speedup scatter") << 5 << 3;   // p2's failed source is left out
    }

    void everyChartRendersItsMarksFromTheFixture() {
        QFETCH(int, kind);
        QFETCH(int, marks);
        std::unique_ptr<Chart> chart = makeChart(kind);
        showWithFixture(*chart);
        QCOMPARE(int(chart->marks().size()), marks);
        QVERIFY(chart->plot()->plottableCount() > 0);
        for (const ChartMark& mark : chart->marks()) {
            QVERIFY(!mark.toolTip.isEmpty());
            if (mark.shape == ChartMark::Shape::Bar && mark.upper == mark.lower) {
                continue; // a zero bar has no area to point at
            }
            const QPointF centre = chart->markCentre(mark);
            QVERIFY2(chart->plot()->axisRect()->rect().adjusted(-2, -2, 2, 2).contains(centre.toPoint()),
                     qPrintable(QStringLiteral("mark '%1' lies outside the axis rect").arg(mark.toolTip)));
            QCOMPARE(chart->markAt(centre), &mark);
        }
        QCOMPARE(chart->markAt(QPointF(2, 2)), nullptr); // the corner holds no mark
    }

    // moe +60 (one cell, so no interval) in the helped colour; attention −20, whose interval over its two cells
    // [−60, +20] contains 0, in the neutral colour (a clear loss in the harmed colour: tst_lift_intervals)
    void liftBarsUseHelpedAndNeutralColours() {
        FamilyLiftChart chart;
        showWithFixture(chart);
        QVERIFY(pixelsOf(chart, chartcolors::helped()) > 100);
        QVERIFY(pixelsOf(chart, chartcolors::neutral()) > 100);
        QCOMPARE(pixelsOf(chart, chartcolors::harmed()), 0);
    }

    void pairedRatioUsesALogAxisAndOutcomeColours() {
        PairedRatioChart chart;
        showWithFixture(chart);
        QCOMPARE(chart.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(pixelsOf(chart, chartcolors::harmed()) > 5);
        QVERIFY(pixelsOf(chart, chartcolors::helped()) > 5);
        // Sorted ascending by ratio: the leftmost point is p2 (r = 0.667), the rightmost p1 (r = 2.5).
        const auto& marks = chart.marks();
        const auto leftmost = std::min_element(marks.begin(), marks.end(),
                                               [](const ChartMark& a, const ChartMark& b) { return a.key < b.key; });
        QCOMPARE(leftmost->filter.problem, QStringLiteral("p2"));
        QVERIFY(leftmost->toolTip.contains(QStringLiteral("r = 0.6667, harmed")));
    }

    void scatterIsLogLogAndNamesWhatItLeftOut() {
        SpeedupScatterChart chart;
        showWithFixture(chart);
        QCOMPARE(chart.plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(chart.plot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(chart.plot()->xAxis->label().contains(QStringLiteral("1 left out")));
    }

    void hoverShowsTheMarksValues() {
        LadderChart chart;
        showWithFixture(chart);
        const ChartMark& skillAtTwo = chart.marks()[7]; // R@2, skill bar
        const QPointF centre = chart.markCentre(skillAtTwo);
        QCOMPARE(chart.toolTipAt(centre), QStringLiteral("R@2\nbase 0.0%\nskill 25.0%\nlift +25.0 points"));
        QTest::mouseMove(chart.plot(), centre.toPoint());
        QTRY_COMPARE(QToolTip::text(), skillAtTwo.toolTip);
        QTest::mouseMove(chart.plot(), QPoint(2, 2));
        QTRY_VERIFY(!QToolTip::isVisible());
    }

    void clickingABarEmitsItsFilter() {
        FamilyHarmChart chart;
        showWithFixture(chart);
        QSignalSpy spy(&chart, &Chart::filterRequested);
        const ChartMark& attention = chart.marks()[0];
        QTest::mouseClick(chart.plot(), Qt::LeftButton, {}, chart.markCentre(attention).toPoint());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(2).toString(), QStringLiteral("attention"));
        QTest::mouseClick(chart.plot(), Qt::LeftButton, {}, QPoint(2, 2));
        QCOMPARE(spy.count(), 1); // empty space filters nothing
    }

    void clickingAPointEmitsModelDirectionFamilyAndProblem() {
        SpeedupScatterChart chart;
        showWithFixture(chart);
        QSignalSpy spy(&chart, &Chart::filterRequested);
        QTest::mouseClick(chart.plot(), Qt::LeftButton, {}, chart.markCentre(chart.marks()[1]).toPoint());
        QCOMPARE(spy.count(), 1);
        const QList<QVariant> args = spy.at(0);
        QCOMPARE(args.at(0).toString(), QStringLiteral("m"));
        QCOMPARE(args.at(1).toString(), QStringLiteral("triton2cuda"));
        QCOMPARE(args.at(2).toString(), QStringLiteral("moe"));
        QCOMPARE(args.at(3).toString(), QStringLiteral("p3"));
    }

    void emptyInputSaysSo() {
        LadderChart chart;
        chart.setComparisons({}, {});
        QVERIFY(chart.marks().empty());
        chart.resize(400, 300);
        const QImage image = chart.plot()->toPixmap(400, 300).toImage();
        QVERIFY(!image.isNull());
    }

    void chartsViewFollowsProjectDataAndScope() {
        ProjectData data;
        ChartsView view(&data);
        view.resize(1000, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(int(view.charts().size()),
                 10); // the six, the direction matrix, the KernelBench-X category and events charts
        QVERIFY(view.charts()[4]->marks().empty());
        // One resolved triton→cuda cell: source 2.0, base 1.0, skill 2.5 (helped); one cuda-only cell unresolved.
        data.setTrials({trialOf(1, 1, "solo_triton", "triton", true, 2.0, "attention"),
                        trialOf(2, 1, "solo_cuda", "cuda", true, 1.0, "attention"),
                        trialOf(3, 1, "triton2cuda_skill", "cuda", true, 2.5, "attention")});
        QCOMPARE(int(view.charts()[4]->marks().size()), 10);
        QCOMPARE(int(view.charts()[2]->marks().size()), 1);
        auto* modelCombo = view.findChildren<QComboBox*>().at(0);
        QCOMPARE(modelCombo->count(), 2); // "All models", "m"

        QSignalSpy spy(&view, &ChartsView::filterRequested);
        view.setScope(QStringLiteral("m"), QStringLiteral("triton2cuda"));
        view.setCurrentChart(0);
        Chart* lift = view.currentChart();
        QCOMPARE(lift, view.charts()[0]);
        QCoreApplication::processEvents();
        lift->plot()->replot();
        QTest::mouseClick(lift->plot(), Qt::LeftButton, {}, lift->markCentre(lift->marks()[0]).toPoint());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toString(), QStringLiteral("m"));           // from the scope
        QCOMPARE(spy.at(0).at(1).toString(), QStringLiteral("triton2cuda")); // from the scope
        QCOMPARE(spy.at(0).at(2).toString(), QStringLiteral("attention"));   // from the bar

        view.setScope(QStringLiteral("m"), QStringLiteral("cuda2triton")); // unknown direction: falls back to all
        QCOMPARE(int(view.charts()[4]->marks().size()), 10);
    }

private:
    static std::unique_ptr<Chart> makeChart(int kind) {
        switch (kind) {
        case 0:
            return std::make_unique<FamilyLiftChart>();
        case 1:
            return std::make_unique<FamilyHarmChart>();
        case 2:
            return std::make_unique<PairedRatioChart>();
        case 3:
            return std::make_unique<StandingOutcomesChart>();
        case 4:
            return std::make_unique<LadderChart>();
        default:
            return std::make_unique<SpeedupScatterChart>();
        }
    }
};

QTEST_MAIN(ChartsRenderTest)
#include "tst_charts_render.moc"
