// readComparisonDetail: the transfer case through core, then the calibrations and the annotations of its skills.
#include "gui/project/comparison_detail.h"

#include "core/io/skill_annotations.h"
#include "core/store/store.h"

namespace mkb::gui {

ComparisonDetail readComparisonDetail(Store& store, const analysis::Comparison& comparison) {
    ComparisonDetail detail;
    detail.transferCase = loadTransferCase(store, comparison);
    if (Result<std::vector<CalibrationRecord>> live = store.liveCalibrations()) {
        detail.calibrations = std::move(*live);
    }
    for (const TransferArm* arm : {&detail.transferCase.source, &detail.transferCase.skill}) {
        if (!arm->skill) {
            continue;
        }
        if (auto annotations = skillAnnotations(store, arm->skill->id)) {
            detail.skillAnnotations[arm->skill->id] = std::move(*annotations);
        }
    }
    return detail;
}

} // namespace mkb::gui
