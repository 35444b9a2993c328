// Parsing of probe results and the peaks object sent with grade requests.
#include "core/grader_client/device_probe.h"

#include "core/util/json_input.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

namespace mkb {

Result<DeviceProbe> deviceProbeFromJson(const std::string& deviceObjectText) {
    nlohmann::ordered_json object = parseJsonInputOrDiscarded<nlohmann::ordered_json>(deviceObjectText);
    if (object.is_discarded() || !object.is_object()) {
        return makeError("the grader's probe result is not a JSON object; update the grader or report this");
    }
    DeviceProbe probe;
    auto text = [&](const char* key) -> std::string {
        auto it = object.find(key);
        if (it == object.end() || it->is_null()) {
            return "";
        }
        return it->is_string() ? it->get<std::string>() : it->dump();
    };
    if (!object.contains("name") || !object["name"].is_string()) {
        return makeError("the grader's probe result has no device name; update the grader or report this");
    }
    probe.name = text("name");
    probe.uuid = text("uuid");
    probe.computeCapability = text("compute_capability");
    if (!object.contains("copy_gbps") || !object["copy_gbps"].is_number()) {
        return makeError("the grader's probe result has no numeric copy_gbps; update the grader or report this");
    }
    probe.copyGBps = object["copy_gbps"].get<double>();
    if (object.contains("tflops")) {
        const auto& rates = object["tflops"];
        if (!rates.is_object()) {
            return makeError("the grader's probe result has a non-object tflops; update the grader or report this");
        }
        for (auto it = rates.begin(); it != rates.end(); ++it) {
            if (it.value().is_number()) {
                probe.tflops.emplace_back(it.key(), it.value().get<double>());
            } else if (!it.value().is_null()) {
                return makeError("the grader's probe result has a non-numeric tflops." + it.key() +
                                 "; update the grader or report this");
            }
        }
    }
    probe.json = object.dump();
    return probe;
}

std::string peaksJson(const DeviceProbe& probe) {
    nlohmann::ordered_json peaks;
    peaks["copy_gbps"] = probe.copyGBps;
    nlohmann::ordered_json rates = nlohmann::ordered_json::object();
    for (const auto& [dtype, value] : probe.tflops) {
        rates[dtype] = value;
    }
    peaks["tflops"] = rates;
    return peaks.dump();
}

DeviceRecord deviceRecordFromProbe(const DeviceProbe& probe, const std::string& host) {
    DeviceRecord record;
    record.name = probe.name;
    record.uuid = probe.uuid.empty() ? host + ":" + probe.device : probe.uuid;
    record.computeCapability = probe.computeCapability;
    nlohmann::ordered_json peaks = nlohmann::ordered_json::parse(peaksJson(probe));
    peaks["device"] = probe.device;
    peaks["host"] = host;
    record.peaksJson = peaks.dump();
    return record;
}

const DeviceRecord* latestProbeOf(const std::vector<DeviceRecord>& devices, const std::string& device,
                                  const std::string& host) {
    const DeviceRecord* best = nullptr;
    for (const DeviceRecord& record : devices) {
        auto peaks = nlohmann::ordered_json::parse(record.peaksJson, nullptr, false);
        if (peaks.is_discarded() || !peaks.is_object() || peaks.value("device", "") != device ||
            peaks.value("host", "") != host || !peaks.contains("copy_gbps")) {
            continue;
        }
        if (!best || record.probedAt >= best->probedAt) {
            best = &record;
        }
    }
    return best;
}

std::string requestPeaks(const DeviceRecord& record) {
    auto peaks = nlohmann::ordered_json::parse(record.peaksJson, nullptr, false);
    if (!peaks.is_object()) {
        return "";
    }
    peaks.erase("device");
    peaks.erase("host");
    return peaks.dump();
}

std::string latestPeaksFor(const std::vector<DeviceRecord>& devices, const std::string& device,
                           const std::string& host) {
    const DeviceRecord* best = latestProbeOf(devices, device, host);
    return best ? requestPeaks(*best) : "";
}

std::string currentHostName() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) {
        return "";
    }
    return name;
}

} // namespace mkb
