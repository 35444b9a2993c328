// The pool request line and the strict parser of the grader's "pool" reply object.
#include "core/wire/pool_request.h"

#include "core/wire/grade_request.h"
#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

namespace mkb {
namespace {

using Json = nlohmann::ordered_json;

std::string badField(const std::string& where, const char* expected) {
    return "the grader's pool result has no valid " + where + " (expected " + expected +
           "); update the grader or report this";
}

} // namespace

PoolRequest makePoolRequest(const Problem& problem, const std::string& device, const GradeSettings& settings) {
    PoolRequest request;
    request.problemPath = std::filesystem::absolute(problem.path);
    request.problemMetaJson = problemMetaJson(problem.meta);
    request.device = device;
    request.settings = settings;
    return request;
}

std::string poolRequestJson(const PoolRequest& request, const std::string& id) {
    Json line = severalKernelsJson("pool", id, request.problemPath, request.problemMetaJson, request.device,
                                   request.kernels, request.settings);
    return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<PoolResult> poolResultFromJson(const std::string& json) {
    Json object = Json::parse(withNonFiniteAsNull(json), nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
        return makeError("the grader's pool result is not a JSON object; update the grader or report this");
    }
    PoolResult result;
    if (!object.contains("ok") || !object["ok"].is_boolean()) {
        return makeError(badField("ok", "a boolean"));
    }
    result.ok = object["ok"].get<bool>();
    if (object.contains("error") && object["error"].is_string()) {
        result.error = object["error"].get<std::string>();
    }
    if (object.contains("draws") && object["draws"].is_number_integer()) {
        result.draws = object["draws"].get<int>();
    }
    if (object.contains("seconds") && object["seconds"].is_number()) {
        result.seconds = object["seconds"].get<double>();
    }
    if (!object.contains("kernels") || !object["kernels"].is_array()) {
        return makeError(badField("kernels", "an array"));
    }
    for (std::size_t i = 0; i < object["kernels"].size(); ++i) {
        const Json& item = object["kernels"][i];
        const std::string where = "kernels[" + std::to_string(i) + "]";
        if (!item.is_object() || !item.contains("label") || !item["label"].is_string() || !item.contains("complete") ||
            !item["complete"].is_boolean()) {
            return makeError(badField(where, "an object with a label and complete"));
        }
        PooledKernel kernel;
        kernel.label = item["label"].get<std::string>();
        kernel.complete = item["complete"].get<bool>();
        if (item.contains("dsl") && item["dsl"].is_string()) {
            kernel.dsl = item["dsl"].get<std::string>();
        }
        if (item.contains("sha256") && item["sha256"].is_string()) {
            kernel.sha256 = item["sha256"].get<std::string>();
        }
        if (kernel.complete) {
            if (!item.contains("verdict") || !item["verdict"].is_object()) {
                return makeError(badField(where + ".verdict", "an object for a complete kernel"));
            }
            auto verdict = verdictFromJson(item["verdict"].dump());
            if (!verdict) {
                return makeError(where + ": " + verdict.error().message);
            }
            kernel.verdict = std::move(verdict).value();
        }
        result.kernels.push_back(std::move(kernel));
    }
    return result;
}

} // namespace mkb
