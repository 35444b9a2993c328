// The Slurm coordinator (DESIGN §11): plans convergently against the project store, submits the runnable trials as
// job arrays, follows them, merges their shards, and submits skill arms once their source solos are merged.
#pragma once

#include "core/cluster/shard_merge.h"
#include "core/cluster/slurm_client.h"
#include "core/protocol/runner.h"

#include <atomic>
#include <string>
#include <vector>

namespace mkb::cluster {

struct ClusterSettings {
    SharedFolder folder;
    std::string mkbPath;              // the mkb every node runs (the same path on every node)
    std::vector<std::string> runArgs; // the `mkb run` options each job runs with (no executor, store or progress)
    double pollSeconds = 5;           // between two looks at Slurm and the shard folder
};

/// The name every job of this shared folder carries ("mkb-<8 hex>"), so squeue --name finds them all.
std::string jobNameFor(const SharedFolder& folder);

/// Runs settings' selection on Slurm until every runnable trial was tried once by this invocation: finished jobs'
/// shards are merged as they appear, and the next invocation picks up jobs still queued or running. Killing it at
/// any point, or scancel of any job, loses and duplicates nothing: the store, the batches and Slurm are the state.
/// Errors: the shared folder is locked by another coordinator or not writable, the store fails, sbatch refuses.
Result<RunSummary> runOnSlurm(const RunSettings& settings, const ClusterSettings& cluster, Store& store,
                              SlurmClient& slurm, ProgressSink& progress, const std::atomic<bool>& cancel);

} // namespace mkb::cluster
