// The history a plan is made against (plan_history.h).
#include "core/protocol/plan_history.h"

#include "core/store/store.h"

#include <memory>
#include <utility>

namespace mkb {

Result<PlanHistory> loadPlanHistory(const std::filesystem::path& storePath, const std::string& model) {
    PlanHistory history;
    std::error_code ec;
    history.storeExists = std::filesystem::exists(storePath, ec);
    if (!history.storeExists) {
        return history;
    }
    Result<std::unique_ptr<Store>> store = Store::open(storePath, OpenMode::ReadExisting);
    if (!store) {
        return store.error();
    }
    TrialFilter filter;
    filter.model = model;
    Result<std::vector<TrialRecord>> trials = (*store)->loadTrials(filter);
    if (!trials) {
        return trials.error();
    }
    history.trials = std::move(trials).value();
    return history;
}

} // namespace mkb
