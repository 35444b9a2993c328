// The store's re-timings and calibrations (DESIGN §5.5): one live record per cell, per before/after pair of a trial
// or per device and grader, older records archived in the same transaction as the insert, never overwritten.
#include "core/store/store.h"

#include "core/store/store_impl.h"
#include "core/util/utc_time.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace mkb {
namespace {

using nlohmann::json;

std::string cellName(const RetimingRecord& record) {
    return record.model + " " + record.suite + " p" + std::to_string(record.problemNumber) + " r" +
           std::to_string(record.replicate) + " " + record.sourceDsl + "2" + record.targetDsl;
}

/// The result in the grader's reply format (RETIME_PROTOCOL.md), for results built in memory rather than parsed.
std::string resultJson(const RetimingResult& result) {
    json kernels = json::array();
    for (const RetimedKernel& kernel : result.kernels) {
        kernels.push_back({{"label", kernel.label},
                           {"dsl", kernel.dsl},
                           {"sha256", kernel.sha256},
                           {"median_s", kernel.medianS},
                           {"gpu_median_s", kernel.gpuMedianS ? json(*kernel.gpuMedianS) : json(nullptr)}});
    }
    json pairs = json::array();
    for (const RetimedPair& pair : result.pairs) {
        pairs.push_back({{"a", pair.a},
                         {"b", pair.b},
                         {"ratio", pair.ratio},
                         {"ci_low", pair.ciLow},
                         {"ci_high", pair.ciHigh},
                         {"n", pair.n}});
    }
    return json{{"ok", result.ok},
                {"error", result.error},
                {"failed_label", result.failedLabel},
                {"infrastructure_error", result.infrastructureError},
                {"device", result.device},
                {"device_name", result.deviceName},
                {"grader_fingerprint", result.graderFingerprint},
                {"rounds", result.rounds},
                {"stop", result.stop},
                {"eager_median_s", result.eagerMedianS},
                {"kernels", kernels},
                {"pairs", pairs},
                {"seconds", result.seconds}}
        .dump();
}

/// Reads a stored result back; lenient about absent fields (the columns already hold what staleness needs).
RetimingResult resultFromJson(const std::string& text) {
    RetimingResult result;
    result.json = text;
    const json parsed = json::parse(text, nullptr, false);
    if (!parsed.is_object()) {
        return result;
    }
    const auto str = [&](const json& object, const char* key) {
        const auto found = object.find(key);
        return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
    };
    const auto num = [&](const json& object, const char* key, double fallback) {
        const auto found = object.find(key);
        return found != object.end() && found->is_number() ? found->get<double>() : fallback;
    };
    result.ok = parsed.value("ok", false);
    result.error = str(parsed, "error");
    result.failedLabel = str(parsed, "failed_label");
    result.infrastructureError = parsed.value("infrastructure_error", false);
    result.device = str(parsed, "device");
    result.deviceName = str(parsed, "device_name");
    result.graderFingerprint = str(parsed, "grader_fingerprint");
    result.rounds = static_cast<int>(num(parsed, "rounds", 0));
    result.stop = str(parsed, "stop");
    result.eagerMedianS = num(parsed, "eager_median_s", 0);
    result.seconds = num(parsed, "seconds", 0);
    if (const auto kernels = parsed.find("kernels"); kernels != parsed.end() && kernels->is_array()) {
        for (const json& item : *kernels) {
            if (!item.is_object()) {
                continue;
            }
            RetimedKernel kernel{str(item, "label"), str(item, "dsl"), str(item, "sha256"), num(item, "median_s", 0),
                                 std::nullopt};
            if (const auto gpu = item.find("gpu_median_s"); gpu != item.end() && gpu->is_number()) {
                kernel.gpuMedianS = gpu->get<double>();
            }
            result.kernels.push_back(std::move(kernel));
        }
    }
    if (const auto pairs = parsed.find("pairs"); pairs != parsed.end() && pairs->is_array()) {
        for (const json& item : *pairs) {
            if (item.is_object()) {
                result.pairs.push_back({str(item, "a"), str(item, "b"), num(item, "ratio", 1), num(item, "ci_low", 1),
                                        num(item, "ci_high", 1), static_cast<int>(num(item, "n", 0))});
            }
        }
    }
    return result;
}

std::string kernelSha(const RetimingResult& result, const std::string& label) {
    for (const RetimedKernel& kernel : result.kernels) {
        if (kernel.label == label) {
            return kernel.sha256;
        }
    }
    return {};
}

const char* const kRetimingColumns =
    "id, model, suite, problem_number, replicate, source_dsl, target_dsl, source_trial_id, base_trial_id, "
    "skill_trial_id, device, device_name, grader_fingerprint, rounds, stop, result_json, archived, created_at";

RetimingRecord readRetiming(const Statement& row) {
    RetimingRecord record;
    record.id = row.int64(0);
    record.model = row.text(1);
    record.suite = row.text(2);
    record.problemNumber = row.integer(3);
    record.replicate = row.integer(4);
    record.sourceDsl = row.text(5);
    record.targetDsl = row.text(6);
    record.sourceTrialId = row.optionalInt64(7);
    record.baseTrialId = row.optionalInt64(8);
    record.skillTrialId = row.optionalInt64(9);
    record.result = resultFromJson(row.text(15));
    // The columns are what the record was stored under; they win over a result JSON that lacks them.
    record.result.device = row.text(10);
    record.result.deviceName = row.text(11);
    record.result.graderFingerprint = row.text(12);
    record.result.rounds = row.integer(13);
    record.result.stop = row.text(14);
    record.archived = row.boolean(16);
    record.createdAt = row.text(17);
    return record;
}

std::string pairName(const TransitionRetimingRecord& record) {
    return record.model + " " + record.suite + " p" + std::to_string(record.problemNumber) + " r" +
           std::to_string(record.replicate) + " " + record.arm + " submissions " + std::to_string(record.beforeIndex) +
           " -> " + std::to_string(record.afterIndex);
}

const char* const kTransitionColumns =
    "id, trial_id, model, suite, problem_number, replicate, arm, before_index, after_index, device, device_name, "
    "grader_fingerprint, ok, rounds, stop, result_json, archived, created_at, before_sha256, after_sha256";

TransitionRetimingRecord readTransitionRetiming(const Statement& row) {
    TransitionRetimingRecord record;
    record.id = row.int64(0);
    record.trialId = row.optionalInt64(1);
    record.model = row.text(2);
    record.suite = row.text(3);
    record.problemNumber = row.integer(4);
    record.replicate = row.integer(5);
    record.arm = row.text(6);
    record.beforeIndex = row.integer(7);
    record.afterIndex = row.integer(8);
    record.result = resultFromJson(row.text(15));
    record.result.device = row.text(9);
    record.result.deviceName = row.text(10);
    record.result.graderFingerprint = row.text(11);
    record.result.ok = row.boolean(12);
    record.result.rounds = row.integer(13);
    record.result.stop = row.text(14);
    record.archived = row.boolean(16);
    record.createdAt = row.text(17);
    // The hashes the record was stored under win over a result JSON that lacks them (the loop fills them in).
    for (RetimedKernel& kernel : record.result.kernels) {
        if (kernel.label == "before" || kernel.label == "after") {
            kernel.sha256 = row.text(kernel.label == "before" ? 18 : 19);
        }
    }
    return record;
}

json methodJson(const CalibrationMethodResult& method) {
    return {{"method", method.method},
            {"delta", method.delta},
            {"aa_comparisons", method.aaComparisons},
            {"aa_helped", method.aaHelped},
            {"aa_harmed", method.aaHarmed},
            {"ab_comparisons", method.abComparisons},
            {"ab_detected", method.abDetected},
            {"smallest_delta", method.smallestDelta ? json(*method.smallestDelta) : json(nullptr)}};
}

CalibrationMethodResult methodFromJson(const json& item) {
    CalibrationMethodResult method;
    method.method = item.value("method", std::string());
    method.delta = item.value("delta", 0.05);
    method.aaComparisons = item.value("aa_comparisons", 0);
    method.aaHelped = item.value("aa_helped", 0);
    method.aaHarmed = item.value("aa_harmed", 0);
    method.abComparisons = item.value("ab_comparisons", 0);
    method.abDetected = item.value("ab_detected", 0);
    if (const auto found = item.find("smallest_delta"); found != item.end() && found->is_number()) {
        method.smallestDelta = found->get<double>();
    }
    return method;
}

CalibrationRecord readCalibration(const Statement& row) {
    CalibrationRecord record;
    record.id = row.int64(0);
    record.device = row.text(1);
    record.deviceName = row.text(2);
    record.graderFingerprint = row.text(3);
    record.selection = row.text(4);
    const json parsed = json::parse(row.text(5), nullptr, false);
    if (parsed.is_object()) {
        record.slowdown = parsed.value("slowdown", 0.10);
        if (const auto methods = parsed.find("methods"); methods != parsed.end() && methods->is_array()) {
            for (const json& item : *methods) {
                if (item.is_object()) {
                    record.methods.push_back(methodFromJson(item));
                }
            }
        }
        if (const auto detail = parsed.find("detail"); detail != parsed.end()) {
            record.detailJson = detail->dump();
        }
    }
    record.archived = row.boolean(6);
    record.createdAt = row.text(7);
    return record;
}

/// Archives the live record a new one replaces, then inserts the new one, in one transaction: nothing is overwritten,
/// and a failure leaves the old record live. Both steps get the transaction's timestamp; the new record's id.
Result<std::int64_t> replaceLive(Store& store, const std::function<Result<int>(const std::string& now)>& archive,
                                 const std::function<Result<std::int64_t>(const std::string& now)>& insert) {
    std::int64_t id = 0;
    Status written = store.transaction([&]() -> Status {
        const std::string now = utcNowIso();
        if (Result<int> archived = archive(now); !archived) {
            return archived.error();
        }
        Result<std::int64_t> inserted = insert(now);
        if (!inserted) {
            return inserted.error();
        }
        id = *inserted;
        return Ok{};
    });
    if (!written) {
        return written.error();
    }
    return id;
}

} // namespace

Result<std::int64_t> Store::insertRetiming(const RetimingRecord& record) {
    const std::string operation = "storing the re-timing of " + cellName(record);
    if (record.result.device.empty() || record.result.graderFingerprint.empty()) {
        return impl_->failure(operation, "the result names no device or grader fingerprint; re-time the cell again");
    }
    const RetimingResult& result = record.result;
    return replaceLive(
        *this,
        [&](const std::string& now) {
            return impl_
                ->query("UPDATE retimings SET archived = 1, archived_at = ? WHERE archived = 0 AND model = ? AND "
                        "suite = ? AND problem_number = ? AND replicate = ? AND source_dsl = ? AND target_dsl = ?",
                        operation)
                .bind(now, record.model, record.suite, record.problemNumber, record.replicate, record.sourceDsl,
                      record.targetDsl)
                .run();
        },
        [&](const std::string& now) {
            return impl_
                ->query("INSERT INTO retimings (model, suite, problem_number, replicate, source_dsl, target_dsl, "
                        "source_trial_id, base_trial_id, skill_trial_id, device, device_name, grader_fingerprint, "
                        "source_sha256, base_sha256, skill_sha256, rounds, stop, result_json, created_at) VALUES "
                        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                        operation)
                .bind(record.model, record.suite, record.problemNumber, record.replicate, record.sourceDsl,
                      record.targetDsl, record.sourceTrialId, record.baseTrialId, record.skillTrialId, result.device,
                      result.deviceName, result.graderFingerprint, kernelSha(result, "source"),
                      kernelSha(result, "base"), kernelSha(result, "skill"), result.rounds, result.stop,
                      result.json.empty() ? resultJson(result) : result.json,
                      record.createdAt.empty() ? now : record.createdAt)
                .returnedId();
        });
}

Result<std::vector<RetimingRecord>> Store::liveRetimings() const {
    return impl_
        ->query(std::string("SELECT ") + kRetimingColumns +
                    " FROM retimings WHERE archived = 0 ORDER BY model, suite, problem_number, replicate, source_dsl, "
                    "target_dsl",
                "reading the live re-timings")
        .rows(readRetiming);
}

Result<std::vector<RetimingRecord>> Store::allRetimings() const {
    return impl_
        ->query(std::string("SELECT ") + kRetimingColumns + " FROM retimings ORDER BY id", "reading the re-timings")
        .rows(readRetiming);
}

Result<std::int64_t> Store::insertTransitionRetiming(const TransitionRetimingRecord& record) {
    const std::string operation = "storing the re-timing of " + pairName(record);
    if (record.result.device.empty() || record.result.graderFingerprint.empty()) {
        return impl_->failure(operation, "the result names no device or grader fingerprint; re-time the pair again");
    }
    if (record.afterIndex <= record.beforeIndex) {
        return impl_->failure(operation, "the after submission does not come after the before one");
    }
    const RetimingResult& result = record.result;
    return replaceLive(
        *this,
        [&](const std::string& now) {
            return impl_
                ->query("UPDATE transition_retimings SET archived = 1, archived_at = ? WHERE archived = 0 AND "
                        "model = ? AND suite = ? AND problem_number = ? AND replicate = ? AND arm = ? AND "
                        "before_index = ? AND after_index = ?",
                        operation)
                .bind(now, record.model, record.suite, record.problemNumber, record.replicate, record.arm,
                      record.beforeIndex, record.afterIndex)
                .run();
        },
        [&](const std::string& now) {
            return impl_
                ->query("INSERT INTO transition_retimings (trial_id, model, suite, problem_number, replicate, arm, "
                        "before_index, after_index, device, device_name, grader_fingerprint, before_sha256, "
                        "after_sha256, ok, rounds, stop, result_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                        operation)
                .bind(record.trialId, record.model, record.suite, record.problemNumber, record.replicate, record.arm,
                      record.beforeIndex, record.afterIndex, result.device, result.deviceName, result.graderFingerprint,
                      kernelSha(result, "before"), kernelSha(result, "after"), result.ok, result.rounds, result.stop,
                      result.json.empty() ? resultJson(result) : result.json,
                      record.createdAt.empty() ? now : record.createdAt)
                .returnedId();
        });
}

Result<std::vector<TransitionRetimingRecord>> Store::liveTransitionRetimings() const {
    return impl_
        ->query(std::string("SELECT ") + kTransitionColumns +
                    " FROM transition_retimings WHERE archived = 0 ORDER BY model, suite, problem_number, replicate, "
                    "arm, before_index, after_index",
                "reading the live re-timings of submission pairs")
        .rows(readTransitionRetiming);
}

Result<std::vector<TransitionRetimingRecord>> Store::allTransitionRetimings() const {
    return impl_
        ->query(std::string("SELECT ") + kTransitionColumns + " FROM transition_retimings ORDER BY id",
                "reading the re-timings of submission pairs")
        .rows(readTransitionRetiming);
}

Result<std::int64_t> Store::insertCalibration(const CalibrationRecord& record) {
    const std::string operation = "storing the calibration of " + record.device + " (" + record.deviceName + ")";
    if (record.device.empty() || record.graderFingerprint.empty()) {
        return impl_->failure(operation, "the calibration names no device or grader fingerprint");
    }
    json methods = json::array();
    for (const CalibrationMethodResult& method : record.methods) {
        methods.push_back(methodJson(method));
    }
    json detail = json::parse(record.detailJson.empty() ? "[]" : record.detailJson, nullptr, false);
    if (detail.is_discarded()) {
        return impl_->failure(operation, "its per-problem detail is not JSON");
    }
    const std::string methodsText =
        json{{"slowdown", record.slowdown}, {"methods", methods}, {"detail", detail}}.dump();
    return replaceLive(
        *this,
        [&](const std::string& now) {
            return impl_
                ->query("UPDATE calibrations SET archived = 1, archived_at = ? WHERE archived = 0 AND device_name = ? "
                        "AND device = ? AND grader_fingerprint = ?",
                        operation)
                .bind(now, record.deviceName, record.device, record.graderFingerprint)
                .run();
        },
        [&](const std::string& now) {
            return impl_
                ->query("INSERT INTO calibrations (device, device_name, grader_fingerprint, selection, methods_json, "
                        "created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                        operation)
                .bind(record.device, record.deviceName, record.graderFingerprint, record.selection, methodsText,
                      record.createdAt.empty() ? now : record.createdAt)
                .returnedId();
        });
}

Result<std::vector<CalibrationRecord>> Store::liveCalibrations() const {
    return impl_
        ->query("SELECT id, device, device_name, grader_fingerprint, selection, methods_json, archived, created_at "
                "FROM calibrations WHERE archived = 0 ORDER BY created_at DESC, id DESC",
                "reading the calibrations")
        .rows(readCalibration);
}

} // namespace mkb
