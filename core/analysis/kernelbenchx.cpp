// Call/execution/outlier accuracy, quantization pass, fast_p, speedup summaries and roofline distributions.
#include "core/analysis/kernelbenchx.h"

namespace mkb::analysis {

AccuracySummary accuracySummary(const AttemptSet& attempts) {
    AccuracySummary result;
    std::size_t called = 0;
    std::size_t executed = 0;
    std::size_t outliersCorrect = 0;
    std::size_t quantPassed = 0;
    for (const Attempt& attempt : attempts) {
        if (!attempt.graded) {
            continue;
        }
        ++result.attempts;
        called += attempt.imported && attempt.compliant ? 1 : 0;
        executed += attempt.correct ? 1 : 0;
        if (attempt.outliersCorrect) {
            ++result.outlierJudged;
            outliersCorrect += *attempt.outliersCorrect ? 1 : 0;
        }
        if (attempt.quantPassed) {
            ++result.quantJudged;
            quantPassed += *attempt.quantPassed ? 1 : 0;
        }
    }
    result.callAccuracy = share(called, result.attempts);
    result.executionAccuracy = share(executed, result.attempts);
    result.outlierAccuracy = share(outliersCorrect, result.outlierJudged);
    result.quantPassRate = share(quantPassed, result.quantJudged);
    return result;
}

std::vector<FastP> fastP(const AttemptSet& attempts, const AnalysisSettings& settings) {
    std::vector<FastP> result;
    for (double p : settings.fastPThresholds) {
        std::size_t graded = 0;
        std::size_t fast = 0;
        for (const Attempt& attempt : attempts) {
            if (!attempt.graded) {
                continue;
            }
            ++graded;
            fast += attempt.correct && attempt.speedup > p ? 1 : 0;
        }
        result.push_back(FastP{p, share(fast, graded)});
    }
    return result;
}

static std::vector<double> correctTimedSpeedups(const AttemptSet& attempts) {
    std::vector<double> speedups;
    for (const Attempt& attempt : attempts) {
        if (attempt.graded && attempt.correct && attempt.speedup > 0) {
            speedups.push_back(attempt.speedup);
        }
    }
    return speedups;
}

SpeedupSummary speedupSummary(const AttemptSet& attempts) {
    const std::vector<double> speedups = correctTimedSpeedups(attempts);
    SpeedupSummary result;
    result.correctTimed = speedups.size();
    result.geometricMeanSpeedup = geometricMean(speedups);
    std::size_t slower = 0;
    for (double speedup : speedups) {
        slower += speedup < 1.0 ? 1 : 0;
    }
    result.slowerThanEagerShare = share(slower, speedups.size());
    return result;
}

static Distribution distributionOfField(const AttemptSet& attempts, std::optional<double> Attempt::*field) {
    std::vector<double> values;
    for (const Attempt& attempt : attempts) {
        if (attempt.graded && attempt.*field) {
            values.push_back(*(attempt.*field));
        }
    }
    return distributionOf(std::move(values));
}

Distribution iouDistribution(const AttemptSet& attempts) {
    return distributionOfField(attempts, &Attempt::iou);
}

Distribution mfuDistribution(const AttemptSet& attempts) {
    return distributionOfField(attempts, &Attempt::mfu);
}

KernelBenchXSummary kernelBenchXSummary(const AttemptSet& attempts, const AnalysisSettings& settings) {
    return KernelBenchXSummary{accuracySummary(attempts), fastP(attempts, settings), speedupSummary(attempts),
                               iouDistribution(attempts), mfuDistribution(attempts)};
}

} // namespace mkb::analysis
