// Uncertainty in the workbench (issue 20 item 7): the comparisons browser's paired outcome, CI and unpaired columns,
// the "within noise" style and the "significant only" filter; the inspector's timing line; CI error bars on the
// paired-ratio chart; the overview's rule line. Comparisons are built in the test with re-timings attached.
#include "gui/charts/chart_data.h"
#include "gui/charts/chart_kinds.h"
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/inspector/inspector_view.h"
#include "gui/overview/overview_model.h"
#include "gui/project/project_data.h"
#include "tst_project_data_fixture.h"

#include "../analysis/analysis_fixtures.h"

#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QFont>
#include <QTemporaryDir>
#include <QTest>

using namespace mkb::gui;
using namespace mkb::analysis;
using namespace mkbtest;

namespace {

Comparison retimed(Comparison comparison, double ratio, double low, double high) {
    auto retiming = std::make_shared<CellRetiming>();
    retiming->recordId = 1;
    retiming->deviceName = "NVIDIA H200";
    retiming->skillOverBase = PairedTiming{ratio, low, high, 300};
    comparison.retiming = std::move(retiming);
    return comparison;
}

CellPlace problem(int number) {
    CellPlace place;
    place.problem = number;
    return place;
}

/// Row 0: both pass 2.0 → 2.2 (unpaired: helped), re-timed 1.01 [0.98, 1.04]: neutral within noise.
/// Row 1: both pass 2.0 → 1.5 (unpaired: harmed), re-timed 0.80 [0.78, 0.82]: a significant harm.
/// Row 2: both pass 2.0 → 1.5, no re-timing: harmed by the unpaired fallback, not significant.
/// Row 3: base fails, skill passes: helped by pass/fail, significant.
std::vector<Comparison> fixture() {
    return {retimed(cell(passing(1), passing(2.0), passing(2.2), problem(1)), 1.01, 0.98, 1.04),
            retimed(cell(passing(1), passing(2.0), passing(1.5), problem(2)), 0.80, 0.78, 0.82),
            cell(passing(1), passing(2.0), passing(1.5), problem(3)),
            cell(passing(1), failing(), passing(1.5), problem(4))};
}

} // namespace

class PairedViewsTest : public QObject {
    Q_OBJECT
private slots:
    // browser: the outcome follows the paired rule, "within noise" is its own outcome text, the unpaired one beside
    void comparisonsShowPairedOutcomeCiAndUnpairedOutcome() {
        ComparisonsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setComparisons(fixture(), {});
        auto text = [&](int row, int column) { return model.index(row, column).data().toString(); };
        QCOMPARE(text(0, ComparisonsModel::OutcomeColumn), QStringLiteral("neutral (within noise)"));
        QCOMPARE(text(0, ComparisonsModel::UnpairedOutcomeColumn), QStringLiteral("helped"));
        QCOMPARE(text(0, ComparisonsModel::PairedCiColumn), QStringLiteral("[0.980, 1.040]"));
        QCOMPARE(text(0, ComparisonsModel::PairedRatioColumn), QStringLiteral("1.010"));
        QCOMPARE(text(1, ComparisonsModel::OutcomeColumn), QStringLiteral("harmed"));
        QCOMPARE(text(2, ComparisonsModel::OutcomeColumn), QStringLiteral("harmed"));
        QVERIFY(text(2, ComparisonsModel::PairedCiColumn).isEmpty());
        QVERIFY(model.index(2, ComparisonsModel::OutcomeColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("No paired re-timing")));
        QVERIFY(
            model.distinctValues(ComparisonsModel::OutcomeColumn).contains(QStringLiteral("neutral (within noise)")));
    }

    // browser: a speedup with its verdict's CI shows the CI as its tooltip
    void speedupTooltipShowsTheVerdictCi() {
        Attempt base = passing(2.0);
        base.speedupCiLow = 1.9;
        base.speedupCiHigh = 2.1;
        ComparisonsModel model;
        model.setComparisons({cell(passing(1), base, passing(2.2))}, {});
        QCOMPARE(model.index(0, ComparisonsModel::BaseSpeedupColumn).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("95% CI [1.900, 2.100]"));
        QVERIFY(!model.index(0, ComparisonsModel::SkillSpeedupColumn).data(Qt::ToolTipRole).isValid());
    }

    // browser: noise reads grey and italic, a significant harm red and bold, an unverified harm plain
    void withinNoiseStyleIsDistinctFromHarmed() {
        ComparisonsModel model;
        model.setComparisons(fixture(), {});
        auto colour = [&](int row) {
            return model.index(row, ComparisonsModel::OutcomeColumn).data(Qt::ForegroundRole).value<QBrush>().color();
        };
        auto font = [&](int row) {
            return model.index(row, ComparisonsModel::OutcomeColumn).data(Qt::FontRole).value<QFont>();
        };
        QVERIFY(colour(0) != colour(1));
        QVERIFY(font(0).italic() && !font(0).bold());
        QVERIFY(font(1).bold() && !font(1).italic());
        QVERIFY(!model.index(2, ComparisonsModel::OutcomeColumn).data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.index(1, 0).data(ComparisonsModel::SignificantRole).toBool(), true);
        QCOMPARE(model.index(2, 0).data(ComparisonsModel::SignificantRole).toBool(), false);
    }

    // browser: "significant only" keeps the paired harm and the pass/fail help, and is saved with the filters
    void significantOnlyFilterKeepsRealChanges() {
        ComparisonsModel model;
        ComparisonsFilter filter;
        filter.setSourceModel(&model);
        QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setComparisons(fixture(), {});
        QCOMPARE(filter.rowCount(), 4);
        filter.setSignificantOnly(true);
        QCOMPARE(filter.rowCount(), 2);
        QCOMPARE(filter.index(0, ComparisonsModel::ProblemColumn).data(ComparisonsModel::SortRole).toInt(), 2);
        QCOMPARE(filter.index(1, ComparisonsModel::ProblemColumn).data(ComparisonsModel::SortRole).toInt(), 4);
        const QVariantMap state = filter.state();
        QVERIFY(state.value(QStringLiteral("significant")).toBool());
        filter.clearFilters();
        QCOMPARE(filter.rowCount(), 4);
        filter.restoreState(state);
        QCOMPARE(filter.rowCount(), 2);
        // Under the unpaired rule nothing timed is significant: only the pass/fail help stays.
        AnalysisSettings unpaired;
        unpaired.timing = TimingRule::Unpaired;
        model.setComparisons(fixture(), unpaired);
        QCOMPARE(filter.rowCount(), 1);
    }

    // inspector: the paired ratio with its CI, rounds and device, and "within noise"; the fallback says so
    void inspectorTimingLineShowsTheCiAndNoise() {
        const std::vector<Comparison> comparisons = fixture();
        const QString noise = InspectorView::timingSummary(comparisons[0], judgeOutcome(comparisons[0]), {});
        QVERIFY2(noise.contains(QStringLiteral("skill/base 1.010, 95% CI [0.980, 1.040]")), qPrintable(noise));
        QVERIFY(noise.contains(QStringLiteral("within noise")));
        QVERIFY(noise.contains(QStringLiteral("300 rounds on NVIDIA H200")));
        const QString harm = InspectorView::timingSummary(comparisons[1], judgeOutcome(comparisons[1]), {});
        QVERIFY(!harm.contains(QStringLiteral("within noise")));
        QVERIFY(InspectorView::timingSummary(comparisons[2], judgeOutcome(comparisons[2]), {})
                    .contains(QStringLiteral("No paired re-timing")));
        QVERIFY(InspectorView::timingSummary(comparisons[3], judgeOutcome(comparisons[3]), {})
                    .contains(QStringLiteral("pass/fail")));
    }

    // chart: the re-timed points carry their CI, and the chart draws it as error bars
    void pairedRatioChartDrawsCiErrorBars() {
        const std::vector<PairedRatioColumn> columns = pairedRatioColumns(fixture());
        std::size_t withCi = 0;
        for (const PairedRatioColumn& column : columns) {
            for (const PairedRatioPoint& point : column.points) {
                if (point.ciLow) {
                    ++withCi;
                    QVERIFY(*point.ciLow < point.ratio && point.ratio < *point.ciHigh);
                }
            }
        }
        QCOMPARE(withCi, std::size_t(2));
        PairedRatioChart chart;
        chart.resize(800, 500);
        chart.setComparisons(fixture(), {});
        QCPErrorBars* bars = nullptr;
        for (int i = 0; i < chart.plot()->plottableCount(); ++i) {
            if (auto* found = qobject_cast<QCPErrorBars*>(chart.plot()->plottable(i))) {
                bars = found;
            }
        }
        QVERIFY(bars);
        QCOMPARE(bars->dataCount(), 2);
        QVERIFY(bars->dataPlottable());
        // Without re-timings the chart holds no error bars.
        PairedRatioChart plain;
        plain.setComparisons({cell(passing(1), passing(2.0), passing(1.5))}, {});
        for (int i = 0; i < plain.plot()->plottableCount(); ++i) {
            QVERIFY(!qobject_cast<QCPErrorBars*>(plain.plot()->plottable(i)));
        }
    }

    // project data: a store's live re-timing reaches the workbench's comparisons, and the browser judges by it
    void projectDataAttachesTheStoresRetimings() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("study.sqlite")).toStdString();
        const mkbguitest::FixtureIds ids = mkbguitest::writeTransferFixture(path);
        {
            auto store = mkb::Store::open(path);
            QVERIFY(store.ok());
            // beta p1 triton2cuda: base 1.0, skill 3.0 (helped by tiers), re-timed as identical kernels
            mkb::RetimingRecord record;
            record.model = "beta";
            record.suite = "fixture";
            record.problemNumber = 1;
            record.replicate = 1;
            record.sourceDsl = "triton";
            record.targetDsl = "cuda";
            record.sourceTrialId = ids.at("beta/1/solo_triton");
            record.baseTrialId = ids.at("beta/1/solo_cuda");
            record.skillTrialId = ids.at("beta/1/triton2cuda_skill");
            record.result.ok = true;
            record.result.device = "cpu";
            record.result.deviceName = "cpu";
            record.result.graderFingerprint = "fixture";
            record.result.rounds = 120;
            mkb::RetimedPair pair;
            pair.a = "base";
            pair.b = "skill";
            pair.ratio = 1.0;
            pair.ciLow = 0.98;
            pair.ciHigh = 1.02;
            pair.n = 120;
            record.result.pairs = {pair};
            auto inserted = (*store)->insertRetiming(record);
            QVERIFY2(inserted.ok(), inserted.ok() ? "" : inserted.error().message.c_str());
        }
        ProjectData data;
        data.setStorePath(QString::fromStdString(path));
        QVERIFY(data.waitUntilIdle());
        QVERIFY2(data.lastError().isEmpty(), qPrintable(data.lastError()));
        std::size_t attached = 0;
        for (const Comparison& comparison : data.comparisons()) {
            attached += comparison.retiming ? 1 : 0;
        }
        QCOMPARE(attached, std::size_t(1));
        ComparisonsModel model;
        model.setComparisons(data.comparisons(), data.settings());
        int found = 0;
        for (int row = 0; row < model.rowCount(); ++row) {
            const Comparison* comparison = model.comparisonAt(row);
            if (comparison->model == "beta" && comparison->direction == "triton2cuda") {
                QCOMPARE(model.index(row, ComparisonsModel::OutcomeColumn).data().toString(),
                         QStringLiteral("neutral (within noise)"));
                QCOMPARE(model.index(row, ComparisonsModel::UnpairedOutcomeColumn).data().toString(),
                         QStringLiteral("helped"));
                ++found;
            }
        }
        QCOMPARE(found, 1);
    }

    // overview: it says which rule T and H used and how many comparisons it judged on paired data
    void overviewSaysWhichRuleItUsed() {
        const std::vector<OverviewRow> rows = overviewRows(fixture(), {});
        QCOMPARE(
            QString::fromStdString(timingRuleLine(rows, {})),
            QStringLiteral(
                "Timing: paired rule (docs/metrics.md, \"With paired re-timing\"): 4 resolved comparisons, 2 with a "
                "paired re-timing; "
                "2 judged by it (1 within noise), 1 fell back to the unpaired rule for want of one."));
        AnalysisSettings unpaired;
        unpaired.timing = TimingRule::Unpaired;
        QCOMPARE(QString::fromStdString(timingRuleLine(overviewRows(fixture(), unpaired), unpaired)),
                 QStringLiteral("Timing: unpaired rule (MetaKernelBench, --timing unpaired): 4 resolved comparisons, "
                                "2 with a paired re-timing (not used)."));
    }
};

QTEST_MAIN(PairedViewsTest)
#include "tst_paired_views.moc"
