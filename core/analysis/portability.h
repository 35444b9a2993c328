// Portability (DESIGN §8): the same kernel source graded on several devices, and how far its speedup moves.
#pragma once

#include "core/analysis/attempt_set.h"
#include "core/analysis/stats.h"

#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

struct DeviceSpeedup {
    std::string deviceName;
    std::size_t evaluations = 0; // graded attempts of this kernel on this device
    bool passed = false;         // at least one of them passed
    double speedup = 0;          // mean speedup of the passing evaluations; 0 when none passed
};

/// One kernel (identical final source for the same problem and DSL, from any model) seen on two or more devices.
struct PortabilityGroup {
    int problemNumber = 0;
    std::string problemSlug;
    std::string dsl;
    std::string kernelSha256;
    std::vector<DeviceSpeedup> devices; // sorted by device name
    std::optional<double> maxOverMin;   // max/min speedup over devices where it passed; nullopt below two of them
    std::string fastestDevice;
    std::string slowestDevice;
};

/// Groups graded attempts with a known final kernel source and device name; groups on one device are left out.
/// Sorted by problem, DSL, kernel hash.
std::vector<PortabilityGroup> portability(const AttemptSet& attempts);

/// Distribution of maxOverMin over the groups that have one.
Distribution portabilitySpread(const std::vector<PortabilityGroup>& groups);

} // namespace mkb::analysis
