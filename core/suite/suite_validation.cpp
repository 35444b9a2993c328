// The grader's validate request for one problem: the request line, the reply parsed, the call under the device lock.
#include "core/suite/suite_validation.h"

#include "core/grader_client/gpu_lock.h"
#include "core/util/json_fields.h"
#include "core/util/json_input.h"
#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

namespace mkb {
namespace {

using Json = nlohmann::ordered_json;

std::string requestId(const char* prefix, long counter) {
    return std::string(prefix) + std::to_string(::getpid()) + "-" + std::to_string(counter);
}

} // namespace

std::string shortGraderMessage(const std::string& text, std::size_t limit) {
    std::string line = text.substr(0, text.find('\n'));
    return line.size() > limit ? line.substr(0, limit) + "…" : line;
}

ValidateRequest makeValidateRequest(const Problem& problem, const std::string& device, const GradeSettings& settings,
                                    double eagerTargetMs) {
    ValidateRequest request;
    request.problemPath = std::filesystem::absolute(problem.path);
    request.device = device;
    request.settings = settings;
    request.eagerTargetMs = eagerTargetMs;
    request.problemMetaJson = problemMetaJson(problem.meta);
    return request;
}

Result<ProblemValidation> validationFromJson(const std::string& objectText) {
    Json object = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(objectText));
    if (object.is_discarded() || !object.is_object()) {
        return makeError("the grader's validation is not a JSON object; update the grader");
    }
    if (!object.contains("clean") || !object["clean"].is_boolean() || !object.contains("issues") ||
        !object["issues"].is_array()) {
        return makeError("the grader's validation lacks a boolean \"clean\" or an \"issues\" list; update the grader");
    }
    ProblemValidation validation;
    validation.clean = object["clean"].get<bool>();
    validation.error = jsonText(object, "error");
    validation.deterministic = jsonFlag(object, "deterministic");
    validation.determinismNote = jsonText(object, "determinism_note");
    validation.nearZero = jsonFlag(object, "near_zero");
    validation.sensitive = jsonFlag(object, "sensitive");
    validation.eagerMedianMs = jsonNumber(object, "eager_median_ms");
    validation.eagerIqrMs = jsonNumber(object, "eager_iqr_ms");
    validation.eagerTargetMs = jsonNumber(object, "eager_target_ms").value_or(kEagerTargetMs);
    validation.eagerOk = jsonFlag(object, "eager_ok");
    validation.deviceName = jsonText(object, "device_name");
    validation.seconds = jsonNumber(object, "seconds").value_or(0);
    for (const Json& issue : object["issues"]) {
        if (issue.is_string()) {
            validation.issues.push_back(issue.get<std::string>());
        }
    }
    if (object.contains("near_zero_outputs") && object["near_zero_outputs"].is_array()) {
        for (const Json& note : object["near_zero_outputs"]) {
            if (note.is_string()) {
                validation.nearZeroOutputs.push_back(note.get<std::string>());
            }
        }
    }
    if (object.contains("inputs") && object["inputs"].is_array()) {
        for (const Json& entry : object["inputs"]) {
            if (!entry.is_object()) {
                continue;
            }
            InputSensitivity input;
            input.index = static_cast<int>(jsonNumber(entry, "index").value_or(0));
            input.name = jsonText(entry, "name");
            input.description = jsonText(entry, "description");
            input.tensor = jsonFlag(entry, "tensor").value_or(false);
            input.changed = jsonFlag(entry, "changed");
            input.exempt = jsonFlag(entry, "exempt").value_or(false);
            input.maxDiff = jsonNumber(entry, "max_diff");
            input.allowance = jsonNumber(entry, "allowance");
            input.note = jsonText(entry, "note");
            input.skipped = jsonText(entry, "skipped");
            input.error = jsonFlag(entry, "error").value_or(false);
            validation.inputs.push_back(std::move(input));
        }
    }
    validation.json = object.dump();
    return validation;
}

ProblemValidation failedValidation(const std::string& message) {
    ProblemValidation validation;
    validation.infrastructureError = true;
    validation.error = message;
    validation.issues.push_back(message);
    Json object = {{"clean", false}, {"error", message}, {"infrastructure_error", true}, {"issues", {message}}};
    validation.json = object.dump();
    return validation;
}

std::string validateRequestJson(const ValidateRequest& request, const std::string& id) {
    Json line;
    line["type"] = "validate";
    line["id"] = id;
    line["problem"] = request.problemPath.string();
    line["device"] = request.device;
    line["eager_target_ms"] = request.eagerTargetMs;
    // The eager timing holds the device's timing lock, which the grader derives from the device lock (DESIGN §5.4).
    line["device_lock"] = gpuLockPath(request.device, GpuLockOptions{}.dir).string();
    line["settings"] = {{"warmup_draws", request.settings.warmupDraws},
                        {"timing_draws", request.settings.timingDraws},
                        {"timeout_s", request.settings.timeoutS}};
    if (!request.problemMetaJson.empty()) {
        Json meta = Json::parse(request.problemMetaJson, nullptr, false);
        if (!meta.is_discarded() && meta.is_object()) {
            line["problem_meta"] = meta;
        }
    }
    return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

ProblemValidation validateProblem(GraderProcess& grader, const ValidateRequest& request, bool lockDevice,
                                  const std::atomic<bool>* cancel) {
    std::optional<GpuLock> lock;
    if (lockDevice) {
        auto acquired = GpuLock::acquire(request.device, {}, cancel);
        if (!acquired) {
            return failedValidation(acquired.error().message);
        }
        lock.emplace(std::move(acquired).value());
    }
    static long counter = 0;
    const std::string id = requestId("v", ++counter);
    auto reply = grader.exchange(validateRequestJson(request, id), id, request.settings.timeoutS + 30, {}, cancel);
    if (!reply) {
        return failedValidation("validation failed in the grader: " + shortGraderMessage(reply.error().message));
    }
    Json message = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(reply->line));
    if (message.value("type", "") == "error") {
        return failedValidation("the grader refused the validate request: " +
                                shortGraderMessage(jsonText(message, "message", message.dump())));
    }
    if (!message.contains("validation") || !message["validation"].is_object()) {
        return failedValidation("the grader's reply has no \"validation\" object; update the grader");
    }
    auto validation = validationFromJson(message["validation"].dump());
    if (!validation) {
        return failedValidation(validation.error().message);
    }
    return std::move(validation).value();
}

} // namespace mkb
