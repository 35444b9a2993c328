// The KernelBench-X category of the stored problems and of a trial's problem, as the report and the workbench name it.
#pragma once

#include "core/records/trial.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <functional>
#include <map>
#include <string>
#include <utility>

namespace mkb::io {

using CategoryOf = std::function<std::string(const TrialRecord&)>;

/// The KernelBench-X category of every stored problem by (number, slug), from the MKB_META of its newest stored
/// version (or its source): the report's definition. Trials carry number and slug, not the suite.
Result<std::map<std::pair<int, std::string>, std::string>> problemCategories(Store& store);

/// The category of a trial's problem by number and slug over problemCategories,
/// "" when the problem is not stored. The categories are read once, now.
Result<CategoryOf> storedCategoryOf(Store& store);

} // namespace mkb::io
