// Golden tests of the outcome rule with paired re-timings (DESIGN §8): every branch of the paired rule, its ties and
// CI bounds at exactly 1, the fallback to the unpaired rule, ΔGM and standing on paired ratios, and attachRetimings.
#include "analysis_fixtures.h"

#include "core/analysis/ladder.h"
#include "core/analysis/transfer.h"

#include <QtTest>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

PairedTiming timing(double ratio, double low, double high) {
    return PairedTiming{ratio, low, high, 200};
}

/// The comparison with a re-timing whose skill/base pair is the given one (and, when given, source/base).
Comparison retimed(Comparison comparison, std::optional<PairedTiming> skillOverBase,
                   std::optional<PairedTiming> sourceOverBase = std::nullopt) {
    auto retiming = std::make_shared<CellRetiming>();
    retiming->recordId = 1;
    retiming->skillOverBase = skillOverBase;
    retiming->sourceOverBase = sourceOverBase;
    comparison.retiming = std::move(retiming);
    return comparison;
}

AnalysisSettings unpaired() {
    AnalysisSettings settings;
    settings.timing = TimingRule::Unpaired;
    return settings;
}

mkb::RetimedPair pair(const std::string& a, const std::string& b, double ratio, double low, double high) {
    mkb::RetimedPair result;
    result.a = a;
    result.b = b;
    result.ratio = ratio;
    result.ciLow = low;
    result.ciHigh = high;
    result.n = 150;
    return result;
}

/// A live, successful record of cell (m, problem 1, replicate 1, triton2cuda) naming the given trial ids.
mkb::RetimingRecord record(std::int64_t id, std::optional<std::int64_t> source, std::optional<std::int64_t> base,
                           std::optional<std::int64_t> skill, double ratio = 1.2) {
    mkb::RetimingRecord result;
    result.id = id;
    result.model = "m";
    result.suite = "mkb";
    result.problemNumber = 1;
    result.replicate = 1;
    result.sourceDsl = "triton";
    result.targetDsl = "cuda";
    result.sourceTrialId = source;
    result.baseTrialId = base;
    result.skillTrialId = skill;
    result.result.ok = true;
    result.result.deviceName = "NVIDIA H200";
    result.result.rounds = 150;
    result.result.pairs = {pair("source", "base", 2.0, 1.9, 2.1),
                           pair("base", "skill", ratio, ratio - 0.01, ratio + 0.01),
                           pair("eager", "base", 1.5, 1.45, 1.55)};
    return result;
}

/// A resolved triton2cuda cell of problem 1 whose arms are trials 10 (source), 11 (base), 12 (skill).
Comparison cellWithTrials() {
    Comparison comparison = cell(passing(1), passing(1.2), passing(1.3));
    auto withId = [](const std::shared_ptr<const Attempt>& arm, std::int64_t id) {
        Attempt copy = *arm;
        copy.trialId = id;
        return std::make_shared<const Attempt>(copy);
    };
    comparison.source = withId(comparison.source, 10);
    comparison.base = withId(comparison.base, 11);
    comparison.skill = withId(comparison.skill, 12);
    return comparison;
}

} // namespace

class PairedOutcomeTest : public QObject {
    Q_OBJECT
private slots:
    // paired rule: helped needs r >= 1+δ (a tie counts) and CI_low > 1
    void pairedHelpedAtExactlyOnePlusDeltaWithCiAboveOne() {
        QVERIFY(pairedOutcome(timing(1.05, 1.01, 1.09), 0.05) == Outcome::Helped);
        QVERIFY(pairedOutcome(timing(1.30, 1.20, 1.40), 0.05) == Outcome::Helped);
        QVERIFY(pairedOutcome(timing(1.049, 1.01, 1.09), 0.05) == Outcome::Neutral); // just inside the band
    }

    // paired rule: CI_low exactly 1 is not > 1, so a large ratio stays neutral, and within noise
    void pairedCiLowExactlyOneIsNeutralWithinNoise() {
        const PairedTiming paired = timing(1.10, 1.0, 1.2);
        QVERIFY(pairedOutcome(paired, 0.05) == Outcome::Neutral);
        QVERIFY(paired.withinNoise());
        const OutcomeJudgement judgement = judgeOutcome(retimed(cell(passing(1), passing(2), passing(2.2)), paired));
        QVERIFY(judgement.outcome == Outcome::Neutral);
        QVERIFY(judgement.paired && judgement.withinNoise && !judgement.fellBack);
    }

    // paired rule: harmed needs r <= 1/(1+δ) (a tie counts) and CI_high < 1
    void pairedHarmedAtExactlyInverseBandWithCiBelowOne() {
        QVERIFY(pairedOutcome(timing(1 / 1.05, 0.9, 0.99), 0.05) == Outcome::Harmed);
        QVERIFY(pairedOutcome(timing(0.96, 0.9, 0.99), 0.05) == Outcome::Neutral); // 0.96 > 1/1.05
    }

    // paired rule: CI_high exactly 1 is not < 1, so the regression is neutral, within noise
    void pairedCiHighExactlyOneIsNeutralWithinNoise() {
        QVERIFY(pairedOutcome(timing(0.90, 0.8, 1.0), 0.05) == Outcome::Neutral);
        QVERIFY(timing(0.90, 0.8, 1.0).withinNoise());
    }

    // paired rule: a ratio of exactly 1 (a tie between identical kernels) is neutral within noise
    void pairedTieOfIdenticalKernelsIsWithinNoise() {
        const OutcomeJudgement judgement =
            judgeOutcome(retimed(cell(passing(1), passing(2), passing(2)), timing(1.0, 0.99, 1.01)));
        QVERIFY(judgement.outcome == Outcome::Neutral && judgement.withinNoise);
    }

    // paired rule: a small but certain change (CI excludes 1, r inside the band) is neutral, not within noise
    void pairedSmallCertainChangeIsNeutralButNotNoise() {
        const OutcomeJudgement judgement =
            judgeOutcome(retimed(cell(passing(1), passing(2), passing(2.04)), timing(1.02, 1.01, 1.03)));
        QVERIFY(judgement.outcome == Outcome::Neutral);
        QVERIFY(judgement.paired && !judgement.withinNoise);
    }

    // paired rule: a tier difference between two passing kernels is judged by r, not by the tiers
    void tierDifferenceBetweenPassingKernelsIsJudgedByTheRatio() {
        // base 0.8 (tier 2), skill 1.2 (tier 3): the unpaired rule says helped by tier
        const Comparison comparison = retimed(cell(passing(1), passing(0.8), passing(1.2)), timing(1.0, 0.98, 1.02));
        QVERIFY(transferOutcome(comparison, unpaired()) == Outcome::Helped);
        QVERIFY(transferOutcome(comparison) == Outcome::Neutral);
        // and the other way: same tier 3 (1.1 and 1.12), a certain 20% gain is helped
        const Comparison gain = retimed(cell(passing(1), passing(1.1), passing(1.12)), timing(1.2, 1.15, 1.25));
        QVERIFY(transferOutcome(gain, unpaired()) == Outcome::Neutral);
        QVERIFY(transferOutcome(gain) == Outcome::Helped);
    }

    // paired rule: a pass/fail difference is decisive whatever the re-timing says
    void passFailDifferenceIsDecisive() {
        const Comparison helped = retimed(cell(passing(1), failing(), passing(0.5)), timing(0.5, 0.4, 0.6));
        QVERIFY(transferOutcome(helped) == Outcome::Helped);
        const Comparison harmed = retimed(cell(passing(1), passing(3.0), failing()), timing(2.0, 1.9, 2.1));
        QVERIFY(transferOutcome(harmed) == Outcome::Harmed);
        QVERIFY(!judgeOutcome(harmed).paired && !judgeOutcome(harmed).fellBack);
        QVERIFY(transferOutcome(cell(passing(1), failing(), failing())) == Outcome::Neutral);
    }

    // paired rule: without a re-timing two passing kernels fall back to the unpaired rule, and that is counted
    void missingPairedDataFallsBackAndIsCounted() {
        const std::vector<Comparison> comparisons{
            cell(passing(1), passing(0.8), passing(1.2)),                                   // fell back: helped (tiers)
            cell(passing(1), passing(2.0), passing(2.1)),                                   // fell back: helped (1+δ)
            retimed(cell(passing(1), passing(2.0), passing(2.1)), timing(1.0, 0.97, 1.03)), // paired: within noise
            cell(passing(1), failing(), passing(2.0)), // decisive: no timing needed
        };
        QVERIFY(judgeOutcome(comparisons[0]).fellBack);
        const OutcomeCounts counts = outcomeCounts(comparisons);
        QCOMPARE(counts.total, std::size_t(4));
        QCOMPARE(counts.helped, std::size_t(3));
        QCOMPARE(counts.neutral, std::size_t(1));
        QCOMPARE(counts.paired, std::size_t(1));
        QCOMPARE(counts.fellBack, std::size_t(2));
        QCOMPARE(counts.withinNoise, std::size_t(1));
        QCOMPARE(counts.withRetiming, std::size_t(1));
        // The unpaired rule ignores the re-timing: the third cell is helped by its 1+δ tie, nothing falls back.
        const OutcomeCounts plain = outcomeCounts(comparisons, unpaired());
        QCOMPARE(plain.helped, std::size_t(4));
        QCOMPARE(plain.paired + plain.fellBack + plain.withinNoise, std::size_t(0));
        QCOMPARE(plain.withRetiming, std::size_t(1));
    }

    // significant: a pass/fail difference or a paired ratio beyond noise; an unpaired verdict on two passes never is
    void significantOnlyForDecisiveOrPairedOutcomes() {
        QVERIFY(isSignificant(judgeOutcome(cell(passing(1), passing(1.0), failing()))));
        QVERIFY(isSignificant(judgeOutcome(cell(passing(1), passing(1.0), failing()), unpaired())));
        QVERIFY(isSignificant(
            judgeOutcome(retimed(cell(passing(1), passing(2.0), passing(1.0)), timing(0.8, 0.75, 0.85)))));
        QVERIFY(!isSignificant(judgeOutcome(cell(passing(1), passing(2.0), passing(1.0))))); // fell back: harmed
        QVERIFY(!isSignificant(judgeOutcome(cell(passing(1), passing(2.0), passing(1.0)), unpaired())));
        QVERIFY(
            !isSignificant(judgeOutcome(retimed(cell(passing(1), passing(2.0), passing(1.0)), timing(0.8, 0.6, 1.0)))));
    }

    // R@t borderline: a passed attempt whose speedup CI contains t (bounds included); no CI, no borderline
    void borderlineCountsAttemptsWhoseCiContainsTheThreshold() {
        Attempt near = passing(1.02);
        near.speedupCiLow = 0.97;
        near.speedupCiHigh = 1.08;
        Attempt atBound = passing(2.1);
        atBound.speedupCiLow = 2.0; // exactly t = 2: contains it
        atBound.speedupCiHigh = 2.2;
        QVERIFY(straddles(near, 1.0) && !straddles(near, 0.5) && !straddles(near, 2.0));
        QVERIFY(straddles(atBound, 2.0));
        QVERIFY(!straddles(passing(1.0), 1.0));
        Attempt failed = failing();
        failed.speedupCiLow = 0.9;
        failed.speedupCiHigh = 1.1;
        QVERIFY(!straddles(failed, 1.0));
        // base near (R@1 borderline), skill atBound (R@2 borderline), one cell without CIs
        const Contrast result =
            contrast({cell(passing(1), near, atBound), cell(passing(1), passing(1.5), passing(1.5))});
        QCOMPARE(result.withCi, std::size_t(2));
        QCOMPARE(result.baseBorderline, (std::vector<std::size_t>{0, 0, 1, 0, 0}));
        QCOMPARE(result.skillBorderline, (std::vector<std::size_t>{0, 0, 0, 1, 0}));
    }

    // a skipped skill counts as its base: neutral under both rules, even beside a re-timing, and never a fallback
    void skippedSkillCountsAsItsBase() {
        const Comparison comparison = retimed(cell(passing(1), passing(2.0), skippedSkill()), timing(1.5, 1.4, 1.6));
        const OutcomeJudgement judgement = judgeOutcome(comparison);
        QVERIFY(judgement.outcome == Outcome::Neutral);
        QVERIFY(!judgement.paired && !judgement.fellBack && !judgement.withinNoise);
        QCOMPARE(pairedRatio(comparison), 1.0);
        QVERIFY(transferOutcome(comparison, unpaired()) == Outcome::Neutral);
    }

    // ΔGM: the paired ratio replaces e(skill)/e(base) where it applies; unclipped it is the ratio itself
    void deltaGeometricMeanUsesPairedRatios() {
        // P1 both pass above eager, paired 1.1: r = 1.1 (the verdicts' 2.0 → 3.0 would give 1.5)
        // P2 no re-timing: r = 1.5 / 1.0 = 1.5
        // P3 base 0.5 below eager, skill 0.8, paired 1.6: clipped r = max(0.8,1)/max(0.5,1) = 1; unclipped 1.6
        const std::vector<Comparison> comparisons{
            retimed(cell(passing(1), passing(2.0), passing(3.0)), timing(1.1, 1.05, 1.15)),
            cell(passing(1), passing(1.0), passing(1.5)),
            retimed(cell(passing(1), passing(0.5), passing(0.8)), timing(1.6, 1.5, 1.7))};
        QCOMPARE(pairedRatio(comparisons[0]), 1.1);
        QCOMPARE(pairedRatio(comparisons[0], unpaired()), 1.5);
        QCOMPARE(pairedRatio(comparisons[2]), 1.0);
        // clipped: (1.1 · 1.5 · 1)^(1/3) − 1 = 0.18163161...
        MKB_NEAR_OPT(deltaGeometricMean(comparisons), std::cbrt(1.1 * 1.5) - 1);
        AnalysisSettings unclipped;
        unclipped.clipEffectiveSpeedup = false;
        MKB_NEAR_OPT(deltaGeometricMean(comparisons, unclipped), std::cbrt(1.1 * 1.5 * 1.6) - 1);
    }

    // standing: the paired source/base ratio decides between two passing solos, tiers otherwise
    void standingUsesThePairedSourceBaseRatio() {
        // source 1.2 (tier 3) vs base 0.9 (tier 2): above by tiers, the same by a ratio within noise
        const Comparison noise =
            retimed(cell(passing(1.2), passing(0.9), passing(1)), std::nullopt, timing(1.01, 0.97, 1.05));
        QVERIFY(sourceStanding(noise, unpaired()) == SourceStanding::Above);
        QVERIFY(sourceStanding(noise) == SourceStanding::Same);
        // same tier 3, certainly 30% faster: above; certainly slower: below
        QVERIFY(sourceStanding(retimed(cell(passing(1.3), passing(1.2), passing(1)), std::nullopt,
                                       timing(1.3, 1.2, 1.4))) == SourceStanding::Above);
        QVERIFY(sourceStanding(retimed(cell(passing(1.1), passing(1.2), passing(1)), std::nullopt,
                                       timing(0.8, 0.7, 0.9))) == SourceStanding::Below);
        // pass/fail stays decisive: a failed source is below whatever pair is attached
        QVERIFY(sourceStanding(retimed(cell(failing(), passing(1.2), passing(1)), std::nullopt,
                                       timing(1.3, 1.2, 1.4))) == SourceStanding::Below);
    }

    // attachRetimings: a record attaches when its cell and every trial id it names match the live trials
    void attachRetimingsMatchesCellAndTrialIds() {
        std::vector<Comparison> comparisons{cellWithTrials()};
        const RetimingAttachment attachment = attachRetimings(comparisons, {record(5, 10, 11, 12)});
        QCOMPARE(attachment.attached, std::size_t(1));
        QVERIFY(comparisons[0].retiming);
        const CellRetiming& retiming = *comparisons[0].retiming;
        QCOMPARE(retiming.recordId, std::int64_t(5));
        QCOMPARE(retiming.deviceName, std::string("NVIDIA H200"));
        QVERIFY(retiming.skillOverBase && retiming.skillOverBase->ratio == 1.2);
        // stored as (source, base) = base over source 2.0: source over base is its inverse, CI bounds swapped
        QVERIFY(retiming.sourceOverBase);
        QCOMPARE(retiming.sourceOverBase->ratio, 0.5);
        QCOMPARE(retiming.sourceOverBase->ciLow, 1 / 2.1);
        QCOMPARE(retiming.sourceOverBase->ciHigh, 1 / 1.9);
        QVERIFY(retiming.baseOverEager && !retiming.skillOverEager);
    }

    // attachRetimings: a record naming a trial that is no longer the cell's live trial is stale and not used
    void attachRetimingsIgnoresStaleRecords() {
        std::vector<Comparison> comparisons{cellWithTrials()};
        const RetimingAttachment attachment = attachRetimings(comparisons, {record(5, 10, 11, 9)});
        QCOMPARE(attachment.attached, std::size_t(0));
        QCOMPARE(attachment.stale, std::size_t(1));
        QVERIFY(!comparisons[0].retiming);
    }

    // attachRetimings: archived, failed and other cells' records are skipped; the newest live record wins
    void attachRetimingsTakesTheNewestLiveRecord() {
        std::vector<Comparison> comparisons{cellWithTrials()};
        mkb::RetimingRecord archived = record(9, 10, 11, 12, 2.0);
        archived.archived = true;
        mkb::RetimingRecord failed = record(8, 10, 11, 12, 2.0);
        failed.result.ok = false;
        mkb::RetimingRecord elsewhere = record(7, 10, 11, 12, 2.0);
        elsewhere.replicate = 2;
        const RetimingAttachment attachment = attachRetimings(
            comparisons, {record(6, 10, 11, 12, 1.3), record(4, 10, 11, 12, 1.1), archived, failed, elsewhere});
        QCOMPARE(attachment.attached, std::size_t(1));
        QCOMPARE(attachment.unmatched, std::size_t(1));
        QCOMPARE(comparisons[0].retiming->recordId, std::int64_t(6));
        QCOMPARE(comparisons[0].retiming->skillOverBase->ratio, 1.3);
    }

    // attachRetimings: a record that did not time the source (it failed) still attaches by its base and skill
    void attachRetimingsWithoutSourceStillAttaches() {
        std::vector<Comparison> comparisons{cellWithTrials()};
        QCOMPARE(attachRetimings(comparisons, {record(5, std::nullopt, 11, 12)}).attached, std::size_t(1));
        std::vector<Comparison> none{cellWithTrials()};
        QCOMPARE(attachRetimings(none, {record(5, std::nullopt, std::nullopt, std::nullopt)}).stale, std::size_t(1));
    }
};

QTEST_APPLESS_MAIN(PairedOutcomeTest)
#include "tst_paired_outcome.moc"
