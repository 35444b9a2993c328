// The report's paper-findings table (--metrics kbx-paper): analysis::kbxPaperFindings per group, each finding with
// its n, basis and 95% interval beside KernelBench-X's published number.
#pragma once

#include "core/analysis/attempt_set.h"
#include "core/io/report_model.h"

#include <string>
#include <utility>
#include <vector>

namespace mkb::report {

/// One group of the split (key "all" without one) and its attempts.
struct FindingsGroup {
    std::string key;
    const analysis::AttemptSet* attempts = nullptr;
};

/// The table "kbx-paper": one row per group and finding; groupColumn names the split's column ("group" overall).
ReportTable kbxPaperTable(const std::vector<FindingsGroup>& groups, const std::string& groupColumn);

} // namespace mkb::report
