// One `mkb calibrate` over a store path (calibration_store.h).
#include "core/protocol/calibration_job.h"

#include "core/grader_client/device_probe.h"
#include "core/store/store.h"

#include <utility>

namespace mkb {

namespace {

CalibrationStoreRun stopped(CalibrationStoreRun run, CalibrationStage stage, std::string error) {
    run.failedAt = stage;
    run.error = std::move(error);
    return run;
}

} // namespace

CalibrationStoreRun calibrateStore(const std::filesystem::path& storePath, const GraderLaunch& launch,
                                   CalibrationJob job, const CalibrationCallbacks& callbacks,
                                   std::atomic<bool>* cancel) {
    CalibrationStoreRun outcome;
    auto opened = Store::open(storePath, OpenMode::CreateIfMissing);
    if (!opened) {
        return stopped(std::move(outcome), CalibrationStage::OpeningStore, opened.error().message);
    }
    Store& store = **opened;
    if (auto devices = store.devices(); devices) {
        job.peaksJson = latestPeaksFor(*devices, job.device, currentHostName());
    }

    GraderProcess grader(launch);
    if (Status started = grader.start(); !started) {
        return stopped(std::move(outcome), CalibrationStage::StartingGrader,
                       "calibrate: the grader could not start: " + started.error().message);
    }
    if (callbacks.graderStarted) {
        callbacks.graderStarted();
    }
    const auto progress = [&](const std::string& line) {
        if (callbacks.progress) {
            callbacks.progress(line);
        }
    };
    Result<CalibrationRun> run = runCalibration(job, grader, progress, cancel);
    grader.stop();
    if (!run) {
        return stopped(std::move(outcome), CalibrationStage::Calibrating, run.error().message);
    }
    outcome.run = std::move(run).value();
    if (outcome.run->cancelled || !outcome.run->anyControl()) {
        return outcome;
    }
    auto stored = store.insertCalibration(outcome.run->record);
    if (!stored) {
        return stopped(std::move(outcome), CalibrationStage::Storing, "calibrate: " + stored.error().message);
    }
    outcome.storedId = *stored;
    return outcome;
}

} // namespace mkb
