// The ladder's rows and per-threshold counts, shared by the ladder table (report_model.cpp) and the calibration's
// A/B ladder (report_calibration.cpp).
#pragma once

#include "core/analysis/ladder.h"
#include "core/report/report_model.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mkb::report {

/// One bound of an interval as a cell (a percent or a number with one decimal), or a null cell without one.
ReportCell intervalBound(const std::optional<analysis::Interval>& interval, bool high, bool percent);

/// Rows base, skill and lift with S and its interval, then the lift's interval bounds at every threshold and for S.
void appendLadderRows(ReportTable& table, const std::string& key, const analysis::Contrast& contrast,
                      std::size_t thresholdCount);

/// "R@0 3, R@0.5 1, ...": a count per threshold.
std::string perThreshold(const std::vector<std::size_t>& counts, const std::vector<double>& thresholds);

} // namespace mkb::report
