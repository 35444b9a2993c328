// The report's agreement table (--metrics kbx-agreement): our grader's verdicts from mkb regrade against the verdicts
// the rounds came with (KernelBench-X's own, for an imported corpus), per boundary and category.
#pragma once

#include "core/report/report_model.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <functional>
#include <string>
#include <vector>

namespace mkb::report {

/// The table "kbx-agreement": for each boundary regraded under (mkb, strict) and each category (first every
/// category), the rounds, theirs and our correct shares with 95% intervals, both / only theirs / only ours / neither,
/// the agreement share with its interval, and the geometric mean of our speedup over theirs where both call the round
/// correct. Only the live trials the options' model filter keeps; each submission's newest regrading per boundary.
/// No table when the store holds no regrading of them (the footnote of an empty table would say nothing new).
/// categoryOf names a trial's KernelBench-X category (the report's lookup over the stored problems).
Result<std::vector<ReportTable>> kbxAgreementTables(Store& store, const ReportOptions& options,
                                                    const std::function<std::string(const TrialRecord&)>& categoryOf);

} // namespace mkb::report
