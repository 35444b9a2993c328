// The parameters every metric of DESIGN §8 reads, with the documented defaults.
#pragma once

#include <vector>

namespace mkb::analysis {

/// Which timing decides the outcome of two passing kernels (DESIGN §8). Paired: a cell's paired re-timing (ratio and
/// 95% CI) where one is attached, the unpaired rule elsewhere. Unpaired: MetaKernelBench's rule on the two separate
/// gradings' speedups and tiers, ignoring re-timings.
enum class TimingRule { Paired, Unpaired };

inline const char* toString(TimingRule rule) {
    return rule == TimingRule::Paired ? "paired" : "unpaired";
}

struct AnalysisSettings {
    /// Ladder thresholds t of R@t (speedup over eager); an attempt attains t when it passed with speedup >= t.
    std::vector<double> thresholds{0.0, 0.5, 1.0, 2.0, 4.0};
    /// Width of the neutral band for same-tier pairs: helped at ratio >= 1+delta, harmed at ratio <= 1/(1+delta).
    double delta = 0.05;
    /// Effective speedup clips at 1 (a deployment falls back to eager); off = the raw speedup of a passed attempt.
    bool clipEffectiveSpeedup = true;
    /// The p values of fast_p: share of graded attempts that are correct with speedup > p.
    std::vector<double> fastPThresholds{0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
    /// A fixing edit whose changed-line share is at or above this is a structural rewrite, below it a local fix.
    double structuralRewriteShare = 0.5;
    /// The outcome rule for two passing kernels; paired is the default and falls back to unpaired per comparison.
    TimingRule timing = TimingRule::Paired;
};

/// Relative tolerance for threshold comparisons, so that a speedup or ratio that equals a threshold on paper
/// (2.1 / 2.0 against 1 + 0.05) still attains it after floating-point rounding.
inline constexpr double kThresholdTolerance = 1e-9;

/// value >= threshold, counting values within the relative tolerance below the threshold as equal.
inline bool reaches(double value, double threshold) {
    const double scale = threshold < 0 ? -threshold : threshold;
    return value >= threshold - kThresholdTolerance * (scale > 1 ? scale : 1);
}

/// value <= threshold, counting values within the relative tolerance above the threshold as equal.
inline bool staysWithin(double value, double threshold) {
    const double scale = threshold < 0 ? -threshold : threshold;
    return value <= threshold + kThresholdTolerance * (scale > 1 ? scale : 1);
}

} // namespace mkb::analysis
