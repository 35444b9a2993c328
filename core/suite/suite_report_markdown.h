// What the suite's markdown tables share: table cells, problem numbers as ranges, and the report's heading facts
// without the paths of the machine that made it (suite_report_table.cpp, suite_validation_table.cpp).
#pragma once

#include "core/suite/suite_check.h"

#include <string>
#include <vector>

namespace mkb {

/// `text` as one markdown table cell: '|' escaped, line breaks as spaces.
std::string markdownCell(const std::string& text);

/// Problem names by their numbers, runs joined ("22–49", "03, 07–09"); a name without a number as it is.
std::string numberRanges(const std::vector<std::string>& names);

/// `text` with paths under the suite root made relative to it, and the store's path said as "the store".
std::string withoutMachinePaths(std::string text, const SuiteCheckReport& report);

/// The command that made the report, without this machine's absolute paths.
std::string shownCommand(const SuiteCheckReport& report);

/// The heading's check-time line: the sum of the problems' recorded check times and the longest; "" when none has one.
std::string checkTimeLine(const SuiteCheckReport& report);

} // namespace mkb
