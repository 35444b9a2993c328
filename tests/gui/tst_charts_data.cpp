// Chart series computed from hand-worked comparisons, without rendering.
#include "gui/charts/chart_data.h"

#include "tst_charts_fixtures.h"

#include <QTest>

using namespace mkb::gui;
using mkb::analysis::Outcome;
using mkb::analysis::SourceStanding;

class ChartsDataTest : public QObject {
    Q_OBJECT
private slots:
    void familyLiftIsSkillMinusBaseScorePerFamily() {
        const auto bars = familyLiftBars(mkbchartstest::chartComparisons());
        QCOMPARE(bars.size(), std::size_t(3)); // attention, mlp, moe (sorted); unresolved p4 adds nothing
        QCOMPARE(bars[0].family, std::string("attention"));
        QCOMPARE(bars[0].resolved, std::size_t(2));
        // base 1.0 and 1.5 attain 0, 0.5, 1 → R = 1,1,1,0,0 → S 60; skill 2.5 attains 4 of 5, failed none → S 40.
        MKB_NEAR(bars[0].baseScore, 60);
        MKB_NEAR(bars[0].skillScore, 40);
        MKB_NEAR(bars[0].lift, -20);
        QCOMPARE(bars[1].family, std::string("mlp"));
        MKB_NEAR(bars[1].lift, 0); // skipped skill counts as its base
        QCOMPARE(bars[2].family, std::string("moe"));
        MKB_NEAR(bars[2].baseScore, 0);
        MKB_NEAR(bars[2].skillScore, 60);
        MKB_NEAR(bars[2].lift, 60);
    }

    void familyHarmIsHarmedShareInPercent() {
        const auto bars = familyHarmBars(mkbchartstest::chartComparisons());
        QCOMPARE(bars.size(), std::size_t(3));
        QCOMPARE(bars[0].family, std::string("attention"));
        QCOMPARE(bars[0].harmed, std::size_t(1));
        QCOMPARE(bars[0].resolved, std::size_t(2));
        MKB_NEAR(bars[0].harmedPercent, 50);
        MKB_NEAR(bars[1].harmedPercent, 0);
        MKB_NEAR(bars[2].harmedPercent, 0);
        QCOMPARE(bars[2].resolved, std::size_t(1)); // moe: p4 is unresolved
    }

    void pairedRatioColumnsSortByGeometricMean() {
        const auto columns = pairedRatioColumns(mkbchartstest::chartComparisons());
        QCOMPARE(columns.size(), std::size_t(4));
        // r: p1 2.5/1, p2 1/1.5, p3 1.2/1 (failed base counts 1), p5 1 → ascending p2, p5, p3, p1.
        QCOMPARE(columns[0].problemNumber, 2);
        QCOMPARE(columns[1].problemNumber, 5);
        QCOMPARE(columns[2].problemNumber, 3);
        QCOMPARE(columns[3].problemNumber, 1);
        MKB_NEAR(columns[0].geometricMeanRatio, 1 / 1.5);
        QVERIFY(!columns[0].geometricMeanCi); // one comparison: ΔGM's CI is n/a
        QCOMPARE(columns[0].points.size(), std::size_t(1));
        MKB_NEAR(columns[0].points[0].ratio, 1 / 1.5);
        QVERIFY(columns[0].points[0].outcome == Outcome::Harmed);
        QVERIFY(columns[1].points[0].outcome == Outcome::Neutral);
        QCOMPARE(columns[1].points[0].model, std::string("k"));
        MKB_NEAR(columns[3].points[0].ratio, 2.5);
        QVERIFY(columns[3].points[0].outcome == Outcome::Helped);
        QCOMPARE(columns[3].family, std::string("attention"));
        QCOMPARE(columns[3].problemSlug, std::string("p1"));
    }

    void standingBarsGiveThreeRowsPerModel() {
        const auto bars = standingOutcomeBars(mkbchartstest::chartComparisons());
        QCOMPARE(bars.size(), std::size_t(6)); // models k, m × above, same, below
        QCOMPARE(bars[0].model, std::string("k"));
        QVERIFY(bars[1].standing == SourceStanding::Same);
        QCOMPARE(bars[1].outcomes.neutral, std::size_t(1)); // k: source tier 3 = base tier 3
        QCOMPARE(bars[0].outcomes.total, std::size_t(0));
        QCOMPARE(bars[3].model, std::string("m"));
        QVERIFY(bars[3].standing == SourceStanding::Above); // p1 (4 vs 3) and p3 (2 vs 0), both helped
        QCOMPARE(bars[3].outcomes.helped, std::size_t(2));
        QCOMPARE(bars[3].outcomes.total, std::size_t(2));
        QCOMPARE(bars[4].outcomes.total, std::size_t(0));
        QVERIFY(bars[5].standing == SourceStanding::Below); // p2: failed source below base 1.5, harmed
        QCOMPARE(bars[5].outcomes.harmed, std::size_t(1));
        MKB_NEAR_OPT(bars[5].outcomes.harmedShare, 1.0);
    }

    void ladderStepsArePercentPerThreshold() {
        const auto steps = ladderSteps(mkbchartstest::chartComparisons());
        QCOMPARE(steps.size(), std::size_t(5));
        QCOMPARE(steps[0].label, std::string("R@0"));
        QCOMPARE(steps[3].label, std::string("R@2"));
        // bases 1.0, 1.5, failed, 1.0 → 3 of 4 attain 0, 0.5, 1; none 2 or 4.
        // skill outcomes 2.5, failed, 1.2, 1.0 (skipped → base) → 3 of 4 attain 0..1; 1 of 4 attains 2.
        MKB_NEAR(steps[0].basePercent, 75);
        MKB_NEAR(steps[2].basePercent, 75);
        MKB_NEAR(steps[3].basePercent, 0);
        MKB_NEAR(steps[0].skillPercent, 75);
        MKB_NEAR(steps[3].skillPercent, 25);
        MKB_NEAR(steps[4].skillPercent, 0);
    }

    void ladderIsEmptyWithoutResolvedComparisons() {
        auto comparisons = mkbchartstest::chartComparisons();
        QVERIFY(ladderSteps({comparisons[3]}).empty());
        QVERIFY(familyLiftBars({comparisons[3]}).empty());
        QVERIFY(pairedRatioColumns({}).empty());
    }

    void scatterPlacesBothPassedSidesAndCountsTheRest() {
        const SpeedupScatter scatter = speedupScatter(mkbchartstest::chartComparisons());
        QCOMPARE(scatter.points.size(), std::size_t(3)); // p1, p3, p5; p2's source failed
        QCOMPARE(scatter.leftOut, std::size_t(1));
        MKB_NEAR(scatter.points[0].sourceSpeedup, 2.0);
        MKB_NEAR(scatter.points[0].targetSpeedup, 2.5);
        QVERIFY(scatter.points[0].outcome == Outcome::Helped);
        MKB_NEAR(scatter.points[1].sourceSpeedup, 0.8);
        MKB_NEAR(scatter.points[1].targetSpeedup, 1.2);
        MKB_NEAR(scatter.points[2].targetSpeedup, 1.0); // skipped skill → the base's speedup
        QVERIFY(scatter.points[2].outcome == Outcome::Neutral);
    }

    void problemLabelFallsBackToNumber() {
        QCOMPARE(problemLabel(7, ""), std::string("problem 7"));
        QCOMPARE(problemLabel(7, "softmax"), std::string("softmax"));
    }
};

QTEST_GUILESS_MAIN(ChartsDataTest)
#include "tst_charts_data.moc"
