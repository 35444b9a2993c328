// Batch folders in the shared folder: batch.json, seeds/<task>.json, job.sh, job_id and settled.json.
#include "core/cluster/batch.h"

#include "core/util/json_input.h"
#include "core/util/shell_words.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sys/stat.h>

namespace mkb::cluster {

namespace fs = std::filesystem;
using json = nlohmann::json;


fs::path batchDir(const SharedFolder& folder, const std::string& name) {
    return folder.batches() / name;
}

fs::path batchScript(const SharedFolder& folder, const std::string& name) {
    return batchDir(folder, name) / "job.sh";
}

std::string taskShardFileName(const TaskSpec& task) {
    return task.coordinate + "." + task.shardId + ".json";
}

Status writeBatch(const SharedFolder& folder, const Batch& batch, const std::string& mkbPath) {
    const fs::path dir = batchDir(folder, batch.name);
    std::error_code ec;
    fs::create_directories(dir / "seeds", ec);
    if (ec) {
        return makeError("cannot create " + dir.string() + ": " + ec.message() + " (is --shared writable?)");
    }
    json tasks = json::array();
    for (std::size_t i = 0; i < batch.tasks.size(); ++i) {
        const TaskSpec& task = batch.tasks[i];
        tasks.push_back({{"coordinate", task.coordinate},
                         {"shard_id", task.shardId},
                         {"replaces_trial_id", task.replacesTrialId ? json(*task.replacesTrialId) : json()},
                         {"seeded", task.seed.has_value()}});
        if (task.seed) {
            if (Status written =
                    writeFileAtomically(dir / "seeds" / (std::to_string(i) + ".json"), shardToJson(*task.seed));
                !written) {
                return written;
            }
        }
    }
    const json document = {
        {"format", "mkb-batch/1"}, {"name", batch.name}, {"run_args", batch.runArgs}, {"tasks", tasks}};
    if (Status written = writeFileAtomically(dir / "batch.json", document.dump(1) + "\n"); !written) {
        return written;
    }
    const std::string script =
        "#!/bin/sh\n"
        "# Written by `mkb run --executor slurm`: one array task runs one trial of this batch on "
        "its node\n# and writes its shard into the shared folder. It never opens the project "
        "store.\nexec " +
        shellQuoted(mkbPath) + " run-shard " + shellQuoted(dir.string()) +
        " --task \"${SLURM_ARRAY_TASK_ID:?not started by sbatch --array}\"\n";
    const fs::path scriptPath = batchScript(folder, batch.name);
    if (Status written = writeFileAtomically(scriptPath, script); !written) {
        return written;
    }
    ::chmod(scriptPath.c_str(), 0755);
    return Ok{};
}

Status writeBatchJobId(const SharedFolder& folder, const Batch& batch) {
    return writeFileAtomically(batchDir(folder, batch.name) / "job_id", batch.jobId + "\n");
}

Status writeBatchSettled(const SharedFolder& folder, const Batch& batch) {
    json settled = json::object();
    for (const auto& [index, state] : batch.settled) {
        settled[std::to_string(index)] = state;
    }
    return writeFileAtomically(batchDir(folder, batch.name) / "settled.json", settled.dump() + "\n");
}

Result<Batch> readBatch(const fs::path& dir, bool withSeeds) {
    auto document = readJsonFile(dir / "batch.json");
    if (!document) {
        return document.error();
    }
    const std::string where = (dir / "batch.json").string();
    Batch batch;
    try {
        batch.name = document->at("name").get<std::string>();
        batch.runArgs = document->at("run_args").get<std::vector<std::string>>();
        const json& tasks = document->at("tasks");
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            TaskSpec task;
            task.coordinate = tasks[i].at("coordinate").get<std::string>();
            task.shardId = tasks[i].at("shard_id").get<std::string>();
            if (!tasks[i].at("replaces_trial_id").is_null()) {
                task.replacesTrialId = tasks[i].at("replaces_trial_id").get<std::int64_t>();
            }
            if (withSeeds && tasks[i].value("seeded", false)) {
                auto seed = readShard(dir / "seeds" / (std::to_string(i) + ".json"));
                if (!seed) {
                    return seed.error();
                }
                task.seed = std::move(seed).value();
            }
            batch.tasks.push_back(std::move(task));
        }
    } catch (const json::exception& error) {
        return makeError(where + ": not a batch written by mkb run --executor slurm (" + error.what() + ")");
    }
    std::error_code ec;
    if (fs::exists(dir / "job_id", ec)) {
        auto jobId = readFile(dir / "job_id");
        if (!jobId) {
            return jobId.error();
        }
        batch.jobId = std::string(trimmed(*jobId));
    }
    if (fs::exists(dir / "settled.json", ec)) {
        auto settled = readJsonFile(dir / "settled.json");
        if (settled && settled->is_object()) {
            for (const auto& [key, value] : settled->items()) {
                if (value.is_string() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
                    batch.settled[std::stoi(key)] = value.get<std::string>();
                }
            }
        }
    }
    return batch;
}

std::vector<Batch> readBatches(const SharedFolder& folder, std::vector<std::string>& issues) {
    std::vector<fs::path> dirs;
    std::error_code ec;
    for (fs::directory_iterator it(folder.batches(), ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_directory()) {
            dirs.push_back(it->path());
        }
    }
    std::sort(dirs.begin(), dirs.end());
    std::vector<Batch> batches;
    for (const fs::path& dir : dirs) {
        auto batch = readBatch(dir, false);
        if (!batch) {
            issues.push_back(batch.error().message + " (batch left out)");
            continue;
        }
        batches.push_back(std::move(batch).value());
    }
    return batches;
}

} // namespace mkb::cluster
