// The numbers each chart draws, as pure functions over comparisons: every value comes from core/analysis/.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"
#include "core/analysis/transfer.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mkb::gui {

/// One family's S on base and skill and their lift (skill − base), over the family's resolved comparisons, with the
/// lift's 95% bootstrap interval (analysis::Contrast::intervals; none for a single comparison).
struct FamilyLiftBar {
    std::string family;
    std::size_t resolved = 0;
    double baseScore = 0;
    double skillScore = 0;
    double lift = 0;
    std::optional<analysis::Interval> liftCi;
    bool withinNoise = false; // the interval contains 0: drawn as neutral outcomes are
};
/// Families with at least one resolved comparison, sorted by name (analysis::groupMetricsByFamily).
std::vector<FamilyLiftBar> familyLiftBars(const std::vector<analysis::Comparison>& comparisons,
                                          const analysis::AnalysisSettings& settings = {});

/// One family's regression rate: H (harmed share) in percent, with its counts.
struct FamilyHarmBar {
    std::string family;
    std::size_t resolved = 0;
    std::size_t harmed = 0;
    double harmedPercent = 0;
};
/// Families with at least one resolved comparison, sorted by name (analysis::outcomeCounts per family).
std::vector<FamilyHarmBar> familyHarmBars(const std::vector<analysis::Comparison>& comparisons,
                                          const analysis::AnalysisSettings& settings = {});

/// One resolved comparison as a point of the paired-ratio chart.
struct PairedRatioPoint {
    std::string model;
    std::string direction;
    int replicate = 1;
    double ratio = 1; // analysis::pairedRatio
    analysis::Outcome outcome = analysis::Outcome::Neutral;
    std::optional<double> ciLow; // the paired re-timing's 95% CI of the ratio, when a paired ratio decided
    std::optional<double> ciHigh;
    bool withinNoise = false; // analysis::OutcomeJudgement::withinNoise
};
/// A problem's column of points; problems are sorted by the geometric mean of their ratios (ΔGM + 1), ascending,
/// ties by problem number.
struct PairedRatioColumn {
    int problemNumber = 0;
    std::string problemSlug;
    std::string family;
    double geometricMeanRatio = 1;                     // analysis::deltaGeometricMean + 1
    std::optional<analysis::Interval> geometricMeanCi; // its 95% bootstrap CI (deltaGeometricMeanCi + 1), 2+ points
    std::vector<PairedRatioPoint> points;
};
std::vector<PairedRatioColumn> pairedRatioColumns(const std::vector<analysis::Comparison>& comparisons,
                                                  const analysis::AnalysisSettings& settings = {});

/// Outcome counts of one model's resolved comparisons in one source standing.
struct StandingOutcomeBar {
    std::string model;
    analysis::SourceStanding standing = analysis::SourceStanding::Same;
    analysis::OutcomeCounts outcomes;
};
/// For each model (sorted), three bars: above, same, below (analysis::outcomesBySourceStanding per model).
std::vector<StandingOutcomeBar> standingOutcomeBars(const std::vector<analysis::Comparison>& comparisons,
                                                    const analysis::AnalysisSettings& settings = {});

/// R@t of base and skill at one threshold, in percent.
struct LadderStep {
    double threshold = 0;
    std::string label; // analysis::ladderLabel
    double basePercent = 0;
    double skillPercent = 0;
};
/// One step per threshold of the settings (analysis::contrast); empty without resolved comparisons.
std::vector<LadderStep> ladderSteps(const std::vector<analysis::Comparison>& comparisons,
                                    const analysis::AnalysisSettings& settings = {});

/// A resolved comparison whose source and skill outcome both passed: their speedups over eager.
struct SpeedupPoint {
    std::string model;
    std::string direction;
    int problemNumber = 0;
    std::string problemSlug;
    std::string family;
    int replicate = 1;
    double sourceSpeedup = 0;
    double targetSpeedup = 0; // of the skill outcome (the base when the skill arm was skipped)
    analysis::Outcome outcome = analysis::Outcome::Neutral;
};
struct SpeedupScatter {
    std::vector<SpeedupPoint> points;
    std::size_t leftOut = 0; // resolved comparisons where a side failed (no speedup to place on a log axis)
};
SpeedupScatter speedupScatter(const std::vector<analysis::Comparison>& comparisons,
                              const analysis::AnalysisSettings& settings = {});

/// The problem label the charts and the browser share: the slug, or "problem N" when the slug is unknown.
std::string problemLabel(int problemNumber, const std::string& problemSlug);

} // namespace mkb::gui
