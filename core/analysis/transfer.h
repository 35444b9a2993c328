// Paired transfer analysis (DESIGN §8): tiers, effective speedup, paired ratios, ΔGM, helped/neutral/harmed,
// source standing and the reverse-direction table.
#pragma once

#include "core/analysis/attempt.h"
#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

enum class Outcome { Helped, Neutral, Harmed };
enum class SourceStanding { Above, Same, Below };

const char* toString(Outcome outcome);
const char* toString(SourceStanding standing);

/// Number of ladder thresholds the attempt attains: 0 = failed … 5 = passed with speedup >= 4 (default ladder).
int tier(const Attempt& attempt, const AnalysisSettings& settings = {});

/// Clipped: max(speedup, 1) if passed, else 1. Unclipped: speedup if passed (and positive), else 1.
double effectiveSpeedup(const Attempt& attempt, const AnalysisSettings& settings = {});

/// r = e(skill outcome) / e(base) of a resolved comparison. Under the paired rule, when both kernels passed and a
/// paired ratio skill/base is attached, r is that ratio (clipping at 1 read from the re-timing's speedups over eager,
/// or the verdicts' when it has none: if both are at least 1 the ratio stands, else max(S_skill, 1) / max(S_base, 1)).
double pairedRatio(const Comparison& comparison, const AnalysisSettings& settings = {});

/// The paired rule on two passing kernels (DESIGN §8): helped iff ratio >= 1+δ (ties count) and CI_low > 1; harmed
/// iff ratio <= 1/(1+δ) and CI_high < 1; otherwise neutral.
Outcome pairedOutcome(const PairedTiming& paired, double delta);

/// How one comparison's outcome was decided.
struct OutcomeJudgement {
    Outcome outcome = Outcome::Neutral;
    bool paired = false;               // a paired ratio decided (paired rule, both passed, a re-timing attached)
    bool withinNoise = false;          // paired, neutral, and the CI contains 1
    bool fellBack = false;             // paired rule, both passed, no re-timing attached: the unpaired rule decided
    bool decisive = false;             // one of base and skill outcome passed and the other did not
    std::optional<PairedTiming> ratio; // the paired ratio skill/base that decided, when paired
};

/// Helped or harmed beyond noise: decided by a pass/fail difference, or by a paired ratio whose CI excludes 1. An
/// outcome of the unpaired rule on two passing kernels is never significant (separate gradings cannot resolve it).
bool isSignificant(const OutcomeJudgement& judgement);

/// The outcome of a resolved comparison under settings.timing. Unpaired (MetaKernelBench's rule): tiers differ →
/// helped if the skill outcome's tier is higher, harmed if lower; same tier and both passed → helped if
/// speedup(skill)/speedup(base) >= 1+δ, harmed if <= 1/(1+δ) (unclipped speedups, ties count); otherwise neutral.
/// Paired: one passed and the other failed → helped or harmed by which passed; both passed with a re-timing →
/// pairedOutcome of its skill/base ratio, whatever the tiers; both passed without one → the unpaired rule (fellBack);
/// both failed → neutral. A skipped skill arm is its base, hence neutral under both rules.
OutcomeJudgement judgeOutcome(const Comparison& comparison, const AnalysisSettings& settings = {});

/// judgeOutcome(comparison, settings).outcome. Only call on a resolved comparison.
Outcome transferOutcome(const Comparison& comparison, const AnalysisSettings& settings = {});

/// tier(source) against tier(base) of a resolved comparison. Under the paired rule, when both passed and a paired
/// ratio source/base is attached, that ratio decides as pairedOutcome does (helped = above, harmed = below, neutral =
/// same); a pass/fail difference is decisive either way.
SourceStanding sourceStanding(const Comparison& comparison, const AnalysisSettings& settings = {});

/// Counts of outcomes and their shares; shares are nullopt when total is 0. T = helpedShare, H = harmedShare.
struct OutcomeCounts {
    std::size_t total = 0;
    std::size_t helped = 0;
    std::size_t neutral = 0;
    std::size_t harmed = 0;
    std::optional<double> helpedShare;
    std::optional<double> neutralShare;
    std::optional<double> harmedShare;
    // How the outcomes were decided (judgeOutcome): by a paired ratio, by the unpaired rule for want of a re-timing
    // under the paired rule, and the paired neutrals whose CI contains 1. withRetiming counts attached re-timings
    // whatever the rule.
    std::size_t paired = 0;
    std::size_t fellBack = 0;
    std::size_t withinNoise = 0;
    std::size_t withRetiming = 0;
    // Comparisons whose arms all hold a verdict, graded under different implementation boundaries: never paired,
    // so in no count above (Comparison::notComparable).
    std::size_t notComparable = 0;
};

/// ΔGM, T and H over the resolved comparisons of a group.
struct TransferSummary {
    OutcomeCounts outcomes;
    std::optional<double> deltaGeometricMean; // geomean of paired ratios − 1; nullopt without resolved comparisons
    std::optional<Interval> deltaGeometricMeanCi; // its 95% bootstrap CI (deltaGeometricMeanCi); nullopt below 2
};

OutcomeCounts outcomeCounts(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings = {});
OutcomeCounts outcomeCounts(const ComparisonView& comparisons, const AnalysisSettings& settings = {});
/// exp(mean log r) − 1 over the resolved comparisons.
std::optional<double> deltaGeometricMean(const std::vector<Comparison>& comparisons,
                                         const AnalysisSettings& settings = {});
std::optional<double> deltaGeometricMean(const ComparisonView& comparisons, const AnalysisSettings& settings = {});
/// The 95% CI of ΔGM, on ΔGM's scale (geomean − 1): a percentile bootstrap that resamples the resolved comparisons
/// (one paired ratio each, as deltaGeometricMean takes them) with replacement (geometricMeanBootstrapCi: seeded from
/// the ratios, so a report is reproducible). nullopt with fewer than two resolved comparisons: one cell says nothing
/// about how much cells vary, and a collapsed interval would read as certainty.
std::optional<Interval> deltaGeometricMeanCi(const std::vector<Comparison>& comparisons,
                                             const AnalysisSettings& settings = {});
std::optional<Interval> deltaGeometricMeanCi(const ComparisonView& comparisons, const AnalysisSettings& settings = {});
/// interval: whether ΔGM's bootstrap interval is computed, or left unset for a caller that computes it later with
/// deltaGeometricMeanCi (SummaryInterval).
TransferSummary transferSummary(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings = {},
                                SummaryInterval interval = SummaryInterval::Computed);
TransferSummary transferSummary(const ComparisonView& comparisons, const AnalysisSettings& settings = {},
                                SummaryInterval interval = SummaryInterval::Computed);

/// Outcome counts for the resolved comparisons in each source standing; always three rows: above, same, below.
struct StandingRow {
    SourceStanding standing = SourceStanding::Same;
    OutcomeCounts outcomes;
};
std::array<StandingRow, 3> outcomesBySourceStanding(const std::vector<Comparison>& comparisons,
                                                    const AnalysisSettings& settings = {});

/// For resolved comparisons with a given outcome in one direction, what happened in the opposite direction on the
/// same model, problem and replicate. missing counts reverse comparisons that are absent or unresolved.
struct ReverseDirectionRow {
    Outcome forward = Outcome::Helped;
    std::size_t comparisons = 0; // resolved forward comparisons with this outcome
    std::size_t reverseHelped = 0;
    std::size_t reverseNeutral = 0;
    std::size_t reverseHarmed = 0;
    std::size_t reverseMissing = 0;
};
/// Rows for helped, neutral and harmed forward outcomes, in that order (the helped row is the one DESIGN §8 names).
std::array<ReverseDirectionRow, 3> reverseDirectionTable(const std::vector<Comparison>& comparisons,
                                                         const AnalysisSettings& settings = {});

} // namespace mkb::analysis
