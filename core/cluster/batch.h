// A batch: the trials one sbatch job array runs, as files in the shared folder that the coordinator writes and each
// job reads (batch.json, the seed of each skill arm, the job script, the array's job id once Slurm gave one).
#pragma once

#include "core/cluster/shard.h"
#include "core/cluster/shard_merge.h"
#include "core/util/result.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb::cluster {

/// One array task: one trial of the plan.
struct TaskSpec {
    std::string coordinate; // "p01_r1_solo_cpusim"
    std::string shardId;    // the shard the job writes; fixed before submission, so a task's result is found by name
    std::optional<std::int64_t> replacesTrialId; // the coordinator's live trial it reruns, redoes or marks skipped
    std::optional<Shard> seed; // skill arms: the source solo as the project store holds it (its skill above all)
};

struct Batch {
    std::string name;                   // "b-20261201T152200Z-4242-1", also its folder's name
    std::vector<std::string> runArgs;   // `mkb run` options every task runs with (model, driver, problems, …)
    std::vector<TaskSpec> tasks;        // task i is array index i
    std::string jobId;                  // the array's job id; "" until sbatch answered
    std::map<int, std::string> settled; // task index → Slurm's final state word, once the coordinator is done with it

    std::string taskJobId(int index) const { return jobId + "_" + std::to_string(index); }
};

std::filesystem::path batchDir(const SharedFolder& folder, const std::string& name);
std::filesystem::path batchScript(const SharedFolder& folder, const std::string& name);
/// The shard file task writes, under folder.shards() (and, once merged, under folder.merged()).
std::string taskShardFileName(const TaskSpec& task);

/// Writes batch.json, the seeds and job.sh (which runs `<mkb> run-shard <batch dir>` for $SLURM_ARRAY_TASK_ID).
Status writeBatch(const SharedFolder& folder, const Batch& batch, const std::string& mkbPath);
/// Records the array's job id (job_id) and the settled tasks (settled.json), each atomically.
Status writeBatchJobId(const SharedFolder& folder, const Batch& batch);
Status writeBatchSettled(const SharedFolder& folder, const Batch& batch);
/// Reads a batch folder (the seeds only when withSeeds).
Result<Batch> readBatch(const std::filesystem::path& dir, bool withSeeds);
/// Every batch in the shared folder, oldest first; unreadable ones are reported in issues and left out.
std::vector<Batch> readBatches(const SharedFolder& folder, std::vector<std::string>& issues);

} // namespace mkb::cluster
