// calibration statistics: A/A false rates, A/B detection, the smallest safe δ and the A/B ladder, on synthetic
// samples.
#include "core/analysis/calibration.h"
#include "core/analysis/calibration_ladder.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

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

/// One A/B session with speedups a and b over eager and B/A, each with its CI.
SlowdownSession session(int problem, PairedTiming a, PairedTiming b, PairedTiming bOverA) {
    return {problem, "triton", 1, a, b, bOverA};
}

/// Four hand-made sessions: p01 crosses R@2 (2.2x to 1.9x, neither CI near 2), p02 crosses R@2 within A's CI (a tie),
/// p03 moves between rungs without crossing one, p04 crosses R@1 with a B/A interval that contains 1 (a tie).
std::vector<SlowdownSession> handMadeSessions() {
    return {session(1, {2.2, 2.15, 2.25, 100}, {1.9, 1.85, 1.95, 100}, {0.864, 0.85, 0.88, 100}),
            session(2, {2.05, 1.98, 2.1, 100}, {1.9, 1.85, 1.95, 100}, {0.93, 0.91, 0.95, 100}),
            session(3, {1.5, 1.45, 1.55, 100}, {1.36, 1.3, 1.4, 100}, {0.91, 0.9, 0.92, 100}),
            session(4, {1.02, 1.01, 1.03, 100}, {0.98, 0.97, 0.99, 100}, {0.96, 0.9, 1.02, 100})};
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(),
                       [&text](const std::string& line) { return line.find(text) != std::string::npos; });
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

    void theAbLadderCountsACrossingMovesSOnlyThereAndTiesTheCrossingsWithinNoise() {
        const SlowdownLadder ladder = slowdownLadder(handMadeSessions());
        const Contrast& c = ladder.contrast;
        QVERIFY(c.base && c.skill && c.lift);
        QCOMPARE(c.resolved, std::size_t(4));
        QCOMPARE(c.pairedCells, std::size_t(4));
        // A: every control passes and reaches 0.5 and 1; p01 and p02 reach 2. B keeps A's rung where it tied.
        const std::vector<double> a{1, 1, 1, 0.5, 0};
        const std::vector<double> b{1, 1, 1, 0.25, 0};
        for (std::size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(c.base->rates[i], a[i]);
            QCOMPARE(c.skill->rates[i], b[i]);
        }
        QCOMPARE(c.base->score, 70.0);
        QCOMPARE(c.skill->score, 65.0);
        QCOMPARE(c.lift->score, -5.0);
        QCOMPARE(c.ties, (std::vector<std::size_t>{0, 0, 1, 1, 0})); // p04 at R@1, p02 at R@2
        // Only p01 crossed a threshold; none the wrong way. Three of four B/A intervals lie below 1.
        QCOMPARE(ladder.crossed, std::size_t(1));
        QVERIFY(ladder.controls[0].crossed && !ladder.controls[1].crossed && !ladder.controls[2].crossed &&
                !ladder.controls[3].crossed);
        QCOMPARE(ladder.wrongWay, std::size_t(0));
        QCOMPARE(ladder.changeExcludesZero, std::size_t(3));
        QVERIFY(!ladder.controls[3].changeExcludesZero);
        QCOMPARE(ladder.changeWrongWay, std::size_t(0));
        QCOMPARE(ladder.controls[1].ladder.ties, (std::vector<bool>{false, false, false, true, false}));
        // A slower copy never lifts: the lift's interval lies at or below 0 and contains the lift.
        QVERIFY(c.intervals.liftScore);
        QVERIFY(c.intervals.liftScore->low <= -5.0 && c.intervals.liftScore->high <= 0.0);
        const std::vector<double> thresholds = AnalysisSettings{}.thresholds;
        QCOMPARE(mkb::ladderRung(ladder.controls[0].ladder.baseAttains, thresholds), std::string("R@2"));
        QCOMPARE(mkb::ladderRung(ladder.controls[0].ladder.skillAttains, thresholds), std::string("R@1"));
        QCOMPARE(mkb::ladderRung(ladder.controls[1].ladder.skillAttains, thresholds), std::string("R@2")); // tied
    }

    void aSlowedCopyMeasuredFasterIsNamedTheWrongWay() {
        const SlowdownLadder ladder =
            slowdownLadder({session(5, {0.95, 0.94, 0.96, 100}, {1.05, 1.04, 1.06, 100}, {1.1, 1.08, 1.12, 100})});
        QCOMPARE(ladder.crossed, std::size_t(1));
        QCOMPARE(ladder.wrongWay, std::size_t(1));
        QCOMPARE(ladder.changeExcludesZero, std::size_t(0));
        QCOMPARE(ladder.changeWrongWay, std::size_t(1));
        QCOMPARE(ladder.contrast.lift->score, 20.0);   // one rung of five gained
        QVERIFY(!ladder.contrast.intervals.liftScore); // one control: no interval
    }

    void theAbLadderLinesGiveRatesTiesCrossingsAndEveryControl() {
        const std::vector<std::string> lines =
            mkb::slowdownLadderLines(slowdownLadder(handMadeSessions()), 0.10, AnalysisSettings{}.thresholds);
        QVERIFY(contains(lines, "copy slowed by 0.100"));
        QVERIFY(contains(lines, "  A         1.000   1.000   1.000   0.500   0.000    70.0 ["));
        QVERIFY(contains(lines, "  B - A     0.000   0.000   0.000  -0.250   0.000    -5.0 ["));
        QVERIFY(contains(lines, "R@0 0 R@0.5 0 R@1 1 R@2 1 R@4 0"));
        QVERIFY(contains(lines, "crossed a threshold (counted, not a tie): 1 of 4 controls; the wrong way (B attains a "
                                "t that A does not): 0"));
        QVERIFY(contains(lines, "excludes 0): 3 of 4 controls (75.0%); above 1 beyond noise: 0"));
        QVERIFY(contains(lines, "  p02 triton r1  A 2.050x [1.980, 2.100] R@2  B 1.900x [1.850, 1.950] R@2  B/A 0.9300 "
                                "[0.910, 0.950] excludes 1 tie at R@2"));
        QVERIFY(mkb::slowdownLadderLines(slowdownLadder({}), 0.10, AnalysisSettings{}.thresholds).empty());
    }

    void theAbSessionsAreReadFromTheDetailAndOldDetailsGiveNone() {
        mkb::CalibrationRecord record;
        record.detailJson = R"([{"problem": 3, "dsl": "cuda", "replicate": 2, "rounds": 150,
            "paired_ab": [0.91, 0.9, 0.92], "paired_speedup_a": [1.5, 1.45, 1.55], "paired_speedup_b": [1.36, 1.3, 1.4]},
            {"problem": 4, "paired_ab": [0.91, 0.9, 0.92], "paired_aa": [1.0, 0.99, 1.01]},
            {"problem": 5, "paired_ab": [0.91, 0.9, 0.92], "paired_speedup_a": [1.5, -1, 1.55],
             "paired_speedup_b": [1.36, 1.3, 1.4]}])";
        const std::vector<SlowdownSession> sessions = mkb::slowdownSessions(record);
        QCOMPARE(sessions.size(), std::size_t(1)); // p04 was stored before the ladder; p05's interval is not positive
        QCOMPARE(sessions[0].problem, 3);
        QCOMPARE(sessions[0].dsl, std::string("cuda"));
        QCOMPARE(sessions[0].replicate, 2);
        QCOMPARE(sessions[0].a.ratio, 1.5);
        QCOMPARE(sessions[0].b.ciHigh, 1.4);
        QCOMPARE(sessions[0].bOverA.n, 150);
        record.detailJson = "[]";
        QVERIFY(mkb::slowdownSessions(record).empty());
        record.detailJson = std::string(100000, '[');
        QVERIFY(mkb::slowdownSessions(record).empty()); // too deep for the bounded reader: no ladder, no crash
    }
};

QTEST_GUILESS_MAIN(CalibrationTest)
#include "tst_calibration.moc"
