// Calibration statistics: A/A false rates, A/B detection rates and the smallest safe δ, per timing method.
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
