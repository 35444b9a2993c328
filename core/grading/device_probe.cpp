// Parsing of probe results and the peaks object sent with grade requests.
#include "core/grading/device_probe.h"

#include <nlohmann/json.hpp>

namespace mkb {

Result<DeviceProbe> deviceProbeFromJson(const std::string& deviceObjectText) {
    nlohmann::ordered_json object = nlohmann::ordered_json::parse(deviceObjectText, nullptr, false);
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

} // namespace mkb
