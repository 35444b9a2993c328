// Calibration statistics: A/A false rates, A/B detection rates and the smallest safe δ, per timing method; the A/B
// controls' ladder.
#include "core/analysis/calibration.h"

#include "core/analysis/transfer.h"

#include <cmath>
#include <functional>
#include <memory>

namespace mkb::analysis {
namespace {

std::shared_ptr<const Attempt> attemptOf(const Grading& grading, const char* arm) {
    auto attempt = std::make_shared<Attempt>();
    attempt->graded = true;
    attempt->passed = grading.passed;
    attempt->correct = grading.passed;
    attempt->imported = true;
    attempt->compliant = true;
    attempt->speedup = grading.passed ? grading.speedup : 0;
    attempt->arm = arm;
    return attempt;
}

/// A resolved comparison of two passing kernels whose paired ratio skill/base is `ratio`.
Comparison pairedComparison(const PairedTiming& ratio) {
    Comparison comparison;
    const Grading passing{true, 1.0};
    comparison.source = attemptOf(passing, "solo_a");
    comparison.base = attemptOf(passing, "solo_b");
    comparison.skill = attemptOf(passing, "a2b_skill");
    auto retiming = std::make_shared<CellRetiming>();
    retiming->skillOverBase = ratio;
    retiming->rounds = ratio.n;
    comparison.retiming = retiming;
    return comparison;
}

/// An A/B control as a resolved cell whose base is A and whose skill is B, both passed and timed in one re-timing.
Comparison slowdownComparison(const SlowdownSession& session) {
    Comparison comparison;
    comparison.source = attemptOf({true, session.a.ratio}, "solo_a");
    comparison.base = attemptOf({true, session.a.ratio}, "solo_b");
    comparison.skill = attemptOf({true, session.b.ratio}, "a2b_skill");
    auto retiming = std::make_shared<CellRetiming>();
    retiming->skillOverBase = session.bOverA;
    retiming->baseOverEager = session.a;
    retiming->skillOverEager = session.b;
    retiming->rounds = session.bOverA.n;
    comparison.retiming = retiming;
    return comparison;
}

Comparison unpairedComparison(const UnpairedControl& control) {
    Comparison comparison;
    comparison.source = attemptOf(control.base, "solo_a");
    comparison.base = attemptOf(control.base, "solo_b");
    comparison.skill = attemptOf(control.other, "a2b_skill");
    return comparison;
}

template <typename Control>
CalibrationMethodResult calibrate(const char* method, const std::vector<Control>& aa, const std::vector<Control>& ab,
                                  const AnalysisSettings& settings,
                                  const std::function<Outcome(const Control&, const AnalysisSettings&)>& judge) {
    CalibrationMethodResult result;
    result.method = method;
    result.delta = settings.delta;
    result.aaComparisons = static_cast<int>(aa.size());
    result.abComparisons = static_cast<int>(ab.size());
    for (const Control& control : aa) {
        const Outcome outcome = judge(control, settings);
        result.aaHelped += outcome == Outcome::Helped ? 1 : 0;
        result.aaHarmed += outcome == Outcome::Harmed ? 1 : 0;
    }
    for (const Control& control : ab) {
        result.abDetected += judge(control, settings) == Outcome::Harmed ? 1 : 0;
    }
    if (!aa.empty()) {
        for (double delta : calibrationDeltaGrid()) {
            AnalysisSettings at = settings;
            at.delta = delta;
            int falseOutcomes = 0;
            for (const Control& control : aa) {
                falseOutcomes += judge(control, at) != Outcome::Neutral ? 1 : 0;
            }
            if (falseOutcomes <= kCalibrationFalseRateLimit * static_cast<double>(aa.size())) {
                result.smallestDelta = delta;
                break;
            }
        }
    }
    return result;
}

} // namespace

std::vector<double> calibrationDeltaGrid() {
    std::vector<double> grid;
    for (int step = 0; step <= 500; ++step) {
        grid.push_back(step / 1000.0);
    }
    return grid;
}

Outcome pairedControlOutcome(const PairedTiming& ratio, const AnalysisSettings& settings) {
    AnalysisSettings paired = settings;
    paired.timing = TimingRule::Paired;
    return judgeOutcome(pairedComparison(ratio), paired).outcome;
}

Outcome unpairedControlOutcome(const UnpairedControl& control, const AnalysisSettings& settings) {
    AnalysisSettings unpaired = settings;
    unpaired.timing = TimingRule::Unpaired;
    return judgeOutcome(unpairedComparison(control), unpaired).outcome;
}

CalibrationMethodResult calibratePaired(const std::vector<PairedTiming>& aa, const std::vector<PairedTiming>& ab,
                                        const AnalysisSettings& settings) {
    return calibrate<PairedTiming>("paired", aa, ab, settings, pairedControlOutcome);
}

CalibrationMethodResult calibrateUnpaired(const std::vector<UnpairedControl>& aa,
                                          const std::vector<UnpairedControl>& ab, const AnalysisSettings& settings) {
    return calibrate<UnpairedControl>("unpaired", aa, ab, settings, unpairedControlOutcome);
}

SlowdownLadder slowdownLadder(const std::vector<SlowdownSession>& sessions, const AnalysisSettings& settings) {
    AnalysisSettings paired = settings;
    paired.timing = TimingRule::Paired;
    std::vector<Comparison> cells;
    for (const SlowdownSession& session : sessions) {
        cells.push_back(slowdownComparison(session));
    }
    SlowdownLadder result;
    result.contrast = contrast(cells, paired);
    for (std::size_t i = 0; i < sessions.size(); ++i) {
        SlowdownControl control{sessions[i], cellLadder(cells[i], paired)};
        for (std::size_t t = 0; t < control.ladder.baseAttains.size(); ++t) {
            const bool a = control.ladder.baseAttains[t];
            const bool b = control.ladder.skillAttains[t];
            control.crossed = control.crossed || a != b;
            control.wrongWay = control.wrongWay || (b && !a);
        }
        control.changeExcludesZero = sessions[i].bOverA.ciHigh < 1;
        control.changeWrongWay = sessions[i].bOverA.ciLow > 1;
        result.crossed += control.crossed ? 1 : 0;
        result.wrongWay += control.wrongWay ? 1 : 0;
        result.changeExcludesZero += control.changeExcludesZero ? 1 : 0;
        result.changeWrongWay += control.changeWrongWay ? 1 : 0;
        result.controls.push_back(std::move(control));
    }
    return result;
}

std::optional<BetweenGradingSpread> betweenGradingSpread(const std::vector<UnpairedControl>& aa) {
    std::vector<double> gaps;
    for (const UnpairedControl& control : aa) {
        if (control.base.passed && control.other.passed && control.base.speedup > 0 && control.other.speedup > 0) {
            gaps.push_back(std::fabs(std::log(control.other.speedup / control.base.speedup)));
        }
    }
    const std::optional<double> spread = quantile(gaps, 0.95);
    if (!spread) {
        return std::nullopt;
    }
    return BetweenGradingSpread{gaps.size(), *spread};
}

Interval acrossGradings(double low, double high, const BetweenGradingSpread& spread) {
    const double widen = std::exp(spread.logSpread / 2);
    return Interval{low / widen, high * widen};
}

} // namespace mkb::analysis
