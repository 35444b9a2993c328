// The history a plan is made against (`mkb plan`): the model's live trials in the store, read without changing it.
#pragma once

#include "core/records/trial.h"
#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mkb {

struct PlanHistory {
    bool storeExists = false;        // false: no file at the path, so no history
    std::vector<TrialRecord> trials; // the model's live trials
};

/// Opens the store at storePath read-only (when there is a file) and loads the model's live trials. Errors come from
/// the store: it cannot be opened or read.
Result<PlanHistory> loadPlanHistory(const std::filesystem::path& storePath, const std::string& model);

} // namespace mkb
