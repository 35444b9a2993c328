// The calibration tables a report ends with (docs/design.md §5.5): each grading device's live calibration, and its
// A/B ladder where the calibration stored its sessions.
#pragma once

#include "core/analysis/settings.h"
#include "core/report/report_model.h"
#include "core/store/store.h"
#include "core/util/result.h"

namespace mkb::report {

/// The live calibration of each device that graded the data, as one table appended to the report, and its A/B
/// ladder where it was stored. The devices are those of the live re-timings; without re-timings, every calibrated
/// device. Nothing is added when the store holds no calibration at all, so reports of uncalibrated stores stay as
/// they were.
Status appendCalibrations(const Store& store, const analysis::AnalysisSettings& settings, Report& report);

} // namespace mkb::report
