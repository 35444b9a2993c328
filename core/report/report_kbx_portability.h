// The report's portability tables over golden eager timings (--metrics kbx-portability --golden DIR): this GPU's
// eager times beside KernelBench-X's six GPUs', per op and per GPU.
#pragma once

#include "core/report/report_model.h"
#include "core/util/result.h"

#include <filesystem>
#include <vector>

namespace mkb::report {

/// KernelBench-X's six published GPU folders; any other folder under the golden root is ours (the reference).
extern const char* const kKbxPublishedGpus[6];

/// The tables "kbx-portability" (each GPU's eager time against the reference GPU's: the geometric mean of the ratio
/// over the ops both timed at the largest common size, its 95% interval, how many ops it runs faster; then the
/// spread max/min across all GPUs, beside the paper's figure) and "kbx-portability-ops" (every op: its size, each
/// GPU's time, max/min, fastest and slowest). The reference is the one folder under golden that is not one of
/// KernelBench-X's six; with none, only the spread is given; with several, an error names them.
Result<std::vector<ReportTable>> kbxPortabilityTables(const std::filesystem::path& golden);

} // namespace mkb::report
