// `mkb run --executor slurm`: its options, and the hand-over from the parsed command line to the Slurm coordinator.
#pragma once

#include "app/cli/args.h"

#include "core/protocol/runner.h"
#include "core/store/store.h"

#include <atomic>
#include <set>
#include <string>

namespace mkb::cli {

/// The options only the Slurm executor reads (each takes a value).
const std::set<std::string>& slurmRunOptions();

/// Runs the parsed `mkb run` on Slurm: the jobs get the same options (paths made absolute; no store, progress,
/// workspaces or executor options), the coordinator follows them and merges their shards into store.
Result<RunSummary> runOnSlurmFromArgs(const ParsedArgs& args, const RunSettings& settings, Store& store,
                                      ProgressSink& progress, const std::atomic<bool>& cancel);

} // namespace mkb::cli
