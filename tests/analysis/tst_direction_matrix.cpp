// Golden tests of the direction matrix: four DSLs (twelve ordered pairs) with a missing pair, an unresolved pair, a
// lift within noise and a paired cell the unpaired rule judges otherwise, each number derived by hand, and every
// cell equal to the direction split's group.
#include "analysis_fixtures.h"

#include "core/analysis/direction_matrix.h"
#include "core/analysis/ladder.h"
#include "core/analysis/transfer.h"

#include <QtTest>

#include <cmath>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

CellPlace place(const std::string& from, const std::string& to, int problem) {
    CellPlace where;
    where.sourceDsl = from;
    where.targetDsl = to;
    where.problem = problem;
    return where;
}

/// Base failed, skill passed at 2.0: attains R@0, R@0.5, R@1 and R@2 of five thresholds, lift 80; r = 2 / 1.
Comparison helped(const std::string& from, const std::string& to, int problem) {
    return cell(passing(1), failing(), passing(2.0), place(from, to, problem));
}

/// Base passed at 2.0, skill failed: lift −80; r = 1 / 2.
Comparison harmed(const std::string& from, const std::string& to, int problem) {
    return cell(passing(1), passing(2.0), failing(), place(from, to, problem));
}

/// Both passed, base 1.0 and skill 1.2 by their gradings (same tier, ratio 1.2 ≥ 1 + δ: helped under the unpaired
/// rule), re-timed together at skill/base 1.02 with 95% CI [0.98, 1.06] (neutral, within noise, under the paired rule).
Comparison retimedTie(const std::string& from, const std::string& to, int problem) {
    Comparison comparison = cell(passing(1), passing(1.0), passing(1.2), place(from, to, problem));
    auto retiming = std::make_shared<CellRetiming>();
    retiming->recordId = 1;
    retiming->baseOverEager = PairedTiming{1.0, 0.97, 1.03, 10};
    retiming->skillOverEager = PairedTiming{1.02, 0.99, 1.05, 10};
    retiming->skillOverBase = PairedTiming{1.02, 0.98, 1.06, 10};
    comparison.retiming = std::move(retiming);
    return comparison;
}

/// DSLs cuda, numba, pallas, triton (given out of order); of the twelve ordered pairs:
///   pallas → numba    absent (no data)
///   numba → pallas    one comparison without its skill arm (unresolved)
///   triton → cuda     helped at p1, harmed at p2: lift 0 with interval [−80, +80] (within noise); T 1, H 1; ΔGM 0
///   cuda → triton     harmed at p1 and p2: lift −80, interval [−80, −80]; H 2 of 2; ΔGM 1/2 − 1
///   numba → cuda      retimedTie at p1 alone: one cell, so no intervals; paired: neutral; unpaired: helped
///   the other seven   helped at p1 and p2: lift +80, interval [+80, +80]; T 2 of 2; ΔGM +1 with interval [1, 1]
std::vector<Comparison> fourDslFixture() {
    std::vector<Comparison> comparisons;
    const std::vector<std::string> dsls{"triton", "pallas", "cuda", "numba"};
    for (const std::string& from : dsls) {
        for (const std::string& to : dsls) {
            const std::string direction = from + "2" + to;
            if (from == to || direction == "pallas2numba") {
                continue;
            }
            if (direction == "numba2pallas") {
                comparisons.push_back(unresolvedCell(passing(1), passing(1), place(from, to, 1)));
            } else if (direction == "triton2cuda") {
                comparisons.push_back(helped(from, to, 1));
                comparisons.push_back(harmed(from, to, 2));
            } else if (direction == "cuda2triton") {
                comparisons.push_back(harmed(from, to, 1));
                comparisons.push_back(harmed(from, to, 2));
            } else if (direction == "numba2cuda") {
                comparisons.push_back(retimedTie(from, to, 1));
            } else {
                comparisons.push_back(helped(from, to, 1));
                comparisons.push_back(helped(from, to, 2));
            }
        }
    }
    return comparisons;
}

std::size_t countState(const DirectionMatrix& matrix, DirectionCellState state) {
    return std::size_t(std::count_if(matrix.cells.begin(), matrix.cells.end(),
                                     [state](const DirectionCell& cell) { return cell.state == state; }));
}

} // namespace

class DirectionMatrixTest : public QObject {
    Q_OBJECT
private slots:
    // four DSLs in id order, 16 cells, the diagonal marked, twelve ordered pairs, the absent one explicit
    void directionMatrix_fourDslsLayTwelvePairsOutInIdOrder() {
        const DirectionMatrix matrix = directionMatrix(fourDslFixture());
        QCOMPARE(matrix.dsls, (std::vector<std::string>{"cuda", "numba", "pallas", "triton"}));
        QCOMPARE(matrix.cells.size(), std::size_t(16));
        QCOMPARE(matrix.pairs().size(), std::size_t(12));
        QCOMPARE(countState(matrix, DirectionCellState::Diagonal), std::size_t(4));
        QCOMPARE(countState(matrix, DirectionCellState::NoData), std::size_t(1));
        QCOMPARE(countState(matrix, DirectionCellState::Unresolved), std::size_t(1));
        QCOMPARE(countState(matrix, DirectionCellState::Measured), std::size_t(10));
        for (std::size_t row = 0; row < 4; ++row) {
            for (std::size_t column = 0; column < 4; ++column) {
                const DirectionCell& cell = matrix.at(row, column);
                QCOMPARE(cell.sourceDsl, matrix.dsls[row]);
                QCOMPARE(cell.targetDsl, matrix.dsls[column]);
                QCOMPARE(cell.state == DirectionCellState::Diagonal, row == column);
            }
        }
        const DirectionCell* missing = matrix.find("pallas", "numba");
        QVERIFY(missing);
        QCOMPARE(missing->state, DirectionCellState::NoData);
        QCOMPARE(missing->comparisons, std::size_t(0));
        QVERIFY(!missing->lift() && !missing->transfer.deltaGeometricMean);
        const DirectionCell* pending = matrix.find("numba", "pallas");
        QCOMPARE(pending->state, DirectionCellState::Unresolved);
        QCOMPARE(pending->comparisons, std::size_t(1));
        QCOMPARE(pending->resolved(), std::size_t(0));
        QVERIFY(!pending->lift());
        QVERIFY(!matrix.find("numba", "jax"));
        QCOMPARE(QString::fromLatin1(toString(DirectionCellState::NoData)), QStringLiteral("no data"));
    }

    // a cell helped once and harmed once lifts 0 with an interval that contains 0: within noise
    void directionMatrix_helpedAndHarmedCellIsWithinNoise() {
        const DirectionMatrix matrix = directionMatrix(fourDslFixture());
        const DirectionCell& noise = *matrix.find("triton", "cuda");
        QCOMPARE(noise.direction(), std::string("triton2cuda"));
        QCOMPARE(noise.resolved(), std::size_t(2));
        MKB_NEAR_OPT(noise.lift(), 0.0);
        QVERIFY(noise.liftCi());
        MKB_NEAR(noise.liftCi()->low, -80.0);
        MKB_NEAR(noise.liftCi()->high, 80.0);
        QVERIFY(noise.liftWithinNoise());
        QCOMPARE(noise.transfer.outcomes.helped, std::size_t(1));
        QCOMPARE(noise.transfer.outcomes.harmed, std::size_t(1));
        MKB_NEAR_OPT(noise.transfer.outcomes.helpedShare, 0.5);
        MKB_NEAR_OPT(noise.transfer.deltaGeometricMean, 0.0); // √(2 · 1/2) − 1

        const DirectionCell& clear = *matrix.find("cuda", "numba");
        MKB_NEAR_OPT(clear.lift(), 80.0);
        QVERIFY(clear.liftCi());
        MKB_NEAR(clear.liftCi()->low, 80.0);
        QVERIFY(!clear.liftWithinNoise());
        QCOMPARE(clear.transfer.outcomes.helped, std::size_t(2));
        MKB_NEAR_OPT(clear.transfer.deltaGeometricMean, 1.0);
        QVERIFY(clear.transfer.deltaGeometricMeanCi);
        MKB_NEAR(clear.transfer.deltaGeometricMeanCi->low, 1.0);

        const DirectionCell& reverse = *matrix.find("cuda", "triton");
        MKB_NEAR_OPT(reverse.lift(), -80.0);
        QVERIFY(!reverse.liftWithinNoise());
        QCOMPARE(reverse.transfer.outcomes.harmed, std::size_t(2));
        MKB_NEAR_OPT(reverse.transfer.outcomes.harmedShare, 1.0);
        MKB_NEAR_OPT(reverse.transfer.deltaGeometricMean, -0.5);
    }

    // one resolved cell has a lift but no interval (a single cell says nothing of the spread), so it is not "within
    // noise" either; the paired rule judges it neutral on its re-timing, the unpaired rule helped on its gradings
    void directionMatrix_followsTheTimingRuleAsTheReportDoes() {
        const std::vector<Comparison> comparisons = fourDslFixture();
        const DirectionMatrix paired = directionMatrix(comparisons);
        const DirectionCell& single = *paired.find("numba", "cuda");
        QCOMPARE(paired.timing, TimingRule::Paired);
        QCOMPARE(single.resolved(), std::size_t(1));
        MKB_NEAR_OPT(single.lift(), 0.0);
        QVERIFY(!single.liftCi());
        QVERIFY(!single.liftWithinNoise());
        QVERIFY(!single.transfer.deltaGeometricMeanCi);
        QCOMPARE(single.transfer.outcomes.neutral, std::size_t(1));
        QCOMPARE(single.transfer.outcomes.paired, std::size_t(1));
        QCOMPARE(single.transfer.outcomes.withinNoise, std::size_t(1));
        QCOMPARE(single.ladder.pairedCells, std::size_t(1));

        AnalysisSettings unpairedRule;
        unpairedRule.timing = TimingRule::Unpaired;
        const DirectionMatrix unpaired = directionMatrix(comparisons, unpairedRule);
        QCOMPARE(unpaired.timing, TimingRule::Unpaired);
        const DirectionCell& judged = *unpaired.find("numba", "cuda");
        QCOMPARE(judged.transfer.outcomes.helped, std::size_t(1));
        QCOMPARE(judged.transfer.outcomes.paired, std::size_t(0));
        QCOMPARE(judged.ladder.timing, TimingRule::Unpaired);
    }

    // every pair's numbers are those of its group under the direction split: one formula, not a second
    void directionMatrix_cellsEqualTheDirectionSplitsGroups() {
        const std::vector<Comparison> comparisons = fourDslFixture();
        for (const TimingRule rule : {TimingRule::Paired, TimingRule::Unpaired}) {
            AnalysisSettings settings;
            settings.timing = rule;
            const DirectionMatrix matrix = directionMatrix(comparisons, settings);
            const auto groups = groupMetricsByDirection(comparisons, settings);
            std::size_t checked = 0;
            for (const DirectionCell* cell : matrix.pairs()) {
                const auto group = groups.find(cell->direction());
                if (group == groups.end()) {
                    QCOMPARE(cell->state, DirectionCellState::NoData);
                    continue;
                }
                std::vector<Comparison> members;
                for (const Comparison& comparison : comparisons) {
                    if (comparison.direction == cell->direction()) {
                        members.push_back(comparison);
                    }
                }
                const TransferSummary expected = transferSummary(members, settings);
                QCOMPARE(cell->comparisons, group->second.comparisons);
                QCOMPARE(cell->resolved(), group->second.all.resolved);
                QCOMPARE(cell->lift().has_value(), group->second.all.lift.has_value());
                if (cell->lift()) {
                    QCOMPARE(*cell->lift(), group->second.all.lift->score);
                }
                QCOMPARE(cell->liftCi().has_value(), group->second.all.intervals.liftScore.has_value());
                if (cell->liftCi()) {
                    QCOMPARE(cell->liftCi()->low, group->second.all.intervals.liftScore->low);
                    QCOMPARE(cell->liftCi()->high, group->second.all.intervals.liftScore->high);
                }
                QCOMPARE(cell->transfer.outcomes.helped, expected.outcomes.helped);
                QCOMPARE(cell->transfer.outcomes.harmed, expected.outcomes.harmed);
                QCOMPARE(cell->transfer.deltaGeometricMean, expected.deltaGeometricMean);
                QCOMPARE(cell->transfer.deltaGeometricMeanCi.has_value(), expected.deltaGeometricMeanCi.has_value());
                ++checked;
            }
            QCOMPARE(checked, std::size_t(11));
        }
    }

    // given DSLs fix the rows and columns (two DSLs: 2×2), leave the others' comparisons out and may name a DSL
    // without data; a deferred ΔGM interval is left unset
    void directionMatrix_givenDslsFixTheLayout() {
        const DirectionMatrix matrix =
            directionMatrix(fourDslFixture(), {}, {"triton", "cuda", "tirx"}, SummaryInterval::Deferred);
        QCOMPARE(matrix.size(), std::size_t(3));
        QCOMPARE(matrix.at(0, 1).direction(), std::string("triton2cuda"));
        QCOMPARE(matrix.at(0, 1).state, DirectionCellState::Measured);
        QVERIFY(matrix.at(0, 1).transfer.deltaGeometricMean);
        QVERIFY(!matrix.at(0, 1).transfer.deltaGeometricMeanCi);
        QCOMPARE(matrix.at(1, 0).direction(), std::string("cuda2triton"));
        QCOMPARE(matrix.at(2, 0).state, DirectionCellState::NoData);

        const DirectionMatrix two = directionMatrix(fourDslFixture(), {}, {"triton", "cuda"});
        QCOMPARE(two.cells.size(), std::size_t(4));
        QCOMPARE(two.pairs().size(), std::size_t(2));
        QVERIFY(two.at(1, 0).transfer.deltaGeometricMeanCi);

        const DirectionMatrix empty = directionMatrix(std::vector<Comparison>{});
        QVERIFY(empty.dsls.empty() && empty.cells.empty() && empty.pairs().empty());
    }

    // a deferred matrix leaves the lift intervals unset too (its lifts stay), and directionLadderIntervals gives each
    // cell's, row-major, exactly as the computed matrix holds them
    void directionMatrix_deferredLiftIntervalsComeFromDirectionLadderIntervals() {
        const std::vector<Comparison> comparisons = fourDslFixture();
        ComparisonView view;
        for (const Comparison& comparison : comparisons) {
            view.push_back(&comparison);
        }
        const DirectionMatrix computed = directionMatrix(view);
        const DirectionMatrix deferred = directionMatrix(view, {}, {}, SummaryInterval::Deferred);
        const std::vector<LadderIntervals> later = directionLadderIntervals(view);
        QCOMPARE(later.size(), computed.cells.size());
        QCOMPARE(deferred.cells.size(), computed.cells.size());
        const auto same = [](const std::optional<Interval>& left, const std::optional<Interval>& right) {
            return left.has_value() == right.has_value() &&
                   (!left || (left->low == right->low && left->high == right->high));
        };
        std::size_t withInterval = 0;
        for (std::size_t i = 0; i < computed.cells.size(); ++i) {
            QVERIFY(!deferred.cells[i].liftCi());
            QCOMPARE(deferred.cells[i].lift(), computed.cells[i].lift());
            const LadderIntervals& expected = computed.cells[i].ladder.intervals;
            QVERIFY(same(later[i].baseScore, expected.baseScore));
            QVERIFY(same(later[i].skillScore, expected.skillScore));
            QVERIFY(same(later[i].liftScore, expected.liftScore));
            QCOMPARE(later[i].liftRates.size(), expected.liftRates.size());
            withInterval += expected.liftScore ? 1 : 0;
        }
        QVERIFY(withInterval > 0);
        std::atomic<bool> cancel{true};
        QVERIFY(directionLadderIntervals(view, {}, {}, &cancel).empty()); // cancelled before the first cell
    }
};

QTEST_APPLESS_MAIN(DirectionMatrixTest)
#include "tst_direction_matrix.moc"
