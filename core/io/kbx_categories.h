// A trial's KernelBench-X category as the kbx report tables name it, for callers outside the report (the workbench).
#pragma once

#include "core/records/trial.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <functional>
#include <string>

namespace mkb::io {

using CategoryOf = std::function<std::string(const TrialRecord&)>;

/// The category of a trial's problem by number and slug over report::problemCategories (the report's definition),
/// "" when the problem is not stored. The categories are read once, now.
Result<CategoryOf> storedCategoryOf(Store& store);

} // namespace mkb::io
