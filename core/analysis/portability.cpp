// Groups identical kernels across devices and compares their speedups.
#include "core/analysis/portability.h"

#include "core/util/sha256.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

namespace mkb::analysis {

std::vector<PortabilityGroup> portability(const AttemptSet& attempts) {
    // Identical sources are grouped by the text itself (views into the attempts); only the groups that are reported
    // pay for a SHA-256.
    using Key = std::tuple<int, std::string_view, std::string_view>; // problem, dsl, kernel source
    struct Tally {
        std::string_view slug;
        std::map<std::string_view, std::vector<const Attempt*>> byDevice;
    };
    std::map<Key, Tally> kernels;
    for (const Attempt& attempt : attempts) {
        if (!attempt.graded || attempt.finalKernelSource.empty() || attempt.deviceName.empty()) {
            continue;
        }
        Tally& tally = kernels[{attempt.problemNumber, attempt.dsl, attempt.finalKernelSource}];
        tally.slug = attempt.problemSlug;
        tally.byDevice[attempt.deviceName].push_back(&attempt);
    }
    std::vector<PortabilityGroup> groups;
    for (const auto& [key, tally] : kernels) {
        if (tally.byDevice.size() < 2) {
            continue;
        }
        PortabilityGroup group;
        group.problemNumber = std::get<0>(key);
        group.dsl = std::get<1>(key);
        group.kernelSha256 = sha256Hex(std::get<2>(key));
        group.problemSlug = tally.slug;
        const DeviceSpeedup* fastest = nullptr;
        const DeviceSpeedup* slowest = nullptr;
        for (const auto& [device, evaluations] : tally.byDevice) {
            DeviceSpeedup entry{std::string(device), evaluations.size(), false, 0};
            double sum = 0;
            std::size_t passing = 0;
            for (const Attempt* attempt : evaluations) {
                if (attempt->passed && attempt->speedup > 0) {
                    sum += attempt->speedup;
                    ++passing;
                }
            }
            entry.passed = passing > 0;
            entry.speedup = passing > 0 ? sum / static_cast<double>(passing) : 0.0;
            group.devices.push_back(entry);
        }
        std::size_t passedDevices = 0;
        for (const DeviceSpeedup& entry : group.devices) {
            if (!entry.passed) {
                continue;
            }
            ++passedDevices;
            if (!fastest || entry.speedup > fastest->speedup) {
                fastest = &entry;
            }
            if (!slowest || entry.speedup < slowest->speedup) {
                slowest = &entry;
            }
        }
        if (passedDevices >= 2) {
            group.maxOverMin = fastest->speedup / slowest->speedup;
            group.fastestDevice = fastest->deviceName;
            group.slowestDevice = slowest->deviceName;
        }
        groups.push_back(std::move(group));
    }
    std::sort(groups.begin(), groups.end(), [](const PortabilityGroup& a, const PortabilityGroup& b) {
        return std::tie(a.problemNumber, a.dsl, a.kernelSha256) < std::tie(b.problemNumber, b.dsl, b.kernelSha256);
    });
    return groups;
}

Distribution portabilitySpread(const std::vector<PortabilityGroup>& groups) {
    std::vector<double> spreads;
    for (const PortabilityGroup& group : groups) {
        if (group.maxOverMin) {
            spreads.push_back(*group.maxOverMin);
        }
    }
    return distributionOf(std::move(spreads));
}

} // namespace mkb::analysis
