// Verdict JSON parsing and writing with the grader protocol's field names.
#include "core/wire/verdict_json.h"

#include "core/util/json_input.h"
#include "core/vocabulary/boundary.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace mkb {
namespace {

using Json = nlohmann::ordered_json;

std::string typeMismatch(const char* field, const char* expected, const Json& value) {
    return std::string("the grader's verdict has ") + field + " = " + value.dump().substr(0, 60) + ", expected " +
           expected + "; update the grader or report this";
}

/// Reads optional fields: missing or null leaves the target alone; a wrong type records the first error.
class FieldReader {
public:
    explicit FieldReader(const Json& object) : object_(object) {}

    const Json* find(const char* field) {
        auto it = object_.find(field);
        return it == object_.end() || it->is_null() ? nullptr : &*it;
    }
    void boolean(const char* field, bool& target) {
        if (const Json* value = find(field)) {
            value->is_boolean() ? void(target = value->get<bool>()) : note(field, "a boolean", *value);
        }
    }
    void optionalBoolean(const char* field, std::optional<bool>& target) {
        if (const Json* value = find(field)) {
            value->is_boolean() ? void(target = value->get<bool>()) : note(field, "a boolean", *value);
        }
    }
    void number(const char* field, double& target) {
        if (const Json* value = find(field)) {
            value->is_number() ? void(target = value->get<double>()) : note(field, "a number", *value);
        }
    }
    void optionalNumber(const char* field, std::optional<double>& target) {
        if (const Json* value = find(field)) {
            value->is_number() ? void(target = value->get<double>()) : note(field, "a number", *value);
        }
    }
    void integer(const char* field, int& target) {
        if (const Json* value = find(field)) {
            // A count outside int's range (or not whole) is refused: casting it would be undefined behaviour.
            const double number = value->is_number() ? value->get<double>() : std::nan("");
            const bool fits = std::isfinite(number) && number == std::floor(number) &&
                              number >= std::numeric_limits<int>::min() && number <= std::numeric_limits<int>::max();
            fits ? void(target = static_cast<int>(number)) : note(field, "a whole number within int's range", *value);
        }
    }
    void text(const char* field, std::string& target) {
        if (const Json* value = find(field)) {
            value->is_string() ? void(target = value->get<std::string>()) : note(field, "a string", *value);
        }
    }
    void note(const char* field, const char* expected, const Json& value) {
        if (error_.empty()) {
            error_ = typeMismatch(field, expected, value);
        }
    }
    const std::string& error() const { return error_; }

private:
    const Json& object_;
    std::string error_;
};

} // namespace

std::string withNonFiniteAsNull(const std::string& jsonText) {
    std::string out;
    out.reserve(jsonText.size());
    bool inString = false;
    for (std::size_t i = 0; i < jsonText.size(); ++i) {
        char c = jsonText[i];
        if (inString) {
            out += c;
            if (c == '\\' && i + 1 < jsonText.size()) {
                out += jsonText[++i];
            } else if (c == '"') {
                inString = false;
            }
            continue;
        }
        if (c == '"') {
            inString = true;
            out += c;
            continue;
        }
        auto tokenAt = [&](const char* token) { return jsonText.compare(i, std::strlen(token), token) == 0; };
        if (tokenAt("-Infinity")) {
            out += "null";
            i += 8;
        } else if (tokenAt("Infinity")) {
            out += "null";
            i += 7;
        } else if (tokenAt("NaN")) {
            out += "null";
            i += 2;
        } else {
            out += c;
        }
    }
    return out;
}

Result<Verdict> verdictFromJson(const std::string& verdictObjectText) {
    if (Status bounded = checkJsonDepth(verdictObjectText); !bounded) {
        return makeError("the grader's verdict is " + bounded.error().message + "; update the grader or report this");
    }
    Json object = Json::parse(verdictObjectText, nullptr, false);
    if (object.is_discarded()) {
        object = Json::parse(withNonFiniteAsNull(verdictObjectText), nullptr, false);
    }
    if (object.is_discarded() || !object.is_object()) {
        return makeError("the grader's verdict is not a JSON object; update the grader or report this");
    }
    Verdict verdict;
    for (const char* reward : {"imported", "correct", "passed"}) {
        auto it = object.find(reward);
        if (it == object.end()) {
            return makeError(std::string("the grader's verdict lacks the reward '") + reward +
                             "'; update the grader or report this");
        }
        if (!it->is_boolean()) {
            return makeError(typeMismatch(reward, "a boolean", *it));
        }
    }
    auto speedup = object.find("speedup_vs_eager");
    if (speedup == object.end()) {
        return makeError("the grader's verdict lacks the reward 'speedup_vs_eager'; update the grader or report this");
    }
    if (!speedup->is_number()) {
        return makeError(typeMismatch("speedup_vs_eager", "a number", *speedup));
    }
    verdict.imported = object["imported"].get<bool>();
    verdict.correct = object["correct"].get<bool>();
    verdict.passed = object["passed"].get<bool>();
    verdict.speedupVsEager = speedup->get<double>();
    if (!std::isfinite(verdict.speedupVsEager) || verdict.speedupVsEager < 0) {
        return makeError("the grader's verdict has speedup_vs_eager = " + speedup->dump() +
                         ", expected a finite number ≥ 0; update the grader or report this");
    }

    FieldReader read(object);
    read.text("stage", verdict.stage);
    read.boolean("infrastructure_error", verdict.infrastructureError);
    read.boolean("timed_out", verdict.timedOut);
    read.text("error", verdict.error);
    read.integer("correct_draws", verdict.correctDraws);
    read.integer("total_draws", verdict.totalDraws);
    if (const Json* failed = read.find("failed_draws"); failed && failed->is_array()) {
        for (const Json& index : *failed) {
            if (index.is_number_integer() && index.get<std::int64_t>() >= 0 &&
                index.get<std::int64_t>() <= std::numeric_limits<int>::max()) {
                verdict.failedDraws.push_back(int(index.get<std::int64_t>()));
            }
        }
    }
    read.text("mismatch", verdict.mismatch);
    read.boolean("compliant", verdict.compliant);
    read.text("compliance_rule", verdict.complianceRule);
    verdict.boundary.clear();
    read.text("boundary", verdict.boundary);
    verdict.boundary = boundaryOrLegacy(verdict.boundary); // graded before boundaries existed: its own kind
    read.optionalNumber("kernel_median_ms", verdict.kernelMedianMs);
    read.optionalNumber("eager_median_ms", verdict.eagerMedianMs);
    read.optionalNumber("kernel_iqr_ms", verdict.kernelIqrMs);
    read.boolean("throttled", verdict.throttled);
    read.optionalNumber("speedup_ci_low", verdict.speedupCiLow);
    read.optionalNumber("speedup_ci_high", verdict.speedupCiHigh);
    read.optionalNumber("gpu_median_ms", verdict.gpuMedianMs);
    read.text("gpu_time_source", verdict.gpuTimeSource);
    read.integer("gpu_samples", verdict.gpuSamples);
    read.number("slowdown", verdict.slowdown);
    read.optionalNumber("slowdown_delay_ms", verdict.slowdownDelayMs);
    read.optionalBoolean("outliers_correct", verdict.outliersCorrect);
    read.number("eval_seconds", verdict.evalSeconds);
    read.text("outlier_mismatch", verdict.outlierMismatch);
    read.optionalBoolean("recheck_correct", verdict.recheckCorrect);
    read.text("log", verdict.log);
    if (const Json* quant = read.find("quant")) {
        if (!quant->is_object()) {
            read.note("quant", "an object or null", *quant);
        } else {
            QuantMetrics metrics;
            FieldReader q(*quant);
            q.number("cosine", metrics.cosine);
            q.number("relative_l1", metrics.relativeL1);
            q.number("rmse", metrics.rmse);
            q.boolean("passed", metrics.passed);
            if (!q.error().empty()) {
                return makeError(q.error());
            }
            verdict.quant = metrics;
        }
    }
    if (const Json* roofline = read.find("roofline")) {
        if (!roofline->is_object()) {
            read.note("roofline", "an object or null", *roofline);
        } else {
            Roofline r;
            FieldReader f(*roofline);
            f.number("bytes", r.bytes);
            f.number("flops", r.flops);
            f.optionalNumber("achieved_gbps", r.achievedGBps);
            f.optionalNumber("achieved_tflops", r.achievedTflops);
            f.optionalNumber("iou", r.iou);
            f.optionalNumber("mfu", r.mfu);
            f.text("time_basis", r.timeBasis);
            if (!f.error().empty()) {
                return makeError(f.error());
            }
            verdict.roofline = r;
        }
    }
    if (!read.error().empty()) {
        return makeError(read.error());
    }
    verdict.json = object.dump(-1, ' ', false, Json::error_handler_t::replace);
    return verdict;
}

std::string verdictToJson(const Verdict& v) {
    Json object;
    auto optional = [](const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); };
    object["imported"] = v.imported;
    object["correct"] = v.correct;
    object["passed"] = v.passed;
    object["speedup_vs_eager"] = v.speedupVsEager;
    object["stage"] = v.stage;
    object["error"] = v.error;
    object["infrastructure_error"] = v.infrastructureError;
    object["timed_out"] = v.timedOut;
    object["correct_draws"] = v.correctDraws;
    object["total_draws"] = v.totalDraws;
    object["failed_draws"] = v.failedDraws;
    object["mismatch"] = v.mismatch;
    object["compliant"] = v.compliant;
    object["compliance_rule"] = v.complianceRule;
    object["boundary"] = boundaryOrLegacy(v.boundary);
    object["kernel_median_ms"] = optional(v.kernelMedianMs);
    object["eager_median_ms"] = optional(v.eagerMedianMs);
    object["kernel_iqr_ms"] = optional(v.kernelIqrMs);
    object["throttled"] = v.throttled;
    object["speedup_ci_low"] = optional(v.speedupCiLow);
    object["speedup_ci_high"] = optional(v.speedupCiHigh);
    object["gpu_median_ms"] = optional(v.gpuMedianMs);
    object["gpu_time_source"] = v.gpuTimeSource.empty() ? "none" : v.gpuTimeSource;
    object["gpu_samples"] = v.gpuSamples;
    if (v.slowdown > 0) { // only calibrate's slowed copies carry it: every other verdict's JSON stays as it was
        object["slowdown"] = v.slowdown;
        object["slowdown_delay_ms"] = optional(v.slowdownDelayMs);
    }
    object["outliers_correct"] = v.outliersCorrect ? Json(*v.outliersCorrect) : Json(nullptr);
    object["quant"] = v.quant ? Json{{"cosine", v.quant->cosine},
                                     {"relative_l1", v.quant->relativeL1},
                                     {"rmse", v.quant->rmse},
                                     {"passed", v.quant->passed}}
                              : Json(nullptr);
    object["roofline"] = v.roofline ? Json{{"bytes", v.roofline->bytes},
                                           {"flops", v.roofline->flops},
                                           {"achieved_gbps", optional(v.roofline->achievedGBps)},
                                           {"achieved_tflops", optional(v.roofline->achievedTflops)},
                                           {"iou", optional(v.roofline->iou)},
                                           {"mfu", optional(v.roofline->mfu)},
                                           {"time_basis", v.roofline->timeBasis}}
                                    : Json(nullptr);
    object["eval_seconds"] = v.evalSeconds;
    object["outlier_mismatch"] = v.outlierMismatch;
    object["recheck_correct"] = v.recheckCorrect ? Json(*v.recheckCorrect) : Json(nullptr);
    object["log"] = v.log;
    return object.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Verdict infrastructureVerdict(const std::string& message, const std::string& stage, bool timedOut) {
    Verdict verdict;
    verdict.stage = stage.empty() ? "load" : stage;
    verdict.infrastructureError = true;
    verdict.timedOut = timedOut;
    verdict.error = message;
    verdict.json = verdictToJson(verdict);
    return verdict;
}

} // namespace mkb
