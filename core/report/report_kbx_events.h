// The report's event tables (--metrics kbx-events): KernelBench-X's claimed speedup increases and regressions of a
// refinement, each judged by the paired re-timing of its before and after kernels (mkb retime --transitions).
#pragma once

#include "core/report/report_model.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <functional>
#include <string>
#include <vector>

namespace mkb::report {

/// The tables "kbx-events" (per performance kind, then per category: events, held / within noise / reversed / not
/// timed, the shares of the timed ones with 95% intervals, the geometric means of the claimed and the paired
/// after/before ratios, why the rest were not timed) and "kbx-event-list" (one row per event and kind). An event is a
/// consecutive submission pair of a live trial (the options' model filter) whose after submission's verdict names a
/// performance kind in "reached_by" (an imported corpus's); its paired ratio is the pair's live re-timing. No tables
/// when the selection holds no such event. categoryOf names a trial's KernelBench-X category.
Result<std::vector<ReportTable>> kbxEventTables(Store& store, const ReportOptions& options,
                                                const std::function<std::string(const TrialRecord&)>& categoryOf);

} // namespace mkb::report
