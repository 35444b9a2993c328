// The re-timing of a store as one call: which mode the store opens in, where the device's name comes from, and the
// grader's lifetime around runRetimes.
#include "core/protocol/retime_job.h"

#include "core/grader_client/device_probe.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

namespace mkb {

std::string storedDeviceName(Store& store, const std::string& device) {
    auto devices = store.devices();
    if (!devices) {
        return {};
    }
    const std::string host = currentHostName();
    std::string name;
    std::string latest;
    for (const DeviceRecord& record : *devices) {
        const nlohmann::json peaks = nlohmann::json::parse(record.peaksJson, nullptr, false);
        if (!peaks.is_object() || peaks.value("device", std::string()) != device ||
            peaks.value("host", std::string()) != host) {
            continue;
        }
        if (record.probedAt >= latest) {
            latest = record.probedAt;
            name = record.name;
        }
    }
    return name;
}

namespace {

/// Opens the store (read-only for a dry run), names the device, starts the grader, runs retimeAll and stops it.
template <typename Run, typename RetimeAll>
Run withStoreAndGrader(const std::filesystem::path& storePath, const GraderLaunch& launch, RetimeJob& job,
                       const std::function<void()>& graderStarted, RetimeAll retimeAll) {
    Run run;
    auto opened = Store::open(storePath, job.dryRun ? OpenMode::ReadExisting : OpenMode::MustExist);
    if (!opened) {
        run.failedAt = RetimeStage::OpeningStore;
        run.error = opened.error().message;
        return run;
    }
    Store& store = **opened;
    if (job.deviceName.empty()) {
        job.deviceName = storedDeviceName(store, job.device);
    }
    GraderProcess grader(launch);
    if (Status started = grader.start(); !started) {
        run.failedAt = RetimeStage::StartingGrader;
        run.error = "the grader could not start: " + started.error().message;
        return run;
    }
    if (graderStarted) {
        graderStarted();
    }
    auto summary = retimeAll(store, grader);
    grader.stop();
    if (!summary) {
        run.failedAt = RetimeStage::Retiming;
        run.error = summary.error().message;
        return run;
    }
    run.summary = std::move(summary.value());
    return run;
}

} // namespace

RetimeStoreRun retimeStore(const std::filesystem::path& storePath, const GraderLaunch& launch, RetimeJob job,
                           const RetimeCallbacks& callbacks, const std::atomic<bool>* cancel) {
    return withStoreAndGrader<RetimeStoreRun>(
        storePath, launch, job, callbacks.graderStarted, [&](Store& store, GraderProcess& grader) {
            const auto ignorePlan = [](const RetimePlan&) {};
            const auto ignoreOutcome = [](const RetimeOutcome&) {};
            return runRetimes(store, grader, job, callbacks.planned ? callbacks.planned : ignorePlan,
                              callbacks.timed ? callbacks.timed : ignoreOutcome, cancel);
        });
}

TransitionStoreRun retimeStoreTransitions(const std::filesystem::path& storePath, const GraderLaunch& launch,
                                          RetimeJob job, const TransitionRetimeCallbacks& callbacks,
                                          const std::atomic<bool>* cancel) {
    return withStoreAndGrader<TransitionStoreRun>(
        storePath, launch, job, callbacks.graderStarted, [&](Store& store, GraderProcess& grader) {
            return runTransitionRetimes(store, grader, job, callbacks.planned, callbacks.timed, cancel);
        });
}

} // namespace mkb
