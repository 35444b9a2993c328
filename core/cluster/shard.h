// A shard: what one cluster job made (its trial, submissions and skill) as one JSON file in the shared folder.
// Jobs never open the project store; the coordinator files shards into it (shard_merge.h).
#pragma once

#include "core/records/trial.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb::cluster {

inline constexpr const char* kShardFormat = "mkb-shard/1";

struct Shard {
    std::string shardId; // unique per job attempt; the merged trial's origin is "mkb-shard:<shardId>"
    std::string jobId;   // Slurm's "<array>_<task>", "" outside Slurm
    std::string host;    // the node that ran it
    /// The coordinator's live trial at this coordinate when the job was planned (the one it reruns or redoes);
    /// none when there was none. A shard finding another live trial there lost a race and is filed as history.
    std::optional<std::int64_t> replacesTrialId;
    TrialRecord trial; // identity, fingerprints, usage, times; id, source and invocation are the store's business
    TrialOutcome outcome;
    std::vector<SubmissionRecord> submissions; // feedback submissions 1..n and the final evaluation (index 0)
};

/// The outcome a stored trial records (status, verdict, usage, error, skill, flags, finish time).
TrialOutcome outcomeOfTrial(const TrialRecord& trial);

/// The origin a merged shard's trial carries: the same shard always maps to the same origin.
std::string shardOrigin(const std::string& shardId);

std::string shardToJson(const Shard& shard);
/// The error names the field that is missing or of the wrong type, and the file (where).
Result<Shard> shardFromJson(const std::string& text, const std::string& where);

/// "<coordinate>.<shardId>.json": finished shards; a job writes "<name>.part" first and renames it when complete.
std::string shardFileName(const Shard& shard);
/// Writes the shard into dir under a temporary name, flushes it, then renames it: a reader sees whole shards only.
Status writeShard(const std::filesystem::path& dir, const Shard& shard);
Result<Shard> readShard(const std::filesystem::path& file);

} // namespace mkb::cluster
