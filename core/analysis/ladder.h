// The speedup ladder (DESIGN §8): R@t, S, base vs skill contrast with lift and its intervals, coverage and the splits.
#pragma once

#include "core/analysis/attempt.h"
#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"

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

/// 95% percentile-bootstrap intervals of a contrast's S and lift over its cells (meanBootstrapCis, resampling cells so
/// that each cell's base and skill stay together). Every interval is nullopt with fewer than two cells.
struct LadderIntervals {
    std::optional<Interval> baseScore;
    std::optional<Interval> skillScore;
    std::optional<Interval> liftScore;
    std::vector<std::optional<Interval>> liftRates; // per threshold, same order as the settings' thresholds
};

/// Base against skill on a set of resolved comparisons; base/skill/lift are nullopt when there are none.
/// lift.rates[i] = skill.rates[i] − base.rates[i]; lift.score = skill.score − base.score.
///
/// Under TimingRule::Paired a cell's base and skill speedups come from one measurement session, its paired re-timing
/// (baseOverEager, skillOverEager with their CIs); a failed arm stays failed and a skipped skill is its base. A cell
/// whose passing arms the re-timing did not time (or that has none) keeps its verdicts' speedups and is counted in
/// fellBack; it is ranked as under the unpaired rule, so a store without re-timings gives the same ladder under both.
/// In a cell ranked on its re-timing, a crossing (both passed, exactly one attains t) is a tie when either speedup's
/// CI contains t or the paired ratio's CI contains 1: the skill counts as its base at t, and the tie is counted.
/// Under TimingRule::Unpaired the ladder is MetaKernelBench's: the verdicts' speedups, no ties.
struct Contrast {
    TimingRule timing = TimingRule::Paired;
    std::size_t resolved = 0;
    std::optional<LadderRates> base;
    std::optional<LadderRates> skill;
    std::optional<LadderRates> lift;
    LadderIntervals intervals;
    // Borderline attempts per threshold (same order as the settings' thresholds): passed, and the speedup's CI
    // contains t, so R@t could go either way. withCi counts the base and skill-outcome attempts that carry a CI.
    // Under the paired rule the CIs are the re-timing's where its speedups were used.
    std::vector<std::size_t> baseBorderline;
    std::vector<std::size_t> skillBorderline;
    std::size_t withCi = 0;
    // Paired rule only: crossings counted as ties per threshold; cells ranked on their re-timing's speedups; cells
    // whose passing arms had no re-timing and fell back to their verdicts' speedups.
    std::vector<std::size_t> ties;
    std::size_t pairedCells = 0;
    std::size_t fellBack = 0;
};

/// Where one arm of a cell stands on the ladder: passed or not, the speedup it is ranked by and that speedup's CI.
struct LadderPosition {
    bool passed = false;
    double speedup = 0;
    std::optional<double> ciLow;
    std::optional<double> ciHigh;

    bool attains(double threshold) const { return passed && reaches(speedup, threshold); }
    bool straddles(double threshold) const {
        return passed && ciLow && ciHigh && *ciLow <= threshold && threshold <= *ciHigh;
    }
};

/// One resolved cell on the ladder under settings.timing, as contrast() ranks it: its arms' positions and, per
/// threshold (the settings' order), whether each attains it once the tie rule has applied (a tie: the skill counts as
/// its base) and whether the crossing there was a tie.
struct CellLadder {
    LadderPosition base;
    LadderPosition skill;  // the skill outcome: a skipped skill is its base
    bool paired = false;   // both speedups came from the cell's re-timing
    bool fellBack = false; // a passing arm had no speedup from a re-timing
    std::vector<bool> baseAttains;
    std::vector<bool> skillAttains;
    std::vector<bool> ties;
};
CellLadder cellLadder(const Comparison& comparison, const AnalysisSettings& settings = {});

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
    Contrast all;          // with its intervals (unless deferred); the sub-contrasts below leave them empty
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

/// interval: whether `all` gets its bootstrap intervals, or leaves them empty for a caller that computes them later
/// with ladderIntervals (SummaryInterval).
GroupMetrics groupMetrics(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings = {},
                          SummaryInterval interval = SummaryInterval::Computed);
GroupMetrics groupMetrics(const ComparisonView& comparisons, const AnalysisSettings& settings = {},
                          SummaryInterval interval = SummaryInterval::Computed);

/// The intervals of groupMetrics(comparisons, settings).all, computed alone (the same bootstrap over the same cells):
/// for a caller that deferred them.
LadderIntervals ladderIntervals(const ComparisonView& comparisons, const AnalysisSettings& settings = {});

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
