// The overview's boundary filter, computed from core/analysis comparisons only (no Qt).
#include "gui/overview/overview_boundary.h"

#include "core/vocabulary/boundary.h"

#include <algorithm>
#include <set>

namespace mkb::gui {

std::vector<std::string> boundariesPresent(const std::vector<analysis::Comparison>& comparisons) {
    std::set<std::string> found;
    for (const analysis::Comparison& comparison : comparisons) {
        if (std::string boundary = comparison.boundary(); !boundary.empty()) {
            found.insert(std::move(boundary));
        }
    }
    std::vector<std::string> ordered;
    for (std::string_view known : {kBoundaryMkb, kBoundaryStrict, kBoundaryLegacy}) {
        if (found.erase(std::string(known))) {
            ordered.emplace_back(known);
        }
    }
    ordered.insert(ordered.end(), found.begin(), found.end()); // std::set: already sorted
    return ordered;
}

std::vector<analysis::Comparison> comparisonsUnderBoundary(const std::vector<analysis::Comparison>& comparisons,
                                                           const std::string& boundary) {
    std::vector<analysis::Comparison> kept;
    for (const analysis::Comparison& comparison : comparisons) {
        if (!comparison.notComparable() && comparison.boundary() == boundary) {
            kept.push_back(comparison);
        }
    }
    return kept;
}

std::size_t notComparableCount(const std::vector<analysis::Comparison>& comparisons) {
    return std::size_t(
        std::count_if(comparisons.begin(), comparisons.end(),
                      [](const analysis::Comparison& comparison) { return comparison.notComparable(); }));
}

std::string notComparableLine(std::size_t count) {
    if (count == 0) {
        return {};
    }
    return std::to_string(count) +
           " cell-replicates not comparable (arms graded under different boundaries): left out of every count.";
}

} // namespace mkb::gui
