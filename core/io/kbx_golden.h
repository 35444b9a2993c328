// Reads KernelBench-X's golden eager timings (metrics/golden_results/<gpu>/<op>.json, and a folder of the same form
// that bench/kbx_golden_timing.py writes for another GPU) into analysis::GoldenTiming rows.
#pragma once

#include "core/analysis/kbx_portability.h"
#include "core/util/result.h"

#include <filesystem>
#include <vector>

namespace mkb {

/// Every timing under root: each sub-folder is one GPU, each <op>.json in it one op, either KernelBench-X's list of
/// {"input_size", "ms", ...} or our object {"task", "device", "results": [...]} of the same entries. Files whose name
/// starts with "_" are bookkeeping and skipped. Sizes compare by value: a whole-valued float (1.0) equals its integer.
/// An entry without a positive, finite ms is an error naming the file and the entry; so is a file that is not JSON of
/// either form. No GPU folder at all is an error too.
Result<std::vector<analysis::GoldenTiming>> readGoldenTimings(const std::filesystem::path& root);

} // namespace mkb
