// The overview's boundary filter: which implementation boundaries the comparisons were graded under, the comparisons
// of one boundary, and how many are not comparable (arms graded under different boundaries, never paired).
#pragma once

#include "core/analysis/comparison.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mkb::gui {

/// The boundaries of the comparisons whose arms share one, each once: mkb, strict and legacy first, in that order,
/// then any other name, sorted. A not comparable comparison, or one whose arms hold no verdict yet, adds none.
std::vector<std::string> boundariesPresent(const std::vector<analysis::Comparison>& comparisons);

/// The comparisons whose arms share `boundary` (analysis::Comparison::boundary()); a not comparable one belongs to
/// no boundary, as in the report.
std::vector<analysis::Comparison> comparisonsUnderBoundary(const std::vector<analysis::Comparison>& comparisons,
                                                           const std::string& boundary);

/// The comparisons whose arms all hold a verdict, graded under different boundaries (Comparison::notComparable).
std::size_t notComparableCount(const std::vector<analysis::Comparison>& comparisons);

/// The overview's line on them, in the report's words; "" when there are none.
std::string notComparableLine(std::size_t count);

} // namespace mkb::gui
