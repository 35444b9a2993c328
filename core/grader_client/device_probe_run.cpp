// One `mkb device probe` over a store path (device_probe_run.h).
#include "core/grader_client/device_probe_run.h"

#include "core/store/store.h"

#include <utility>

namespace mkb {

DeviceProbeRun probeDeviceIntoStore(const std::filesystem::path& storePath, const GraderLaunch& launch,
                                    const std::string& device) {
    DeviceProbeRun run;
    auto store = Store::open(storePath, OpenMode::CreateIfMissing);
    if (!store) {
        run.failedAt = ProbeStage::OpeningStore;
        run.error = store.error().message;
        return run;
    }
    GraderProcess grader(launch);
    auto probe = grader.probe(device);
    grader.stop();
    if (!probe) {
        run.failedAt = ProbeStage::Probing;
        run.error = "probing " + device + " failed: " + probe.error().message;
        return run;
    }
    run.probe = std::move(probe).value();
    DeviceRecord record = deviceRecordFromProbe(*run.probe, currentHostName());
    if (auto saved = (*store)->saveDevice(record); !saved) {
        run.failedAt = ProbeStage::Saving;
        run.error = "the probe of " + device + " could not be saved: " + saved.error().message;
    }
    return run;
}

} // namespace mkb
