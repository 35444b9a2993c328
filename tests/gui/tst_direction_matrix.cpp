// The direction matrix heat map: its cells from analysis::directionMatrix over three DSLs, the tooltip text the
// report prints, the diagonal and no-data cells, the measure switch, a click asking for a direction's comparisons,
// and its place in the charts view and the paper export's chart kinds.
#include "analysis/analysis_fixtures.h"
#include "core/report/report_directions.h"
#include "gui/charts/charts_view.h"
#include "gui/charts/direction_matrix_chart.h"
#include "gui/paper/headless_export.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTest>
#include <qcustomplot.h>

using namespace mkb::gui;
using mkbtest::CellPlace;
using mkbtest::failing;
using mkbtest::passing;

namespace {

/// triton→cuda: two cells, both helped (S lift > 0); cuda→triton: one harmed cell; triton→numba: one neutral cell.
/// No comparison runs numba→triton, cuda→numba or numba→cuda: those cells have no data.
std::vector<mkb::analysis::Comparison> threeDslComparisons() {
    auto place = [](const char* source, const char* target, int problem) {
        CellPlace where;
        where.sourceDsl = source;
        where.targetDsl = target;
        where.problem = problem;
        return where;
    };
    std::vector<mkb::analysis::Comparison> comparisons;
    comparisons.push_back(mkbtest::cell(passing(2.0), failing(), passing(2.5), place("triton", "cuda", 1)));
    comparisons.push_back(mkbtest::cell(passing(2.0), passing(1.0), passing(4.5), place("triton", "cuda", 2)));
    comparisons.push_back(mkbtest::cell(passing(1.0), passing(1.5), failing(), place("cuda", "triton", 1)));
    comparisons.push_back(mkbtest::cell(passing(1.0), passing(1.2), passing(1.2), place("triton", "numba", 3)));
    for (auto& comparison : comparisons) {
        comparison.problemSlug = "p" + std::to_string(comparison.problemNumber);
    }
    return comparisons;
}

const ChartMark* markOf(const Chart& chart, const QString& direction) {
    for (const ChartMark& mark : chart.marks()) {
        if (mark.filter.direction == direction) {
            return &mark;
        }
    }
    return nullptr;
}

} // namespace

class DirectionMatrixTest : public QObject {
    Q_OBJECT
private slots:
    void cellsFollowTheAnalysisAndTheReportText() {
        DirectionMatrixChart chart;
        chart.resize(700, 500);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setComparisons(threeDslComparisons(), {});
        chart.plot()->replot();
        const mkb::analysis::DirectionMatrix& matrix = chart.matrix();
        QCOMPARE(matrix.size(), std::size_t(3));
        // 3 x 3 minus the diagonal: six marks, one per ordered pair (no-data cells too, for their tooltip)
        QCOMPARE(int(chart.marks().size()), 6);
        const mkb::analysis::DirectionCell* helped = matrix.find("triton", "cuda");
        const mkb::analysis::DirectionCell* harmed = matrix.find("cuda", "triton");
        const mkb::analysis::DirectionCell* empty = matrix.find("numba", "cuda");
        QVERIFY(helped && harmed && empty);
        QCOMPARE(helped->state, mkb::analysis::DirectionCellState::Measured);
        QVERIFY(helped->lift() && *helped->lift() > 0);
        QVERIFY(harmed->lift() && *harmed->lift() < 0);
        QCOMPARE(empty->state, mkb::analysis::DirectionCellState::NoData);
        const ChartMark* mark = markOf(chart, QStringLiteral("triton2cuda"));
        QVERIFY(mark);
        // the tooltip holds what the report's matrix cell prints, so the two never disagree
        const QString reportText = QString::fromStdString(mkb::report::directionCellText(*helped));
        QVERIFY2(mark->toolTip.contains(reportText), qPrintable(mark->toolTip + " / " + reportText));
        for (const ChartMark& each : chart.marks()) {
            QVERIFY(!each.toolTip.isEmpty());
        }
        QVERIFY(chart.colorScale() && chart.colorScale()->visible());
        QCOMPARE(chart.colorScale()->dataRange().lower, -chart.colorScale()->dataRange().upper); // white is no lift
    }

    void measureSwitchRedrawsWithoutRecomputing() {
        DirectionMatrixChart chart;
        chart.setComparisons(threeDslComparisons(), {});
        const std::size_t cells = chart.matrix().cells.size();
        chart.setMeasure(DirectionMatrixChart::Measure::Harmed);
        QCOMPARE(chart.measure(), DirectionMatrixChart::Measure::Harmed);
        QCOMPARE(chart.matrix().cells.size(), cells);
        QCOMPARE(chart.colorScale()->dataRange().lower, 0.0);
        QCOMPARE(chart.colorScale()->dataRange().upper, 100.0);
        QCOMPARE(DirectionMatrixChart::measureId(DirectionMatrixChart::Measure::Helped), QStringLiteral("helped"));
    }

    void clickingACellAsksForThatDirection() {
        DirectionMatrixChart chart;
        chart.resize(700, 500);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setComparisons(threeDslComparisons(), {});
        chart.plot()->replot();
        QSignalSpy spy(&chart, &Chart::filterRequested);
        const ChartMark* mark = markOf(chart, QStringLiteral("cuda2triton"));
        QVERIFY(mark);
        QTest::mouseClick(chart.plot(), Qt::LeftButton, {}, chart.markCentre(*mark).toPoint());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(1).toString(), QStringLiteral("cuda2triton"));
    }

    void fewerThanTwoDslsDrawNoMap() {
        DirectionMatrixChart chart;
        chart.setComparisons({}, {});
        QVERIFY(chart.marks().empty());
        QVERIFY(!chart.colorScale() || !chart.colorScale()->visible());
    }

    void chartsViewAndPaperExportKnowTheMatrix() {
        ChartsView view(nullptr);
        QCOMPARE(int(view.charts().size()), 10);
        QCOMPARE(view.charts()[6], static_cast<Chart*>(view.directionMatrix())); // the KernelBench-X charts follow
        view.setDirectionMatrixMeasure(DirectionMatrixChart::Measure::Helped);
        QCOMPARE(view.directionMatrix()->measure(), DirectionMatrixChart::Measure::Helped);
        const QStringList kinds = paper::chartKindIds();
        for (const char* id : {"direction-matrix", "direction-matrix-helped", "direction-matrix-harmed"}) {
            QVERIFY2(kinds.contains(QLatin1String(id)), id);
            QVERIFY2(paper::makeChart(QLatin1String(id)) != nullptr, id);
        }
    }
};

QTEST_MAIN(DirectionMatrixTest)
#include "tst_direction_matrix.moc"
