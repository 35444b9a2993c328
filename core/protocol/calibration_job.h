// One `mkb calibrate` over a store path: the store opened (created when missing), the device's peaks from this host's
// latest stored probe, the grader started and stopped around runCalibration, and the record stored per device and
// grader when the run measured something.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/protocol/calibration_run.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace mkb {

/// What the caller hears while a calibration runs.
struct CalibrationCallbacks {
    std::function<void()> graderStarted;              // the grader runs (e.g. install a Ctrl+C handler now)
    std::function<void(const std::string&)> progress; // runCalibration's lines, one per solution and replicate
};

/// Where a calibration stopped when it could not finish.
enum class CalibrationStage { OpeningStore, StartingGrader, Calibrating, Storing };

struct CalibrationStoreRun {
    std::optional<CalibrationRun> run;    // set once the controls ran (cancelled or not)
    std::optional<std::int64_t> storedId; // the calibration's row, once stored
    std::optional<CalibrationStage> failedAt;
    std::string error; // one line when failedAt is set: what failed, where, what to do
};

/// Runs job (see runCalibration) against the store at storePath: fills job.peaksJson from the store, starts a grader
/// with launch and stops it after the controls. The record is stored only when the run was not cancelled and
/// measured some control (CalibrationRun::anyControl).
CalibrationStoreRun calibrateStore(const std::filesystem::path& storePath, const GraderLaunch& launch,
                                   CalibrationJob job, const CalibrationCallbacks& callbacks,
                                   std::atomic<bool>* cancel);

} // namespace mkb
