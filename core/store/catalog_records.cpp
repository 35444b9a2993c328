// The store's catalog records: problems (every fingerprint kept), devices, models and invocations.
#include "core/store/store.h"

#include "core/store/store_impl.h"
#include "core/util/utc_time.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mkb {
namespace {

std::string metaJson(const ProblemMeta& meta) {
    nlohmann::json json = nlohmann::json::object();
    if (meta.quant) {
        json["quant"] = {{"min_cosine", meta.quant->minCosine},
                         {"max_relative_l1", meta.quant->maxRelativeL1},
                         {"max_rmse", meta.quant->maxRmse}};
    }
    if (!meta.outliersJson.empty()) {
        json["outliers"] = meta.outliersJson; // kept as the text the catalog read
    }
    if (meta.flops) {
        json["flops"] = *meta.flops;
    }
    if (meta.bytes) {
        json["bytes"] = *meta.bytes;
    }
    return json.dump();
}

void readMetaJson(const std::string& tagsText, const std::string& metaText, ProblemMeta& meta) {
    const nlohmann::json tags = nlohmann::json::parse(tagsText, nullptr, false);
    if (tags.is_array()) {
        for (const auto& tag : tags) {
            if (tag.is_string()) {
                meta.tags.push_back(tag.get<std::string>());
            }
        }
    }
    const nlohmann::json json = nlohmann::json::parse(metaText, nullptr, false);
    if (!json.is_object()) {
        return;
    }
    if (json.contains("quant") && json["quant"].is_object()) {
        const auto& quant = json["quant"];
        const QuantThresholds defaults;
        meta.quant = QuantThresholds{quant.value("min_cosine", defaults.minCosine),
                                     quant.value("max_relative_l1", defaults.maxRelativeL1),
                                     quant.value("max_rmse", defaults.maxRmse)};
    }
    if (json.contains("outliers") && json["outliers"].is_string()) {
        meta.outliersJson = json["outliers"].get<std::string>();
    }
    if (json.contains("flops") && json["flops"].is_number()) {
        meta.flops = json["flops"].get<double>();
    }
    if (json.contains("bytes") && json["bytes"].is_number()) {
        meta.bytes = json["bytes"].get<double>();
    }
}

} // namespace

Result<std::int64_t> Store::upsertProblem(const Problem& problem) {
    return impl_
        ->query(
            "INSERT INTO problems (suite, number, slug, family, title, path, tags_json, meta_json, source, "
            "fingerprint, first_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (suite, number, fingerprint) DO UPDATE SET slug = excluded.slug, family = excluded.family, "
            "title = excluded.title, path = excluded.path, tags_json = excluded.tags_json, "
            "meta_json = excluded.meta_json RETURNING id",
            "saving problem " + problem.suite + "/" + problem.code())
        .bind(problem.suite, problem.number, problem.slug, problem.family, problem.title, problem.path.string(),
              nlohmann::json(problem.meta.tags).dump(), metaJson(problem.meta), problem.source, problem.fingerprint,
              utcNowIso())
        .returnedId();
}

Result<std::vector<Problem>> Store::problems() {
    return impl_
        ->query("SELECT suite, number, slug, family, title, path, tags_json, meta_json, source, fingerprint "
                "FROM problems ORDER BY suite, number, id",
                "loading problems")
        .rows([](const Statement& row) {
            Problem problem;
            problem.suite = row.text(0);
            problem.number = row.integer(1);
            problem.slug = row.text(2);
            problem.family = row.text(3);
            problem.title = row.text(4);
            problem.path = row.text(5);
            readMetaJson(row.text(6), row.text(7), problem.meta);
            problem.source = row.text(8);
            problem.fingerprint = row.text(9);
            return problem;
        });
}

Result<std::int64_t> Store::saveDevice(const DeviceRecord& device) {
    if (device.uuid.empty()) {
        return impl_->failure("saving device '" + device.name + "'", "the device has no UUID");
    }
    return impl_
        ->query("INSERT INTO devices (name, uuid, compute_capability, peaks_json, probed_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, "
                "compute_capability = excluded.compute_capability, peaks_json = excluded.peaks_json, "
                "probed_at = excluded.probed_at RETURNING id",
                "saving device " + device.uuid)
        .bind(device.name, device.uuid, device.computeCapability,
              device.peaksJson.empty() ? std::string("{}") : device.peaksJson, orNow(device.probedAt))
        .returnedId();
}

Result<std::vector<DeviceRecord>> Store::devices() {
    return impl_
        ->query("SELECT id, name, uuid, compute_capability, peaks_json, probed_at FROM devices ORDER BY id",
                "loading devices")
        .rows([](const Statement& row) {
            return DeviceRecord{row.int64(0), row.text(1), row.text(2), row.text(3), row.text(4), row.text(5)};
        });
}

Result<std::int64_t> Store::ensureModel(const std::string& name, const std::string& driver,
                                        const std::string& settingsJson) {
    if (name.empty()) {
        return impl_->failure("saving a model", "the model has no name");
    }
    return impl_
        ->query("INSERT INTO models (name, driver, settings_json, created_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET driver = excluded.driver, settings_json = excluded.settings_json "
                "RETURNING id",
                "saving model '" + name + "'")
        .bind(name, driver, settingsJson.empty() ? std::string("{}") : settingsJson, utcNowIso())
        .returnedId();
}

Result<std::vector<ModelRecord>> Store::models() {
    return impl_->query("SELECT id, name, driver, settings_json, created_at FROM models ORDER BY id", "loading models")
        .rows([](const Statement& row) {
            return ModelRecord{row.int64(0), row.text(1), row.text(2), row.text(3), row.text(4)};
        });
}

Result<std::unordered_map<std::int64_t, std::string>> Store::Impl::modelNamesById(const std::string& operation) {
    std::unordered_map<std::int64_t, std::string> names;
    Status read = query("SELECT id, name FROM models", operation).forEach([&](const Statement& row) {
        names.emplace(row.int64(0), row.text(1));
    });
    if (!read) {
        return read.error();
    }
    return names;
}

Result<std::int64_t> Store::beginInvocation(const InvocationRecord& invocation) {
    return impl_
        ->query("INSERT INTO invocations (started_at, command_line, settings_json, grader_fingerprint, pid, "
                "finished_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                "recording an invocation")
        .bind(orNow(invocation.startedAt), invocation.commandLine,
              invocation.settingsJson.empty() ? std::string("{}") : invocation.settingsJson,
              invocation.graderFingerprint, invocation.pid, nullIfEmpty(invocation.finishedAt))
        .returnedId();
}

Status Store::finishInvocation(std::int64_t invocationId, const std::string& finishedAt) {
    const std::string operation = "finishing invocation #" + std::to_string(invocationId);
    return impl_->runChangingRow(impl_->query("UPDATE invocations SET finished_at = ? WHERE id = ?", operation)
                                     .bind(orNow(finishedAt), invocationId),
                                 operation, "no such invocation");
}

Result<std::vector<InvocationRecord>> Store::invocations() {
    return impl_
        ->query("SELECT id, started_at, command_line, settings_json, grader_fingerprint, pid, finished_at "
                "FROM invocations ORDER BY id",
                "loading invocations")
        .rows([](const Statement& row) {
            return InvocationRecord{row.int64(0), row.text(1),  row.text(2), row.text(3),
                                    row.text(4),  row.int64(5), row.text(6)};
        });
}

} // namespace mkb
