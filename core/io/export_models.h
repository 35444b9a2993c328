// Which models an export covers when none is named (`mkb export results-json`): every model with live trials.
#pragma once

#include "core/store/store.h"
#include "core/util/result.h"

#include <string>
#include <vector>

namespace mkb {

/// The models that hold live trials in the store, sorted (empty when it holds none). Reads the trials' lean columns
/// only. Errors come from the store.
Result<std::vector<std::string>> liveModels(Store& store);

} // namespace mkb
