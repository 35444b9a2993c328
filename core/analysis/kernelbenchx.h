// KernelBench-X and KernelBench metrics over graded attempts (DESIGN §8): accuracies, fast_p, speedup summaries, and
// IOU/MFU distributions.
#pragma once

#include "core/analysis/attempt_set.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"

#include <optional>
#include <vector>

namespace mkb::analysis {

/// Every rate is over graded attempts (skipped and ungraded ones are left out); outlier accuracy and quantization pass
/// rate only over the attempts the grader judged on outliers / by quantization metrics.
struct AccuracySummary {
    std::size_t attempts = 0;
    std::optional<double> callAccuracy;      // imported and compliant
    std::optional<double> executionAccuracy; // correct
    std::size_t outlierJudged = 0;
    std::optional<double> outlierAccuracy; // outliers correct, among outlierJudged
    std::size_t quantJudged = 0;
    std::optional<double> quantPassRate; // quantization thresholds met, among quantJudged
};

struct FastP {
    double p = 0;
    std::optional<double> share; // correct and speedup > p, over graded attempts
};

/// Speedups of correct attempts that were timed (speedup > 0).
struct SpeedupSummary {
    std::size_t correctTimed = 0;
    std::optional<double> geometricMeanSpeedup;
    std::optional<double> slowerThanEagerShare; // speedup < 1
};

struct KernelBenchXSummary {
    AccuracySummary accuracy;
    std::vector<FastP> fastP;
    SpeedupSummary speedups;
    Distribution iou;
    Distribution mfu;
};

AccuracySummary accuracySummary(const AttemptSet& attempts);
/// One entry per p of settings.fastPThresholds, in order; speedup strictly above p as in KernelBench.
std::vector<FastP> fastP(const AttemptSet& attempts, const AnalysisSettings& settings = {});
SpeedupSummary speedupSummary(const AttemptSet& attempts);
/// Distributions of the roofline utilisations over graded attempts that report them.
Distribution iouDistribution(const AttemptSet& attempts);
Distribution mfuDistribution(const AttemptSet& attempts);
KernelBenchXSummary kernelBenchXSummary(const AttemptSet& attempts, const AnalysisSettings& settings = {});

} // namespace mkb::analysis
