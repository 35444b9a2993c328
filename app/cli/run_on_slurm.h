// `mkb run --executor slurm`: the hand-over from the run's options to the Slurm coordinator.
#pragma once

#include "core/protocol/run_options.h"
#include "core/protocol/runner.h"
#include "core/store/store.h"

#include <atomic>

namespace mkb::cli {

/// Runs `mkb run` on Slurm: the jobs get the same options (paths made absolute; no store, progress, workspaces,
/// concurrency, --only or executor options), the coordinator follows them and merges their shards into store.
Result<RunSummary> runOnSlurm(const RunOptions& options, const RunSettings& settings, Store& store,
                              ProgressSink& progress, const std::atomic<bool>& cancel);

} // namespace mkb::cli
