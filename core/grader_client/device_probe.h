// A device's measured peaks (copy bandwidth, dense matmul rates) as plain data, and their JSON forms.
#pragma once

#include "core/records/store_records.h"
#include "core/util/result.h"

#include <string>
#include <utility>
#include <vector>

namespace mkb {

/// Measured peaks of one device, as reported by the grader's probe.
struct DeviceProbe {
    std::string device; // what was asked for, e.g. "cuda:0"
    std::string name;
    std::string uuid;
    std::string computeCapability;
    double copyGBps = 0;
    std::vector<std::pair<std::string, double>> tflops; // dtype name → dense matmul TFLOP/s, in the grader's order
    std::string json;                                   // the probe's "device" object as the grader wrote it
};

/// Parses the "device" object of a probe_result reply. Strict on name and copy_gbps; tflops entries that are
/// null (unsupported dtype) are left out.
Result<DeviceProbe> deviceProbeFromJson(const std::string& deviceObjectText);

/// The "peaks" object of a grade request: {"copy_gbps": .., "tflops": {dtype: ..}}.
std::string peaksJson(const DeviceProbe& probe);

/// The store row for a probe. Its peaks JSON is the request's peaks object plus "device" ("cuda:0") and "host",
/// so that grading can later pick this machine's probe of the same device.
DeviceRecord deviceRecordFromProbe(const DeviceProbe& probe, const std::string& host);

/// The most recent stored probe of `device` on `host` (one with peaks), or null when none.
const DeviceRecord* latestProbeOf(const std::vector<DeviceRecord>& devices, const std::string& device,
                                  const std::string& host);

/// A stored probe's peaks object as a request takes it (without the device and host it was saved under).
std::string requestPeaks(const DeviceRecord& record);

/// The peaks object (as for a request) of the most recent stored probe of `device` on `host`, or "" when none.
std::string latestPeaksFor(const std::vector<DeviceRecord>& devices, const std::string& device,
                           const std::string& host);

/// This machine's host name ("" when unknown).
std::string currentHostName();

} // namespace mkb
