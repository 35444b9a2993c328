// What the inspector shows of one comparison beyond its numbers: its trials' stored detail, the store's live
// calibrations and the annotations of its two skills, read together from the store.
#pragma once

#include "core/analysis/comparison.h"
#include "core/io/transfer_case.h"
#include "core/records/calibration.h"
#include "core/records/store_records.h"

#include <cstdint>
#include <map>
#include <vector>

namespace mkb {
class Store;
}

namespace mkb::gui {

struct ComparisonDetail {
    TransferCase transferCase;
    std::vector<CalibrationRecord> calibrations;                            // live ones, every device
    std::map<std::int64_t, std::vector<AnnotationRecord>> skillAnnotations; // by skill id, for the case's skills
};

/// Reads comparison's detail from store; what cannot be read is left empty (an arm's error says why).
ComparisonDetail readComparisonDetail(Store& store, const analysis::Comparison& comparison);

} // namespace mkb::gui
