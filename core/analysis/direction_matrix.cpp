// The direction matrix: comparisons grouped by ordered DSL pair, each group measured by groupMetrics and
// transferSummary, and the pairs laid out source × target.
#include "core/analysis/direction_matrix.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

namespace mkb::analysis {

const char* toString(DirectionCellState state) {
    switch (state) {
    case DirectionCellState::Diagonal:
        return "diagonal";
    case DirectionCellState::NoData:
        return "no data";
    case DirectionCellState::Unresolved:
        return "unresolved";
    case DirectionCellState::Measured:
        return "measured";
    }
    return "unknown";
}

std::optional<double> DirectionCell::lift() const {
    return ladder.lift ? std::optional<double>(ladder.lift->score) : std::nullopt;
}

bool DirectionCell::liftWithinNoise() const {
    const std::optional<Interval> ci = liftCi();
    return lift() && ci && ci->low <= 0 && ci->high >= 0;
}

const DirectionCell* DirectionMatrix::find(const std::string& sourceDsl, const std::string& targetDsl) const {
    const auto source = std::find(dsls.begin(), dsls.end(), sourceDsl);
    const auto target = std::find(dsls.begin(), dsls.end(), targetDsl);
    if (source == dsls.end() || target == dsls.end()) {
        return nullptr;
    }
    return &at(std::size_t(source - dsls.begin()), std::size_t(target - dsls.begin()));
}

std::vector<const DirectionCell*> DirectionMatrix::pairs() const {
    std::vector<const DirectionCell*> result;
    for (const DirectionCell& cell : cells) {
        if (cell.state != DirectionCellState::Diagonal) {
            result.push_back(&cell);
        }
    }
    return result;
}

std::vector<std::string> directionMatrixDsls(const ComparisonView& comparisons) {
    std::set<std::string> dsls;
    for (const Comparison* comparison : comparisons) {
        dsls.insert(comparison->sourceDsl);
        dsls.insert(comparison->targetDsl);
    }
    return {dsls.begin(), dsls.end()};
}

namespace {

/// The comparisons of each ordered (source, target) pair, as views into comparisons.
using Pairs = std::map<std::pair<std::string_view, std::string_view>, ComparisonView>;

Pairs pairsOf(const ComparisonView& comparisons) {
    Pairs byPair;
    for (const Comparison* comparison : comparisons) {
        byPair[{comparison->sourceDsl, comparison->targetDsl}].push_back(comparison);
    }
    return byPair;
}

} // namespace

DirectionMatrix directionMatrix(const ComparisonView& comparisons, const AnalysisSettings& settings,
                                std::vector<std::string> dsls, SummaryInterval interval) {
    DirectionMatrix matrix;
    matrix.timing = settings.timing;
    matrix.dsls = dsls.empty() ? directionMatrixDsls(comparisons) : std::move(dsls);
    const Pairs byPair = pairsOf(comparisons);
    matrix.cells.reserve(matrix.size() * matrix.size());
    for (const std::string& source : matrix.dsls) {
        for (const std::string& target : matrix.dsls) {
            DirectionCell& cell = matrix.cells.emplace_back();
            cell.sourceDsl = source;
            cell.targetDsl = target;
            cell.ladder.timing = settings.timing;
            if (source == target) {
                cell.state = DirectionCellState::Diagonal;
                continue;
            }
            const auto found = byPair.find({source, target});
            if (found == byPair.end()) {
                cell.state = DirectionCellState::NoData;
                continue;
            }
            const ComparisonView& group = found->second;
            cell.comparisons = group.size();
            cell.ladder = groupMetrics(group, settings, interval).all;
            cell.transfer = transferSummary(group, settings, interval);
            cell.state = cell.ladder.resolved > 0 ? DirectionCellState::Measured : DirectionCellState::Unresolved;
        }
    }
    return matrix;
}

std::vector<LadderIntervals> directionLadderIntervals(const ComparisonView& comparisons,
                                                      const AnalysisSettings& settings, std::vector<std::string> dsls,
                                                      const std::atomic<bool>* cancel) {
    if (dsls.empty()) {
        dsls = directionMatrixDsls(comparisons);
    }
    const Pairs byPair = pairsOf(comparisons);
    std::vector<LadderIntervals> intervals;
    intervals.reserve(dsls.size() * dsls.size());
    for (const std::string& source : dsls) {
        for (const std::string& target : dsls) {
            if (cancel != nullptr && cancel->load()) {
                return intervals;
            }
            const auto found = source == target ? byPair.end() : byPair.find({source, target});
            intervals.push_back(found == byPair.end() ? LadderIntervals{} : ladderIntervals(found->second, settings));
        }
    }
    return intervals;
}

DirectionMatrix directionMatrix(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings,
                                std::vector<std::string> dsls, SummaryInterval interval) {
    return directionMatrix(viewOf(comparisons), settings, std::move(dsls), interval);
}

} // namespace mkb::analysis
