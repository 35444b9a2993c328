// The overview's numbers, computed with the project's data (gui/project/project_data) and shown by the overview:
// one row per (model, direction) with T, ΔGM, H, S (base, skill, lift), R@0 and coverage, the family bars and the
// lines on the timing rule, the ladder rule and the calibration, every number from core/analysis.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/direction_matrix.h"
#include "core/analysis/ladder.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"
#include "core/report/report_model.h"

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace mkb::gui {

/// The numbers of one overview row; nullopt where the group has nothing to measure.
struct OverviewRow {
    std::string model;
    std::string direction;
    std::size_t comparisons = 0;
    std::size_t resolved = 0;
    std::optional<double> transferRate; // T
    std::optional<double> deltaGeometricMean;
    std::optional<analysis::Interval> deltaGeometricMeanCi; // its 95% bootstrap CI; nullopt below two resolved
    // The row's intervals (ΔGM's, S base's, S skill's and the lift's) are still being computed
    // (OverviewIntervals::Deferred): until then an interval that is nullopt is unknown, not absent.
    bool intervalsPending = false;
    std::optional<double> harmRate; // H
    std::optional<double> baseScore;
    std::optional<double> skillScore;
    std::optional<double> lift;
    // The 95% bootstrap intervals of S base, S skill and the lift (analysis::Contrast::intervals).
    std::optional<analysis::Interval> baseScoreCi;
    std::optional<analysis::Interval> skillScoreCi;
    std::optional<analysis::Interval> liftCi;
    // How the ladder was ranked (analysis::Contrast): cells ranked on a re-timing, fallen back, ties per threshold.
    std::size_t ladderPaired = 0;
    std::size_t ladderFellBack = 0;
    std::vector<std::size_t> ladderTies;
    std::optional<double> basePassRate; // R@0 of the base
    std::optional<double> skillPassRate;
    std::optional<double> sourcePassed;
    std::optional<double> skillCoverage;
    // How T and H were timed (analysis::OutcomeCounts): judged by a paired ratio, fallen back to the unpaired rule,
    // paired neutrals within noise, and resolved comparisons with a re-timing attached.
    std::size_t judgedPaired = 0;
    std::size_t fellBack = 0;
    std::size_t withinNoise = 0;
    std::size_t withRetiming = 0;
};

/// The overview's line on the timing rule its T and H used (settings.timing) and how many comparisons it judged on
/// paired re-timings, summed over rows: the report's line (report::timingLine), word for word.
std::string timingRuleLine(const std::vector<OverviewRow>& rows, const analysis::AnalysisSettings& settings);

/// The overview's line on the rule that ranked its S and lift, summed over rows: the report's ladder line
/// (report::ladderRuleLine), word for word.
std::string ladderRuleLine(const std::vector<OverviewRow>& rows, const analysis::AnalysisSettings& settings);

/// The overview's one line on the calibration of the devices the data came from (report::calibrationSummary):
/// per device (its id and name) the date and, per timing method, the A/A false outcomes and A/B detections as
/// "k of N (rate)" and the smallest safe δ, "stale" when made with another grader than the data's, or "no
/// calibration of <device>"; empty when there is nothing to say.
std::string calibrationLine(const report::CalibrationSummary& summary);

/// Whether overviewRows and familyBars compute their bootstrap intervals (ΔGM, S and lift), or leave them pending for
/// overviewIntervals: a bootstrap of 1,000 resamples per group is most of the overview's cost, so a window shows the
/// numbers first and fills the intervals in.
enum class OverviewIntervals { Computed, Deferred };

/// One row per (model, direction) present in comparisons, sorted by model then direction.
std::vector<OverviewRow> overviewRows(const std::vector<analysis::Comparison>& comparisons,
                                      const analysis::AnalysisSettings& settings,
                                      OverviewIntervals intervals = OverviewIntervals::Computed);

/// Per-family lift (S skill − S base) and harm rate H, for the overview's bar charts.
struct FamilyBars {
    std::vector<std::string> families;
    std::vector<std::optional<double>> lift;
    std::vector<std::optional<analysis::Interval>> liftCi; // its 95% bootstrap interval; none for a single cell
    std::vector<std::optional<double>> harmRate;
    bool intervalsPending = false; // liftCi is still being computed (OverviewIntervals::Deferred)
};
FamilyBars familyBars(const std::vector<analysis::Comparison>& comparisons, const analysis::AnalysisSettings& settings,
                      OverviewIntervals intervals = OverviewIntervals::Computed);

/// The overview's direction matrix: analysis::directionMatrix over comparisons (its DSLs from them) with its ΔGM
/// intervals left out (the heat map shows the lift and its interval); Deferred leaves the lift intervals pending too.
analysis::DirectionMatrix overviewMatrix(const std::vector<analysis::Comparison>& comparisons,
                                         const analysis::AnalysisSettings& settings,
                                         OverviewIntervals intervals = OverviewIntervals::Computed);

/// What the overview's numbers left pending (OverviewIntervals::Deferred), in their order: per row of overviewRows its
/// ΔGM interval (analysis::deltaGeometricMeanCi) and its S base, S skill and lift intervals
/// (analysis::ladderIntervals); per family of familyBars its lift interval; per cell of overviewMatrix (row-major) its
/// ladder's intervals. Each equals what the Computed path gives.
struct OverviewIntervalSet {
    struct Row {
        std::optional<analysis::Interval> deltaGeometricMean;
        analysis::LadderIntervals ladder;
    };
    std::vector<Row> rows;
    std::vector<std::optional<analysis::Interval>> familyLift;
    std::vector<analysis::LadderIntervals> matrixCells;
};

/// The overview's pending intervals over comparisons for settings. A set cancel flag stops it between two groups (the
/// set is then incomplete, and fillIntervals must not take it).
OverviewIntervalSet overviewIntervals(const std::vector<analysis::Comparison>& comparisons,
                                      const analysis::AnalysisSettings& settings,
                                      const std::atomic<bool>* cancel = nullptr);

/// Fills the pending intervals of rows, bars and matrix (computed Deferred over the same comparisons and settings as
/// intervals) and marks them no longer pending.
void fillIntervals(const OverviewIntervalSet& intervals, std::vector<OverviewRow>& rows, FamilyBars& bars,
                   analysis::DirectionMatrix& matrix);

} // namespace mkb::gui
