// The direction matrix (DESIGN §8): every ordered (source DSL, target DSL) pair of a selection with its n, helped /
// neutral / harmed, S lift and ΔGM with their intervals, laid out source × target with the gaps made explicit.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/ladder.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"
#include "core/analysis/transfer.h"

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// What a matrix cell holds: the diagonal (a DSL against itself, never a direction), a pair the selection has no
/// comparison of, a pair whose comparisons are all still unresolved, or a pair with resolved comparisons.
enum class DirectionCellState { Diagonal, NoData, Unresolved, Measured };

const char* toString(DirectionCellState state);

/// One ordered pair. Its numbers are those a group of the report's direction split gets: ladder is
/// groupMetrics(...).all (S base, skill and lift with their 95% bootstrap intervals, ties and fallbacks of the paired
/// ladder) and transfer is transferSummary (helped, neutral, harmed with their shares, ΔGM with its interval), both
/// under the settings' timing rule.
struct DirectionCell {
    std::string sourceDsl;
    std::string targetDsl;
    DirectionCellState state = DirectionCellState::NoData;
    std::size_t comparisons = 0; // cell-replicates of the direction, resolved or not
    Contrast ladder;
    TransferSummary transfer;

    /// "<source>2<target>", the direction's name everywhere else (comparisons, arms, filters).
    std::string direction() const { return sourceDsl + "2" + targetDsl; }
    std::size_t resolved() const { return ladder.resolved; }
    /// S lift (skill − base); nullopt without resolved comparisons.
    std::optional<double> lift() const;
    /// Its 95% interval; nullopt below two resolved comparisons.
    std::optional<Interval> liftCi() const { return ladder.intervals.liftScore; }
    /// The lift's interval contains 0: the lift is within noise (drawn as a neutral outcome is).
    bool liftWithinNoise() const;
};

/// The matrix: rows are source DSLs, columns target DSLs, both in dsls' order; cells is row-major (dsls.size()²).
struct DirectionMatrix {
    TimingRule timing = TimingRule::Paired;
    std::vector<std::string> dsls;
    std::vector<DirectionCell> cells;

    std::size_t size() const { return dsls.size(); }
    const DirectionCell& at(std::size_t source, std::size_t target) const { return cells[source * size() + target]; }
    /// The cell of that direction's DSLs, nullptr when either is not in dsls.
    const DirectionCell* find(const std::string& sourceDsl, const std::string& targetDsl) const;
    /// Off-diagonal cells in row-major order: the ordered pairs, n·(n−1) of them.
    std::vector<const DirectionCell*> pairs() const;
};

/// The DSLs that comparisons name as source or target, sorted by id: the order of the DSL registry, which
/// `mkb problems list`, the problems view and the runs form list them in.
std::vector<std::string> directionMatrixDsls(const ComparisonView& comparisons);

/// The matrix over comparisons (resolved or not; unresolved ones only count in DirectionCell::comparisons). dsls
/// gives the rows and columns, e.g. to lay several matrices out alike; empty takes directionMatrixDsls. A comparison
/// naming a DSL outside dsls is left out. interval: whether the cells' bootstrap intervals (ΔGM's and the ladder's S
/// and lift) are computed, or left unset for a caller that computes them later (directionLadderIntervals).
DirectionMatrix directionMatrix(const ComparisonView& comparisons, const AnalysisSettings& settings = {},
                                std::vector<std::string> dsls = {},
                                SummaryInterval interval = SummaryInterval::Computed);
DirectionMatrix directionMatrix(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings = {},
                                std::vector<std::string> dsls = {},
                                SummaryInterval interval = SummaryInterval::Computed);

/// The ladder intervals of directionMatrix(comparisons, settings, dsls)'s cells, row-major (ladderIntervals over each
/// ordered pair's comparisons; empty for the diagonal and a pair without data): what a matrix computed with
/// SummaryInterval::Deferred lacks for its lifts. A set cancel flag stops it between two cells (the list is then
/// short).
std::vector<LadderIntervals> directionLadderIntervals(const ComparisonView& comparisons,
                                                      const AnalysisSettings& settings = {},
                                                      std::vector<std::string> dsls = {},
                                                      const std::atomic<bool>* cancel = nullptr);

} // namespace mkb::analysis
