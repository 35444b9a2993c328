// The report's direction tables (--metrics directions): the source × target matrix of analysis::directionMatrix as
// text cells, its long form with every number as a number, and the one text a matrix cell shows everywhere.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/direction_matrix.h"
#include "core/report/report_model.h"

#include <string>
#include <vector>

namespace mkb::report {

/// What a matrix cell shows in the report and in the workbench's heat maps: "+5.0 [-2.0, +12.0]; helped 2, harmed 1
/// of 4" (S lift with its 95% interval, then the helped and harmed counts of the resolved comparisons), with
/// "within noise" after the interval when it contains 0 and "no CI, 1 cell" in its place for a single cell;
/// "unresolved (N cell-replicates)", "no data", or "—" on the diagonal.
std::string directionCellText(const analysis::DirectionCell& cell);

/// The line under a matrix that says how to read it (the workbench shows it under its heat maps too).
inline constexpr const char* kDirectionMatrixLine =
    "Rows: the source DSL whose skill was handed over; columns: the target DSL it was handed to. Each cell: S lift "
    "(skill − base) with its 95% interval, then how many of its resolved comparisons the skill helped and harmed. "
    "— is the diagonal; no data: the selection holds no comparison of that direction.";

/// One matrix of the report: a group of the split (key "all" without one) and its comparisons.
struct DirectionGroup {
    std::string key;
    const std::vector<analysis::Comparison>* comparisons = nullptr;
};

/// The tables "direction-matrix" (rows source, columns target, one text cell per pair) and "directions" (one row per
/// ordered pair with counts, shares, S and ΔGM with their intervals as numbers). Every group gets one matrix over the
/// DSLs of all groups, so the matrices line up; groupColumn names the split's column, empty for a single matrix;
/// scope ends the titles ("overall", "by model").
std::vector<ReportTable> directionTables(const std::vector<DirectionGroup>& groups, const std::string& groupColumn,
                                         const std::string& scope, const ReportOptions& options);

} // namespace mkb::report
