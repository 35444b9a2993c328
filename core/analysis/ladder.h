// The MetaKernelBench speedup ladder (DESIGN §8): R@t, S, base vs skill contrast with lift, coverage and the splits.
#pragma once

#include "core/analysis/attempt.h"
#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// R@t for each threshold of the settings (same order) and S = 100 × mean over t of R@t.
struct LadderRates {
    std::vector<double> thresholds;
    std::vector<double> rates;
    double score = 0;
};

/// Base against skill on a set of resolved comparisons; base/skill/lift are nullopt when there are none.
/// lift.rates[i] = skill.rates[i] − base.rates[i]; lift.score = skill.score − base.score.
struct Contrast {
    std::size_t resolved = 0;
    std::optional<LadderRates> base;
    std::optional<LadderRates> skill;
    std::optional<LadderRates> lift;
    // Borderline attempts per threshold (same order as the settings' thresholds): passed, and the speedup's CI
    // contains t, so R@t could go either way. withCi counts the base and skill-outcome attempts that carry a CI.
    std::vector<std::size_t> baseBorderline;
    std::vector<std::size_t> skillBorderline;
    std::size_t withCi = 0;
};

/// Shares of resolved comparisons whose source passed and whose source handed over a skill.
struct Coverage {
    std::size_t resolved = 0;
    std::optional<double> sourcePassed;
    std::optional<double> sourceWroteSkill;
};

/// Everything MetaKernelBench reports for one group of comparisons.
struct GroupMetrics {
    std::size_t comparisons = 0; // cell-replicates in the group, resolved or not
    Coverage coverage;
    Contrast all;
    Contrast withSkill;    // only comparisons whose source handed over a skill
    Contrast sourcePassed; // by_source_verdict: passed
    Contrast sourceFailed; // by_source_verdict: failed
};

/// The attempt passed with speedup >= threshold (ties attain it).
bool attains(const Attempt& attempt, double threshold);

/// The attempt passed and its speedup CI contains threshold (CI_low <= t <= CI_high): its R@t is within noise.
bool straddles(const Attempt& attempt, double threshold);

/// R@t and S over attempts; nullopt when there are none.
std::optional<LadderRates> ladder(const std::vector<const Attempt*>& attempts, const AnalysisSettings& settings);

/// Base vs skill (a skipped skill counts as its base) over the resolved comparisons; unresolved ones are ignored.
Contrast contrast(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings = {});

Coverage coverage(const std::vector<Comparison>& comparisons);

GroupMetrics groupMetrics(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings = {});
GroupMetrics groupMetrics(const ComparisonView& comparisons, const AnalysisSettings& settings = {});

/// groupMetrics per key, e.g. by direction or family; keys are sorted.
std::map<std::string, GroupMetrics> groupMetricsBy(const std::vector<Comparison>& comparisons,
                                                   const std::function<std::string(const Comparison&)>& keyOf,
                                                   const AnalysisSettings& settings = {});
std::map<std::string, GroupMetrics> groupMetricsByDirection(const std::vector<Comparison>& comparisons,
                                                            const AnalysisSettings& settings = {});
std::map<std::string, GroupMetrics> groupMetricsByFamily(const std::vector<Comparison>& comparisons,
                                                         const AnalysisSettings& settings = {});

/// "R@0", "R@0.5", "R@1", ...: the label MetaKernelBench uses for a threshold.
std::string ladderLabel(double threshold);

} // namespace mkb::analysis
