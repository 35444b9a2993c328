// Tests of the paired ladder (DESIGN §8): both arms ranked on one re-timing, the tie rule, the fallback count, and the
// seeded bootstrap intervals of S and lift.
#include "analysis_fixtures.h"

#include "core/analysis/ladder.h"
#include "core/analysis/stats.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

PairedTiming timing(double ratio, double low, double high) {
    return PairedTiming{ratio, low, high, 200};
}

/// The comparison with a re-timing holding the given speedups over eager and skill/base ratio.
Comparison retimed(Comparison comparison, std::optional<PairedTiming> baseOverEager,
                   std::optional<PairedTiming> skillOverEager, std::optional<PairedTiming> skillOverBase) {
    auto retiming = std::make_shared<CellRetiming>();
    retiming->recordId = 1;
    retiming->baseOverEager = baseOverEager;
    retiming->skillOverEager = skillOverEager;
    retiming->skillOverBase = skillOverBase;
    comparison.retiming = std::move(retiming);
    return comparison;
}

AnalysisSettings withTiming(TimingRule rule) {
    AnalysisSettings settings;
    settings.timing = rule;
    return settings;
}

Attempt passingWithin(double speedup, double low, double high) {
    Attempt attempt = passing(speedup);
    attempt.speedupCiLow = low;
    attempt.speedupCiHigh = high;
    return attempt;
}

CellPlace atProblem(int problem) {
    CellPlace place;
    place.problem = problem;
    return place;
}

/// An A/A store of twelve cells: byte-identical kernels in base and skill whose two gradings disagree by up to 50%
/// (verdict speedups 1.6 against 2.4, 3.0 against 4.4), so the unpaired ladder sees lift, while each cell's re-timing
/// timed both together: speedups over eager within 1% of each other, ratio CI containing 1.
std::vector<Comparison> aaCells() {
    std::vector<Comparison> cells;
    for (int problem = 1; problem <= 12; ++problem) {
        const double paired = problem % 2 ? 1.99 : 3.97;
        const Attempt base = problem % 2 ? passing(1.6) : passing(3.0);
        const Attempt skill = problem % 2 ? passing(2.4) : passing(4.4);
        cells.push_back(retimed(cell(passing(1), base, skill, atProblem(problem)),
                                timing(paired, paired * 0.99, paired * 1.01),
                                timing(paired * 1.006, paired * 0.996, paired * 1.016), timing(1.006, 0.994, 1.018)));
    }
    return cells;
}

} // namespace

class PairedLadder : public QObject {
    Q_OBJECT

private slots:
    // A/A: identical kernels give lift exactly 0 at every threshold and in S under the paired rule, with intervals
    // that contain 0; the same store under the unpaired rule shows MetaKernelBench's noisy lift
    void identicalKernelsGiveLiftZeroUnderThePairedRule() {
        const std::vector<Comparison> cells = aaCells();
        const Contrast paired = contrast(cells, withTiming(TimingRule::Paired));
        QVERIFY(paired.lift.has_value());
        for (double rate : paired.lift->rates) {
            QCOMPARE(rate, 0.0);
        }
        QCOMPARE(paired.lift->score, 0.0);
        QCOMPARE(paired.pairedCells, std::size_t(12));
        QCOMPARE(paired.fellBack, std::size_t(0));
        // the crossings at t = 2 (1.99 vs 2.002) and t = 4 (3.97 vs 3.994 stays below): six ties at R@2
        QCOMPARE(paired.ties, (std::vector<std::size_t>{0, 0, 0, 6, 0}));
        QVERIFY(paired.intervals.liftScore.has_value());
        QCOMPARE(paired.intervals.liftScore->low, 0.0);
        QCOMPARE(paired.intervals.liftScore->high, 0.0);
        QCOMPARE(paired.intervals.liftRates.size(), std::size_t(5));
        for (const std::optional<Interval>& interval : paired.intervals.liftRates) {
            QVERIFY(interval && interval->low <= 0 && interval->high >= 0);
        }

        const Contrast unpaired = contrast(cells, withTiming(TimingRule::Unpaired));
        QCOMPARE(unpaired.timing, TimingRule::Unpaired);
        MKB_NEAR(unpaired.lift->rates[3], 0.5); // 2.4 attains R@2, 1.6 does not: six of twelve
        MKB_NEAR(unpaired.lift->rates[4], 0.5); // 4.4 attains R@4, 3.0 does not
        MKB_NEAR(unpaired.lift->score, 20.0);   // 100 × (0 + 0 + 0 + 0.5 + 0.5) / 5
        QCOMPARE(unpaired.ties, (std::vector<std::size_t>{0, 0, 0, 0, 0}));
        QCOMPARE(unpaired.pairedCells, std::size_t(0));
    }

    // a real 10% slowdown of the skill, timed in the same session, moves the ladder: 2.1 → 1.89 leaves R@2
    void aRealSlowdownMovesTheLift() {
        std::vector<Comparison> cells;
        for (int problem = 1; problem <= 4; ++problem) {
            cells.push_back(retimed(cell(passing(1), passing(2.1), passing(2.1), atProblem(problem)),
                                    timing(2.1, 2.09, 2.11), timing(1.89, 1.88, 1.90), timing(0.9, 0.89, 0.91)));
        }
        const Contrast result = contrast(cells);
        MKB_NEAR(result.base->rates[3], 1.0);
        MKB_NEAR(result.skill->rates[3], 0.0);
        MKB_NEAR(result.lift->rates[3], -1.0);
        MKB_NEAR(result.lift->score, -20.0); // one threshold of five lost in every cell
        QCOMPARE(result.ties, (std::vector<std::size_t>{0, 0, 0, 0, 0}));
        QVERIFY(result.intervals.liftScore && result.intervals.liftScore->high < 0);
    }

    // the paired ladder ranks both arms on the re-timing's speedups, not on the verdicts'
    void pairedLadderRanksOnTheRetimingsSpeedups() {
        const Comparison both = retimed(cell(passing(1), passing(0.7), passing(0.9)), timing(1.3, 1.29, 1.31),
                                        timing(2.6, 2.58, 2.62), timing(2.0, 1.98, 2.02));
        const Contrast paired = contrast({both});
        MKB_NEAR(paired.base->rates[2], 1.0); // 1.3 attains R@1 (its verdict's 0.7 did not)
        MKB_NEAR(paired.skill->rates[3], 1.0);
        MKB_NEAR(paired.lift->rates[3], 1.0);
        const Contrast unpaired = contrast({both}, withTiming(TimingRule::Unpaired));
        MKB_NEAR(unpaired.base->rates[2], 0.0);
        MKB_NEAR(unpaired.lift->rates[3], 0.0);
    }

    // a failed arm stays failed, a skipped skill is its base, and a cell without a re-timing keeps its verdicts'
    // speedups and is counted as fallen back (a cell where nothing passed needs no re-timing)
    void fallbackIsCountedAndFailedArmsStayFailed() {
        const Comparison failedSkill = retimed(cell(passing(1), passing(1.5), failing(), atProblem(1)),
                                               timing(1.6, 1.5, 1.7), std::nullopt, std::nullopt);
        const Comparison skipped = retimed(cell(passing(1), passing(1.5), skippedSkill(), atProblem(2)),
                                           timing(2.2, 2.1, 2.3), std::nullopt, std::nullopt);
        const Comparison noRetiming = cell(passing(1), passing(1.2), passing(2.5), atProblem(3));
        const Comparison untimedSkill = retimed(cell(passing(1), passing(1.2), passing(2.5), atProblem(4)),
                                                timing(1.3, 1.2, 1.4), std::nullopt, std::nullopt);
        const Comparison nothingPassed = cell(passing(1), failing(), failing(), atProblem(5));
        const Contrast result = contrast({failedSkill, skipped, noRetiming, untimedSkill, nothingPassed});
        QCOMPARE(result.pairedCells, std::size_t(2));
        QCOMPARE(result.fellBack, std::size_t(2));
        // base: 1.6, 2.2 (paired), 1.2, 1.2 (verdicts), failed → R@2 = 1/5; skill: failed, 2.2 (its base), 2.5, 2.5
        MKB_NEAR(result.base->rates[3], 0.2);
        MKB_NEAR(result.skill->rates[3], 0.6);
        MKB_NEAR(result.skill->rates[0], 0.6);
        MKB_NEAR(result.lift->rates[0], -0.2); // the failed skill against its passing base: decisive, not a tie
    }

    // the tie rule: a crossing whose speedup CI contains t, or whose paired ratio CI contains 1, lifts nothing and
    // is counted; a crossing outside both is lift; a pass/fail crossing is never a tie
    void crossingWithinNoiseIsATie() {
        // skill CI [1.98, 2.06] contains 2; the ratio CI [1.01, 1.05] excludes 1
        const Comparison straddling =
            retimed(cell(passing(1), passing(1), passing(1), atProblem(1)), timing(1.95, 1.93, 1.97),
                    timing(2.02, 1.98, 2.06), timing(1.03, 1.01, 1.05));
        // neither speedup CI contains 2, but the ratio CI [0.98, 1.06] contains 1
        const Comparison indistinct =
            retimed(cell(passing(1), passing(1), passing(1), atProblem(2)), timing(1.96, 1.95, 1.97),
                    timing(2.03, 2.02, 2.04), timing(1.03, 0.98, 1.06));
        // a clear crossing: 1.9 [1.89, 1.91] against 2.2 [2.19, 2.21], ratio 1.16 [1.15, 1.17]
        const Comparison clear = retimed(cell(passing(1), passing(1), passing(1), atProblem(3)),
                                         timing(1.9, 1.89, 1.91), timing(2.2, 2.19, 2.21), timing(1.16, 1.15, 1.17));
        const Contrast ties = contrast({straddling, indistinct});
        QCOMPARE(ties.ties, (std::vector<std::size_t>{0, 0, 0, 2, 0}));
        MKB_NEAR(ties.lift->rates[3], 0.0);
        MKB_NEAR(ties.skill->rates[3], 0.0); // the skill counts as its base at t
        const Contrast lift = contrast({clear});
        QCOMPARE(lift.ties, (std::vector<std::size_t>{0, 0, 0, 0, 0}));
        MKB_NEAR(lift.lift->rates[3], 1.0);
        // a fell-back cell is ranked as under the unpaired rule: its verdicts' CIs make no tie, and it is counted
        const Contrast verdictCrossing =
            contrast({cell(passing(1), passingWithin(1.9, 1.85, 1.95), passingWithin(2.05, 1.98, 2.1))});
        QCOMPARE(verdictCrossing.ties[3], std::size_t(0));
        MKB_NEAR(verdictCrossing.lift->rates[3], 1.0);
        QCOMPARE(verdictCrossing.fellBack, std::size_t(1));
        // a failed base against a passing skill: decisive at every threshold it reaches
        const Contrast decisive = contrast({cell(passing(1), failing(), passingWithin(1.0, 0.9, 1.1))});
        QCOMPARE(decisive.ties, (std::vector<std::size_t>{0, 0, 0, 0, 0}));
        MKB_NEAR(decisive.lift->rates[0], 1.0);
        MKB_NEAR(decisive.lift->rates[2], 1.0);
    }

    // the intervals are seeded: the same cells in any order give the same bounds, and S's interval brackets S
    void liftIntervalsAreSeededAndDeterministic() {
        std::vector<Comparison> cells;
        for (int problem = 1; problem <= 10; ++problem) {
            cells.push_back(cell(passing(1), passing(problem % 3 ? 1.2 : 0.4), passing(problem % 4 ? 2.5 : 0.9),
                                 atProblem(problem)));
        }
        const Contrast first = contrast(cells, withTiming(TimingRule::Unpaired));
        std::reverse(cells.begin(), cells.end());
        const Contrast second = contrast(cells, withTiming(TimingRule::Unpaired));
        QVERIFY(first.intervals.liftScore && second.intervals.liftScore);
        QCOMPARE(first.intervals.liftScore->low, second.intervals.liftScore->low);
        QCOMPARE(first.intervals.liftScore->high, second.intervals.liftScore->high);
        QVERIFY(first.intervals.liftScore->low < first.lift->score &&
                first.lift->score < first.intervals.liftScore->high);
        QVERIFY(first.intervals.liftScore->low > 0); // lift on 10 cells this clear excludes 0
        QVERIFY(first.intervals.baseScore->low <= first.base->score &&
                first.base->score <= first.intervals.baseScore->high);
        QVERIFY(first.intervals.skillScore->low <= first.skill->score &&
                first.skill->score <= first.intervals.skillScore->high);
        // one cell carries no spread: no interval rather than a collapsed one
        const Contrast single = contrast({cells.front()});
        QVERIFY(!single.intervals.liftScore.has_value());
        QCOMPARE(single.intervals.liftRates.size(), std::size_t(5));
        QVERIFY(!single.intervals.liftRates[0].has_value());
    }

    // deferred intervals: groupMetrics leaves `all`'s empty and changes nothing else; ladderIntervals gives, alone, the
    // very bounds the computed path gives (under both rules, with an unresolved comparison left out as the ladder does)
    void deferredIntervalsComeLaterAndEqualTheComputedOnes() {
        std::vector<Comparison> cells;
        for (int problem = 1; problem <= 10; ++problem) {
            cells.push_back(retimed(cell(passing(1), passing(problem % 3 ? 1.2 : 0.4),
                                         passingWithin(problem % 4 ? 2.5 : 0.9, 0.8, 2.6), atProblem(problem)),
                                    timing(problem % 3 ? 1.1 : 0.5, 1.0, 1.2),
                                    timing(problem % 4 ? 2.4 : 1.0, 2.0, 2.8), timing(2.0, 1.5, 2.5)));
        }
        cells.push_back(unresolvedCell(passing(2.0), passing(2.0), atProblem(11)));
        ComparisonView view;
        for (const Comparison& comparison : cells) {
            view.push_back(&comparison);
        }
        const auto same = [](const std::optional<Interval>& left, const std::optional<Interval>& right) {
            return left.has_value() == right.has_value() &&
                   (!left || (left->low == right->low && left->high == right->high));
        };
        for (const TimingRule rule : {TimingRule::Paired, TimingRule::Unpaired}) {
            const AnalysisSettings settings = withTiming(rule);
            const GroupMetrics computed = groupMetrics(view, settings);
            const GroupMetrics deferred = groupMetrics(view, settings, SummaryInterval::Deferred);
            QVERIFY(computed.all.intervals.liftScore && computed.all.intervals.baseScore);
            QVERIFY(!deferred.all.intervals.baseScore && !deferred.all.intervals.skillScore);
            QVERIFY(!deferred.all.intervals.liftScore && deferred.all.intervals.liftRates.empty());
            QCOMPARE(deferred.all.resolved, computed.all.resolved);
            QCOMPARE(deferred.all.lift->score, computed.all.lift->score);
            QCOMPARE(deferred.all.ties, computed.all.ties);
            QCOMPARE(deferred.all.pairedCells, computed.all.pairedCells);
            QCOMPARE(deferred.withSkill.lift->score, computed.withSkill.lift->score);

            const LadderIntervals later = ladderIntervals(view, settings);
            QVERIFY(same(later.baseScore, computed.all.intervals.baseScore));
            QVERIFY(same(later.skillScore, computed.all.intervals.skillScore));
            QVERIFY(same(later.liftScore, computed.all.intervals.liftScore));
            QCOMPARE(later.liftRates.size(), computed.all.intervals.liftRates.size());
            for (std::size_t i = 0; i < later.liftRates.size(); ++i) {
                QVERIFY(same(later.liftRates[i], computed.all.intervals.liftRates[i]));
            }
        }
        QVERIFY(!ladderIntervals(ComparisonView{view.front()}).liftScore); // one cell: no interval
    }

    // the resampler keeps each item's statistics together: a constant difference has a collapsed interval even
    // where both statistics vary
    void meanBootstrapKeepsItemsTogether() {
        const std::vector<std::optional<Interval>> intervals =
            meanBootstrapCis({{1, 3, 2}, {5, 7, 2}, {2, 4, 2}, {9, 11, 2}}, 3);
        QCOMPARE(intervals.size(), std::size_t(3));
        QVERIFY(intervals[0] && intervals[0]->low < intervals[0]->high);
        QCOMPARE(intervals[2]->low, 2.0);
        QCOMPARE(intervals[2]->high, 2.0);
        QVERIFY(intervals[1]->low - intervals[0]->low == 2.0);
        QVERIFY(!meanBootstrapCis({{1.0}}, 1)[0].has_value());
        QVERIFY(!meanBootstrapCis({{1.0}, {std::nan("")}}, 1)[0].has_value());
    }
};

QTEST_GUILESS_MAIN(PairedLadder)
#include "tst_paired_ladder.moc"
