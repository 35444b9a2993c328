// The report's paper-findings table (--metrics kbx-paper): analysis::kbxPaperFindings per group, each finding with
// its n, basis and 95% interval beside KernelBench-X's published number.
#pragma once

#include "core/analysis/attempt_set.h"
#include "core/report/report_model.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <functional>
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

/// The same findings under our grader: for each boundary the store's regradings were made under, the selected live
/// trials' regraded rounds with our verdicts in place of their own (each submission's newest regrading; a round not
/// regraded under that boundary is left out, and the table's note counts them), as the table "kbx-paper-<boundary>".
/// Nothing when the store holds no regrading. categoryOf names a trial's KernelBench-X category.
Result<std::vector<ReportTable>>
kbxPaperRegradedTables(Store& store, const ReportOptions& options,
                       const std::function<std::string(const TrialRecord&)>& categoryOf);

} // namespace mkb::report
