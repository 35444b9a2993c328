// One cluster job on its node: a private store of its own seeded with the task's source solo, the ordinary run of
// the task's one coordinate into it (mkb run-shard drives that), and the trial handed back as a shard.
// The project store is never opened here.
#pragma once

#include "core/cluster/batch.h"

#include <filesystem>
#include <string>

namespace mkb::cluster {

/// Creates a fresh private store at storePath (removing one a requeued job left) and files the task's seed, the
/// source solo a skill arm is given, so the runner plans it as reused and hands its skill on.
Status seedPrivateStore(const std::filesystem::path& storePath, const TaskSpec& task);

/// Reads the live trial at the task's coordinate from the private store and writes it, with its submissions, as
/// the task's shard into folder.shards() (temporary name, renamed when whole). A stopped (scancel, Ctrl+C) or
/// crashed attempt writes no shard: the error says so, and the coordinator submits the trial again.
Result<Shard> collectShard(const std::filesystem::path& storePath, const TaskSpec& task, const std::string& jobId,
                           const SharedFolder& folder);

} // namespace mkb::cluster
