// One `mkb device probe` over a store path: the store opened (created when missing), the device probed through a
// grader session of its own, and the probe saved as this host's record of the device.
#pragma once

#include "core/grader_client/device_probe.h"
#include "core/grader_client/grader_process.h"

#include <filesystem>
#include <optional>
#include <string>

namespace mkb {

/// Where a probe stopped when it could not finish.
enum class ProbeStage { OpeningStore, Probing, Saving };

struct DeviceProbeRun {
    std::optional<DeviceProbe> probe; // set once the device was probed (saved unless failedAt is Saving)
    std::optional<ProbeStage> failedAt;
    std::string error; // one line when failedAt is set: what failed, where, what to do
};

/// Opens the store at storePath, probes `device` (cuda:N) with a grader started from launch, and saves the probe
/// with this host's name (replacing the device's earlier probe).
DeviceProbeRun probeDeviceIntoStore(const std::filesystem::path& storePath, const GraderLaunch& launch,
                                    const std::string& device);

} // namespace mkb
