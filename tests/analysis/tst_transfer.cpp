// Golden tests of the paired transfer analysis: tiers, effective speedup, ratios, ΔGM, outcomes with the δ band,
// source standing and the reverse-direction table.
#include "analysis_fixtures.h"

#include "core/analysis/transfer.h"

#include <QtTest>

#include <cmath>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

/// Seven resolved comparisons (source irrelevant, passes at 1.0):
///   O1 base 0.8 (tier 2), skill 1.2 (tier 3)            → helped (tiers differ)
///   O2 base 1.2 (tier 3), skill fail (tier 0)           → harmed
///   O3 base 2.0, skill 2.1: tier 4 both, ratio = 1.05 = 1+δ exactly → helped (tie)
///   O4 base 1.5, skill 1.5/1.05: tier 3 both, ratio = 1/(1+δ) → harmed (tie)
///   O5 base 1.2, skill 1.25: tier 3 both, ratio 1.0417 inside the band → neutral
///   O6 both fail → neutral
///   O7 base 3.0, skill skipped → counts as base → neutral
std::vector<Comparison> outcomeFixture() {
    return {cell(passing(1), passing(0.8), passing(1.2)),  cell(passing(1), passing(1.2), failing()),
            cell(passing(1), passing(2.0), passing(2.1)),  cell(passing(1), passing(1.5), passing(1.5 / 1.05)),
            cell(passing(1), passing(1.2), passing(1.25)), cell(passing(1), failing(), failing()),
            cell(passing(1), passing(3.0), skippedSkill())};
}

CellPlace at(int problem, int replicate, const std::string& from, const std::string& to,
             const std::string& model = "m") {
    CellPlace place;
    place.problem = problem;
    place.replicate = replicate;
    place.sourceDsl = from;
    place.targetDsl = to;
    place.model = model;
    return place;
}

Comparison helpedAt(const CellPlace& place) {
    return cell(passing(1), failing(), passing(1.0), place);
}
Comparison harmedAt(const CellPlace& place) {
    return cell(passing(1), passing(1.0), failing(), place);
}

} // namespace

class TransferTest : public QObject {
    Q_OBJECT
private slots:
    // tier: number of thresholds attained, ties attain
    void tierCountsAttainedThresholds() {
        QCOMPARE(tier(failing()), 0);
        QCOMPARE(tier(passing(0.3)), 1); // R@0 only
        QCOMPARE(tier(passing(0.5)), 2); // tie at 0.5
        QCOMPARE(tier(passing(1.0)), 3); // tie at 1
        QCOMPARE(tier(passing(2.0)), 4); // tie at 2
        QCOMPARE(tier(passing(3.9)), 4);
        QCOMPARE(tier(passing(4.0)), 5); // tie at 4
    }

    // effective speedup: clipped at 1, failures fall back to eager; unclipped keeps slow passes
    void effectiveSpeedupClippedAndUnclipped() {
        AnalysisSettings unclipped;
        unclipped.clipEffectiveSpeedup = false;
        QCOMPARE(effectiveSpeedup(passing(0.5)), 1.0);
        QCOMPARE(effectiveSpeedup(passing(2.5)), 2.5);
        QCOMPARE(effectiveSpeedup(failing()), 1.0);
        QCOMPARE(effectiveSpeedup(passing(0.5), unclipped), 0.5);
        QCOMPARE(effectiveSpeedup(passing(2.5), unclipped), 2.5);
        QCOMPARE(effectiveSpeedup(failing(), unclipped), 1.0);
    }

    // paired ratio: e(skill)/e(base), a skipped skill gives 1
    void pairedRatioOfEffectiveSpeedups() {
        QCOMPARE(pairedRatio(cell(passing(1), failing(), passing(4.0))), 4.0);      // 4 / 1
        QCOMPARE(pairedRatio(cell(passing(1), passing(0.5), passing(3.0))), 3.0);   // 3 / max(0.5, 1)
        QCOMPARE(pairedRatio(cell(passing(1), passing(2.0), skippedSkill())), 1.0); // base / base
    }

    // ΔGM: geometric mean of paired ratios minus one, clipped and unclipped
    void deltaGeometricMeanOfRatios() {
        // P1 base fail, skill 4.0: r = 4/1 = 4; P2 base 1.0, skill 1.0: r = 1; P3 base 0.5, skill fail:
        // clipped r = 1/1 = 1, unclipped r = 1/0.5 = 2.
        const std::vector<Comparison> comparisons{cell(passing(1), failing(), passing(4.0)),
                                                  cell(passing(1), passing(1.0), passing(1.0)),
                                                  cell(passing(1), passing(0.5), failing())};
        // clipped: (4·1·1)^(1/3) − 1 = 0.5874010519681994
        MKB_NEAR_OPT(deltaGeometricMean(comparisons), 0.5874010519681994);
        AnalysisSettings unclipped;
        unclipped.clipEffectiveSpeedup = false;
        // unclipped: (4·1·2)^(1/3) − 1 = 2 − 1 = 1
        MKB_NEAR_OPT(deltaGeometricMean(comparisons, unclipped), 1.0);
    }

    // outcome: tiers differ by direction; same tier uses the δ band with ties at exactly 1+δ and 1/(1+δ)
    void outcomeWithDeltaBand() {
        const std::vector<Comparison> comparisons = outcomeFixture();
        const std::vector<Outcome> expected{Outcome::Helped,  Outcome::Harmed,  Outcome::Helped, Outcome::Harmed,
                                            Outcome::Neutral, Outcome::Neutral, Outcome::Neutral};
        for (std::size_t i = 0; i < comparisons.size(); ++i) {
            QVERIFY2(transferOutcome(comparisons[i]) == expected[i],
                     qPrintable(QStringLiteral("O%1 is %2").arg(i + 1).arg(toString(transferOutcome(comparisons[i])))));
        }
        // A wider band turns O3 and O4 neutral.
        AnalysisSettings wide;
        wide.delta = 0.06;
        QVERIFY(transferOutcome(comparisons[2], wide) == Outcome::Neutral);
        QVERIFY(transferOutcome(comparisons[3], wide) == Outcome::Neutral);
    }

    // outcome: T and H shares and ΔGM over a group
    void transferSummaryOfGroup() {
        const TransferSummary summary = transferSummary(outcomeFixture());
        QCOMPARE(summary.outcomes.total, std::size_t(7));
        QCOMPARE(summary.outcomes.helped, std::size_t(2));  // O1, O3
        QCOMPARE(summary.outcomes.harmed, std::size_t(2));  // O2, O4
        QCOMPARE(summary.outcomes.neutral, std::size_t(3)); // O5, O6, O7
        MKB_NEAR_OPT(summary.outcomes.helpedShare, 2.0 / 7);
        MKB_NEAR_OPT(summary.outcomes.harmedShare, 2.0 / 7);
        // clipped ratios: 1.2/1, 1/1.2, 2.1/2.0, (1.5/1.05)/1.5, 1.25/1.2, 1, 1 → product 1.25/1.2;
        // ΔGM = (1.25/1.2)^(1/7) − 1 = 0.005848751047341283
        MKB_NEAR_OPT(summary.deltaGeometricMean, 0.005848751047341283);
    }

    // outcome: a summary with its interval deferred has the same counts and ΔGM and no interval; the interval is
    // deltaGeometricMeanCi's, as a computed summary carries it
    void aDeferredSummaryLeavesOnlyTheIntervalForLater() {
        const std::vector<Comparison> group = outcomeFixture();
        const TransferSummary computed = transferSummary(group);
        const TransferSummary deferred = transferSummary(group, {}, SummaryInterval::Deferred);
        QVERIFY(computed.deltaGeometricMeanCi.has_value());
        QVERIFY(!deferred.deltaGeometricMeanCi.has_value());
        QCOMPARE(deferred.outcomes.helped, computed.outcomes.helped);
        QCOMPARE(deferred.outcomes.harmed, computed.outcomes.harmed);
        QCOMPARE(deferred.outcomes.neutral, computed.outcomes.neutral);
        QCOMPARE(deferred.deltaGeometricMean, computed.deltaGeometricMean);
        const std::optional<Interval> later = deltaGeometricMeanCi(group);
        QVERIFY(later.has_value());
        QCOMPARE(later->low, computed.deltaGeometricMeanCi->low);
        QCOMPARE(later->high, computed.deltaGeometricMeanCi->high);
    }

    // boundary: arms graded under different boundaries are never paired; the summary counts them as not comparable
    void armsUnderDifferentBoundariesAreNotComparableAndCounted() {
        auto under = [](Attempt attempt, const std::string& boundary) {
            attempt.boundary = boundary;
            return attempt;
        };
        const Comparison mixed = cell(under(passing(1), "mkb"), under(passing(1), "mkb"), under(passing(2), "strict"));
        QVERIFY(mixed.armsFilled());
        QVERIFY(!mixed.resolved());
        QVERIFY(mixed.notComparable());
        QCOMPARE(mixed.boundary(), std::string());
        const Comparison same =
            cell(under(passing(1), "strict"), under(passing(1), "strict"), under(passing(2), "strict"));
        QVERIFY(same.resolved());
        QCOMPARE(same.boundary(), std::string("strict"));
        const TransferSummary summary = transferSummary({mixed, same});
        QCOMPARE(summary.outcomes.total, std::size_t(1));
        QCOMPARE(summary.outcomes.helped, std::size_t(1));
        QCOMPARE(summary.outcomes.notComparable, std::size_t(1));
        // Verdicts older than boundaries are their own kind; a skipped skill arm has none and counts as its base.
        QVERIFY(cell(under(passing(1), "mkb"), under(passing(1), "legacy"), under(passing(2), "mkb")).notComparable());
        QVERIFY(cell(under(passing(1), "legacy"), under(passing(1), "legacy"), skippedSkill()).resolved());
    }

    // outcome: no resolved cells give zero counts and null rates
    void transferWithNoResolvedCells() {
        const TransferSummary summary = transferSummary({unresolvedCell(passing(1), passing(1))});
        QCOMPARE(summary.outcomes.total, std::size_t(0));
        QVERIFY(!summary.outcomes.helpedShare && !summary.outcomes.harmedShare && !summary.outcomes.neutralShare);
        QVERIFY(!summary.deltaGeometricMean);
        for (const StandingRow& row : outcomesBySourceStanding({})) {
            QCOMPARE(row.outcomes.total, std::size_t(0));
            QVERIFY(!row.outcomes.helpedShare);
        }
    }

    // standing: source tier against base tier, with outcome rates per standing
    void sourceStandingWithOutcomeRates() {
        // S1 source 1.0 (3) vs base 0.5 (2): above; skill 1.0 (3) → helped
        // S2 source 0.6 (2) vs base 0.7 (2): same;  skill fail → harmed
        // S3 source fail (0) vs base 2.0 (4): below; skill 2.0 → neutral
        // S4 source 4.0 (5) vs base fail (0): above; skill skipped → neutral
        const std::vector<Comparison> comparisons{
            cell(passing(1.0), passing(0.5), passing(1.0)), cell(passing(0.6), passing(0.7), failing()),
            cell(failing(), passing(2.0), passing(2.0)), cell(passing(4.0), failing(), skippedSkill())};
        QVERIFY(sourceStanding(comparisons[0]) == SourceStanding::Above);
        QVERIFY(sourceStanding(comparisons[1]) == SourceStanding::Same);
        QVERIFY(sourceStanding(comparisons[2]) == SourceStanding::Below);
        const auto rows = outcomesBySourceStanding(comparisons);
        QVERIFY(rows[0].standing == SourceStanding::Above);
        QCOMPARE(rows[0].outcomes.total, std::size_t(2));
        MKB_NEAR_OPT(rows[0].outcomes.helpedShare, 0.5); // S1 of {S1, S4}
        MKB_NEAR_OPT(rows[0].outcomes.neutralShare, 0.5);
        MKB_NEAR_OPT(rows[0].outcomes.harmedShare, 0.0);
        QCOMPARE(rows[1].outcomes.total, std::size_t(1));
        MKB_NEAR_OPT(rows[1].outcomes.harmedShare, 1.0);
        QCOMPARE(rows[2].outcomes.total, std::size_t(1));
        MKB_NEAR_OPT(rows[2].outcomes.neutralShare, 1.0);
    }

    // reverse direction: what happened the other way on the same model, problem and replicate
    void reverseDirectionTableMatchesModelProblemReplicate() {
        std::vector<Comparison> comparisons{
            helpedAt(at(1, 1, "triton", "cuda")), // a: reverse b harmed
            harmedAt(at(1, 1, "cuda", "triton")), // b: reverse a helped
            helpedAt(at(2, 1, "triton", "cuda")), // c: reverse unresolved → missing
            unresolvedCell(passing(1), passing(1), at(2, 1, "cuda", "triton")),
            helpedAt(at(1, 2, "triton", "cuda")),       // e: reverse f helped
            helpedAt(at(1, 2, "cuda", "triton")),       // f: reverse e helped
            harmedAt(at(1, 1, "triton", "cuda", "m2")), // g: other model, no reverse → missing
        };
        const auto rows = reverseDirectionTable(comparisons);
        const ReverseDirectionRow& helped = rows[0];
        QVERIFY(helped.forward == Outcome::Helped);
        QCOMPARE(helped.comparisons, std::size_t(4)); // a, c, e, f
        QCOMPARE(helped.reverseHelped, std::size_t(2));
        QCOMPARE(helped.reverseNeutral, std::size_t(0));
        QCOMPARE(helped.reverseHarmed, std::size_t(1));
        QCOMPARE(helped.reverseMissing, std::size_t(1));
        QCOMPARE(rows[1].comparisons, std::size_t(0));
        const ReverseDirectionRow& harmed = rows[2];
        QCOMPARE(harmed.comparisons, std::size_t(2)); // b, g
        QCOMPARE(harmed.reverseHelped, std::size_t(1));
        QCOMPARE(harmed.reverseMissing, std::size_t(1));
    }
};

QTEST_APPLESS_MAIN(TransferTest)
#include "tst_transfer.moc"
