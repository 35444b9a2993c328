// Filing finished shards from the shared folder into the project store, each exactly once, by import's rules.
#pragma once

#include "core/cluster/shard.h"
#include "core/io/trial_filing.h"
#include "core/store/store.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mkb::cluster {

/// The shared folder's layout, one place for the coordinator and the jobs.
struct SharedFolder {
    std::filesystem::path root;
    std::filesystem::path shards() const { return root / "shards"; }     // finished shards, written by jobs
    std::filesystem::path merged() const { return root / "merged"; }     // shards filed in the store
    std::filesystem::path rejected() const { return root / "rejected"; } // shards that cannot be read, with why
    std::filesystem::path batches() const { return root / "batches"; }   // one folder per sbatch array
    std::filesystem::path logs() const { return root / "logs"; }         // the jobs' stdout and stderr
    std::filesystem::path work() const { return root / "work"; }         // attempt workspaces, one folder per job
};

/// What happened to one shard.
struct MergedShard {
    std::filesystem::path file;
    Shard shard;
    FiledAs filed = FiledAs::Unchanged;
    bool history = false; // another live trial took its place first: filed archived, the live one kept
    std::int64_t trialId = 0;
};

struct MergeSummary {
    std::vector<MergedShard> merged; // in file-name order
    std::vector<std::string> issues; // one line per shard that could not be read or stored (it stays or is rejected)
};

/// Files one shard: live (replacing the trial it was planned to replace, or filling an empty coordinate), or
/// as history when another live trial holds the coordinate now. Filing the same shard again changes nothing.
/// invocationId (0 = none) is recorded with a newly filed trial.
Result<MergedShard> fileShard(Store& store, const Shard& shard, std::int64_t invocationId);

/// Files every finished shard in folder.shards() (names ending in ".json"; temporary files are skipped) and then
/// moves it to folder.merged(). A shard that cannot be parsed is moved to folder.rejected() with a .why file; a
/// store error leaves the shard where it is for the next merge. A crash between filing and moving is harmless:
/// the next merge finds the shard unchanged and moves it.
MergeSummary mergeShards(Store& store, const SharedFolder& folder, std::int64_t invocationId);

} // namespace mkb::cluster
