// calibration statistics: A/A false rates, A/B detection, the smallest safe δ, on synthetic samples.
#include "core/analysis/calibration.h"

#include <QTest>

#include <cmath>
#include <random>

using namespace mkb::analysis;

namespace {

/// A deterministic fake clock: every call of a kernel takes exactly `seconds`, so the per-round ratio of two calls is
/// their time ratio, every round; the median and any bootstrap CI of such rounds collapse onto that ratio.
struct FakeClock {
    double seconds;
};

PairedTiming pairedRounds(FakeClock a, FakeClock b, int rounds) {
    const double ratio = a.seconds / b.seconds;
    return {ratio, ratio, ratio, rounds};
}

/// A noisy paired re-timing: ratio true·(1+ε) with a CI of ±halfwidth.
PairedTiming noisyPaired(double trueRatio, double noise, double halfwidth, std::mt19937& random) {
    std::normal_distribution<double> epsilon(0, noise);
    const double ratio = trueRatio * (1 + epsilon(random));
    return {ratio, ratio * (1 - halfwidth), ratio * (1 + halfwidth), 200};
}

} // namespace

class CalibrationTest : public QObject {
    Q_OBJECT

private slots:
    void aaWithADeterministicFakeClockIsAllNeutralForBothMethods() {
        std::vector<PairedTiming> paired;
        std::vector<UnpairedControl> unpaired;
        for (int problem = 0; problem < 24; ++problem) {
            const FakeClock clock{1e-4 * (problem + 1)};
            paired.push_back(pairedRounds(clock, clock, 100));
            const double speedup = 0.5 + 0.25 * problem; // tiers from 1 to 5
            unpaired.push_back({{true, speedup}, {true, speedup}});
        }
        const auto p = calibratePaired(paired, {});
        QCOMPARE(p.aaComparisons, 24);
        QCOMPARE(p.aaHelped + p.aaHarmed, 0);
        QCOMPARE(p.falseRate(), 0.0);
        QCOMPARE(*p.smallestDelta, 0.0);
        const auto u = calibrateUnpaired(unpaired, {});
        QCOMPARE(u.aaHelped + u.aaHarmed, 0);
        QCOMPARE(*u.smallestDelta, 0.001); // at δ = 0 a tie (ratio exactly 1) counts as helped
    }

    void aTenPercentSlowdownOnAFakeClockIsDetectedByBothMethods() {
        std::vector<PairedTiming> ab;
        std::vector<UnpairedControl> unpairedAb;
        for (int problem = 0; problem < 12; ++problem) {
            const FakeClock a{1e-4 * (problem + 1)};
            const FakeClock slow{a.seconds * 1.10};
            ab.push_back(pairedRounds(a, slow, 100)); // time(a)/time(slow) = 1/1.1
            unpairedAb.push_back({{true, 2.0}, {true, 2.0 / 1.10}});
        }
        const auto p = calibratePaired({}, ab);
        QCOMPARE(p.abDetected, 12);
        QCOMPARE(p.detectionRate(), 1.0);
        QVERIFY(!p.smallestDelta); // no A/A controls: nothing to calibrate δ on
        QCOMPARE(calibrateUnpaired({}, unpairedAb).abDetected, 12);
    }

    void aSlowdownSmallerThanDeltaIsNotDetected() {
        const std::vector<PairedTiming> ab = {pairedRounds({1.0}, {1.03}, 100)};
        QCOMPARE(calibratePaired({}, ab).abDetected, 0); // 3% < δ = 5%
        AnalysisSettings tight;
        tight.delta = 0.02;
        QCOMPARE(calibratePaired({}, ab, tight).abDetected, 1);
    }

    void noisyUnpairedGradingsGiveFalseOutcomesThatPairedTimingsDoNot() {
        std::mt19937 random(7);
        std::lognormal_distribution<double> spread(0, 0.15); // separate gradings disagree by ~15%
        std::vector<PairedTiming> paired;
        std::vector<UnpairedControl> unpaired;
        for (int control = 0; control < 200; ++control) {
            paired.push_back(noisyPaired(1.0, 0.003, 0.01, random));
            unpaired.push_back({{true, 3.0 * spread(random)}, {true, 3.0 * spread(random)}});
        }
        const auto p = calibratePaired(paired, {});
        const auto u = calibrateUnpaired(unpaired, {});
        QCOMPARE(p.aaHelped + p.aaHarmed, 0);
        QVERIFY2(u.falseRate() > 0.3, std::to_string(u.falseRate()).c_str());
        // The smallest δ for the unpaired method is large (or none, when tier changes alone exceed 1%).
        QVERIFY(!u.smallestDelta || *u.smallestDelta > 0.2);
        QVERIFY(*p.smallestDelta <= 0.01);
    }

    void theSmallestDeltaKeepsTheFalseRateAtOrBelowOnePercent() {
        // 100 A/A controls: 99 exactly neutral, one at ratio 1.08 with a CI above 1: at most one false outcome is
        // allowed (1%), so δ = 0 already qualifies; two such controls need δ just above 0.08.
        std::vector<PairedTiming> aa(98, PairedTiming{1, 0.99, 1.01, 100});
        aa.push_back({1.08, 1.05, 1.11, 100});
        aa.push_back({1.0, 0.99, 1.01, 100});
        QCOMPARE(*calibratePaired(aa, {}).smallestDelta, 0.0);
        aa.back() = {1.08, 1.05, 1.11, 100};
        const auto result = calibratePaired(aa, {});
        QVERIFY(result.smallestDelta);
        QVERIFY2(*result.smallestDelta > 0.079 && *result.smallestDelta <= 0.081,
                 std::to_string(*result.smallestDelta).c_str());
        AnalysisSettings at;
        at.delta = *result.smallestDelta;
        QVERIFY(calibratePaired(aa, {}, at).falseRate() <= kCalibrationFalseRateLimit);
    }

    void aCiThatContainsOneIsNeutralWhateverTheRatio() {
        QCOMPARE(pairedControlOutcome({1.2, 0.95, 1.5, 100}), Outcome::Neutral);
        QCOMPARE(pairedControlOutcome({1.2, 1.01, 1.5, 100}), Outcome::Helped);
        QCOMPARE(pairedControlOutcome({0.8, 0.7, 0.99, 100}), Outcome::Harmed);
    }

    void anUnpairedTierChangeIsAFalseOutcomeAtEveryDelta() {
        // 1.9x against 2.1x crosses the 2x rung: the tiers differ, so δ cannot make it neutral.
        const UnpairedControl control{{true, 1.9}, {true, 2.1}};
        QCOMPARE(unpairedControlOutcome(control), Outcome::Helped);
        QVERIFY(!calibrateUnpaired({control}, {}).smallestDelta);
        // A pass/fail difference is decisive.
        QCOMPARE(unpairedControlOutcome({{true, 1.5}, {false, 0}}), Outcome::Harmed);
    }
};

QTEST_GUILESS_MAIN(CalibrationTest)
#include "tst_calibration.moc"
