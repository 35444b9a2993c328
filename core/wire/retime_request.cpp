// The paired re-timing request line and the strict parser of the grader's "retime" reply object (DESIGN §5.5).
#include "core/wire/retime_request.h"

#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace mkb {
namespace {

using Json = nlohmann::ordered_json;

Json objectOrEmpty(const std::string& text) {
    if (text.empty()) {
        return Json::object();
    }
    Json parsed = Json::parse(text, nullptr, false);
    return parsed.is_discarded() || !parsed.is_object() ? Json::object() : parsed;
}

std::string wrongType(const std::string& where, const char* expected, const Json& value) {
    return "the grader's retime result has " + where + " = " + value.dump().substr(0, 60) + ", expected " + expected +
           "; update the grader or report this";
}

/// Reads one object's fields; the first missing or mistyped required field, or mistyped optional one, is kept.
class Reader {
public:
    Reader(const Json& object, std::string where) : object_(object), where_(std::move(where)) {}

    const Json* find(const char* field, bool required) {
        auto it = object_.find(field);
        if (it == object_.end() || it->is_null()) {
            if (required) {
                note("the grader's retime result lacks " + name(field) + "; update the grader or report this");
            }
            return nullptr;
        }
        return &*it;
    }
    void text(const char* field, std::string& target, bool required = false) {
        if (const Json* value = find(field, required)) {
            value->is_string() ? void(target = value->get<std::string>())
                               : note(wrongType(name(field), "a string", *value));
        }
    }
    void boolean(const char* field, bool& target, bool required = false) {
        if (const Json* value = find(field, required)) {
            value->is_boolean() ? void(target = value->get<bool>()) : note(wrongType(name(field), "a boolean", *value));
        }
    }
    void number(const char* field, double& target, bool required = false) {
        if (const Json* value = find(field, required)) {
            value->is_number() && std::isfinite(value->get<double>())
                ? void(target = value->get<double>())
                : note(wrongType(name(field), "a finite number", *value));
        }
    }
    void optionalNumber(const char* field, std::optional<double>& target) {
        if (const Json* value = find(field, false)) {
            value->is_number() ? void(target = value->get<double>())
                               : note(wrongType(name(field), "a number or null", *value));
        }
    }
    void integer(const char* field, int& target, bool required = false) {
        if (const Json* value = find(field, required)) {
            value->is_number_integer() ? void(target = value->get<int>())
                                       : note(wrongType(name(field), "an integer", *value));
        }
    }
    void note(const std::string& message) {
        if (error_.empty()) {
            error_ = message;
        }
    }
    const std::string& error() const { return error_; }

private:
    std::string name(const char* field) const { return where_.empty() ? field : where_ + "." + field; }

    const Json& object_;
    std::string where_;
    std::string error_;
};

} // namespace

RetimeRequest makeRetimeRequest(const Problem& problem, const std::string& device, const GradeSettings& settings,
                                const RetimeSettings& retime) {
    RetimeRequest request;
    request.problemPath = std::filesystem::absolute(problem.path);
    request.problemMetaJson = problemMetaJson(problem.meta);
    request.device = device;
    request.settings = settings;
    request.retime = retime;
    return request;
}

nlohmann::ordered_json severalKernelsJson(const char* type, const std::string& id,
                                          const std::filesystem::path& problemPath, const std::string& problemMetaJson,
                                          const std::string& device, const std::vector<RetimeKernel>& kernels,
                                          const GradeSettings& settings) {
    Json line;
    line["type"] = type;
    line["id"] = id;
    line["problem"] = problemPath.string();
    if (!problemMetaJson.empty()) {
        Json meta = Json::parse(problemMetaJson, nullptr, false);
        if (!meta.is_discarded() && meta.is_object()) {
            line["problem_meta"] = meta;
        }
    }
    line["device"] = device;
    Json list = Json::array();
    for (const RetimeKernel& kernel : kernels) {
        list.push_back({{"label", kernel.label},
                        {"kernel", kernel.kernelPath.string()},
                        {"dsl", kernel.dsl},
                        {"dsl_descriptor", objectOrEmpty(kernel.dslDescriptorJson)},
                        {"slowdown", kernel.slowdown}});
    }
    line["kernels"] = list;
    line["settings"] = gradeSettingsJson(settings);
    return line;
}

std::string retimeRequestJson(const RetimeRequest& request, const std::string& id) {
    Json line = severalKernelsJson("retime", id, request.problemPath, request.problemMetaJson, request.device,
                                   request.kernels, request.settings);
    line["retime"] = {{"min_rounds", request.retime.minRounds},
                      {"max_rounds", request.retime.maxRounds},
                      {"max_seconds", request.retime.maxSeconds},
                      {"ci_halfwidth", request.retime.ciHalfwidth}};
    if (request.seed) {
        line["seed"] = *request.seed;
    }
    return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<RetimingResult> retimingResultFromJson(const std::string& json) {
    Json object = Json::parse(json, nullptr, false);
    if (object.is_discarded()) {
        object = Json::parse(withNonFiniteAsNull(json), nullptr, false);
    }
    if (object.is_discarded() || !object.is_object()) {
        return makeError("the grader's retime result is not a JSON object; update the grader or report this");
    }
    RetimingResult result;
    Reader read(object, "");
    read.boolean("ok", result.ok, true);
    read.text("error", result.error);
    read.text("failed_label", result.failedLabel);
    read.boolean("infrastructure_error", result.infrastructureError);
    read.text("device", result.device);
    read.text("device_name", result.deviceName);
    read.text("grader_fingerprint", result.graderFingerprint);
    read.integer("rounds", result.rounds, result.ok);
    read.text("stop", result.stop, result.ok);
    if (result.ok) {
        read.number("eager_median_s", result.eagerMedianS, true);
    }
    read.number("seconds", result.seconds);
    if (!read.error().empty()) {
        return makeError(read.error());
    }
    if (result.ok && result.stop != "converged" && result.stop != "round_limit" && result.stop != "time_limit") {
        return makeError("the grader's retime result has stop = \"" + result.stop.substr(0, 40) +
                         "\", expected converged, round_limit or time_limit; update the grader or report this");
    }
    if (!result.ok && result.error.empty()) {
        return makeError("the grader's retime result failed without saying why (empty error); report this");
    }
    for (const char* list : {"kernels", "pairs"}) {
        auto it = object.find(list);
        if (it != object.end() && !it->is_array() && !it->is_null()) {
            return makeError(wrongType(list, "an array", *it));
        }
        if (result.ok && (it == object.end() || !it->is_array())) {
            return makeError(std::string("the grader's retime result lacks ") + list +
                             "; update the grader or report this");
        }
    }
    if (auto kernels = object.find("kernels"); kernels != object.end() && kernels->is_array()) {
        for (std::size_t i = 0; i < kernels->size(); ++i) {
            const Json& item = (*kernels)[i];
            const std::string where = "kernels[" + std::to_string(i) + "]";
            if (!item.is_object()) {
                return makeError(wrongType(where, "an object", item));
            }
            RetimedKernel kernel;
            Reader k(item, where);
            k.text("label", kernel.label, true);
            k.text("dsl", kernel.dsl);
            k.text("sha256", kernel.sha256, result.ok);
            if (result.ok) {
                k.number("median_s", kernel.medianS, true);
            }
            k.optionalNumber("gpu_median_s", kernel.gpuMedianS);
            if (!k.error().empty()) {
                return makeError(k.error());
            }
            result.kernels.push_back(std::move(kernel));
        }
    }
    if (auto pairs = object.find("pairs"); pairs != object.end() && pairs->is_array()) {
        for (std::size_t i = 0; i < pairs->size(); ++i) {
            const Json& item = (*pairs)[i];
            const std::string where = "pairs[" + std::to_string(i) + "]";
            if (!item.is_object()) {
                return makeError(wrongType(where, "an object", item));
            }
            RetimedPair pair;
            Reader p(item, where);
            p.text("a", pair.a, true);
            p.text("b", pair.b, true);
            p.number("ratio", pair.ratio, true);
            p.number("ci_low", pair.ciLow, true);
            p.number("ci_high", pair.ciHigh, true);
            p.integer("n", pair.n, true);
            if (!p.error().empty()) {
                return makeError(p.error());
            }
            if (!(pair.ciLow <= pair.ratio && pair.ratio <= pair.ciHigh)) {
                return makeError("the grader's retime result has " + where + " with ratio outside its interval [" +
                                 std::to_string(pair.ciLow) + ", " + std::to_string(pair.ciHigh) + "]; report this");
            }
            result.pairs.push_back(std::move(pair));
        }
    }
    result.json = object.dump(-1, ' ', false, Json::error_handler_t::replace);
    return result;
}

} // namespace mkb
