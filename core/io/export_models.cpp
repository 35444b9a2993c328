// Which models an export covers when none is named (export_models.h).
#include "core/io/export_models.h"

#include "core/io/mkb_results_export.h"

namespace mkb {

Result<std::vector<std::string>> liveModels(Store& store) {
    auto trials = store.loadTrials({}, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    return modelsOf(*trials);
}

} // namespace mkb
