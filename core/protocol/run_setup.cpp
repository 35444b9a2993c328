// What `mkb run` settles around runProtocol (run_setup.h).
#include "core/protocol/run_setup.h"

#include "core/grader_client/device_probe.h"
#include "core/grader_client/grader_pool.h"

#include <string>
#include <utility>

namespace mkb {

namespace fs = std::filesystem;

void useTestDeviceRetiming(RunSettings& settings) {
    if (graderDeviceFor(settings.device) == "cpu") { // cpu and the cpu:N test devices
        settings.retimeSettings = {20, 200, 10, settings.retimeSettings.ciHalfwidth};
    }
}

fs::path defaultWorkspaceRoot(const fs::path& storePath) {
    std::error_code ec;
    return fs::absolute(storePath, ec).parent_path() / (storePath.stem().string() + ".attempts");
}

Result<std::unique_ptr<Store>> openRunStore(const fs::path& storePath, RunSettings& settings) {
    std::error_code ec;
    if (settings.dryRun && !fs::exists(storePath, ec)) {
        return std::unique_ptr<Store>();
    }
    auto opened = Store::open(storePath, settings.dryRun ? OpenMode::ReadExisting : OpenMode::CreateIfMissing);
    if (!opened) {
        return opened.error();
    }
    std::unique_ptr<Store> store = std::move(opened).value();
    if (auto devices = store->devices(); devices && settings.devices.empty()) {
        settings.peaksJson = latestPeaksFor(*devices, settings.device, currentHostName());
    } else if (devices) {
        for (const std::string& device : settings.devices) {
            settings.peaksByDevice[device] = latestPeaksFor(*devices, graderDeviceFor(device), currentHostName());
        }
    }
    return store;
}

RunFinish runFinished(const Result<RunSummary>& summary, const RunSettings& settings) {
    RunFinish finish;
    ProgressEvent& finished = finish.event;
    finished.kind = ProgressEventKind::RunFinished;
    if (!summary) {
        finish.end = RunEnd::Failed;
        finished.status = "failed";
        finished.message = summary.error().message;
        return finish;
    }
    if (settings.dryRun) {
        finish.end = RunEnd::Planned;
        finished.status = "planned";
    } else if (summary->cancelled) {
        finish.end = RunEnd::Interrupted;
        finished.status = "interrupted";
        finished.message = "run the same command again to resume";
    } else if (summary->failed > 0) {
        finish.end = RunEnd::Incomplete;
        finished.status = "incomplete";
        finished.message = std::to_string(summary->failed) + " trials failed; run the same command again to redo them";
    } else {
        finish.end = RunEnd::Complete;
        finished.status = "complete";
    }
    finished.counts.total = summary->finished + summary->skipped + summary->failed + summary->interrupted;
    finished.counts.done = summary->finished + summary->skipped;
    finished.counts.failed = summary->failed;
    finished.counts.interrupted = summary->interrupted;
    finished.counts.passed = summary->passed;
    finished.counts.elapsedSeconds = summary->seconds;
    if (!settings.dryRun && finished.message.empty()) {
        finished.message = std::to_string(summary->attempted) + " attempted, " + std::to_string(summary->finished) +
                           " finished (" + std::to_string(summary->passed) + " passed), " +
                           std::to_string(summary->skipped) + " skipped, " +
                           std::to_string(summary->plan.count(PlanStatus::Reuse)) + " reused";
        if (settings.retime) {
            finished.message += ", " + std::to_string(summary->retimed) + " cells re-timed";
            if (summary->retimeErrors > 0) {
                finished.message +=
                    " (" + std::to_string(summary->retimeErrors) + " could not be: run again, or mkb retime)";
            }
        }
    }
    return finish;
}

} // namespace mkb
