// The coordinator's merge: parse, file through fileTrial (import's archive rules), then move the shard aside.
#include "core/cluster/shard_merge.h"

#include "core/util/text.h"
#include "core/util/utc_time.h"

#include <algorithm>
#include <ctime>

namespace mkb::cluster {

namespace fs = std::filesystem;

namespace {

Status moveInto(const fs::path& file, const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::rename(file, dir / file.filename(), ec);
    if (ec) {
        return makeError("cannot move " + file.string() + " into " + dir.string() + ": " + ec.message());
    }
    return Ok{};
}

} // namespace

Result<MergedShard> fileShard(Store& store, const Shard& shard, std::int64_t invocationId) {
    MergedShard result;
    result.shard = shard;
    TrialRecord trial = shard.trial;
    trial.origin = shardOrigin(shard.shardId);
    trial.invocationId = invocationId;
    trial.sourceTrialId.reset();
    Status written = store.transaction([&]() -> Status {
        auto live = store.liveTrialAt(trial.model, trial.suite, trial.problemNumber, trial.replicate, trial.arm);
        if (!live) {
            return live.error();
        }
        // A live trial that is neither this shard's nor the one it was planned to replace came from a newer plan
        // (a duplicate job, a local run): it stays live and this shard becomes history.
        if (*live && (*live)->origin != trial.origin &&
            (!shard.replacesTrialId || (*live)->id != *shard.replacesTrialId)) {
            trial.archived = true;
            trial.archivedAt = utcNowIso();
            result.history = true;
        }
        auto filed = fileTrial(store, trial, shard.outcome, shard.submissions);
        if (!filed) {
            return filed.error();
        }
        result.filed = filed->filed;
        result.trialId = filed->trialId;
        return Ok{};
    });
    if (!written) {
        return makeError("shard " + shardFileName(shard) + " could not be stored: " + written.error().message);
    }
    return result;
}

MergeSummary mergeShards(Store& store, const SharedFolder& folder, std::int64_t invocationId) {
    MergeSummary summary;
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(folder.shards(), ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.front() == '.' || it->path().extension() != ".json") {
            continue; // a job's temporary file, still being written or left by a job killed while writing
        }
        files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        auto shard = readShard(file);
        if (!shard) {
            summary.issues.push_back(shard.error().message + "; moved to " + folder.rejected().string());
            if (moveInto(file, folder.rejected())) {
                (void)writeFileAtomically(folder.rejected() / (file.filename().string() + ".why"),
                                          shard.error().message + "\n");
            }
            continue;
        }
        auto filed = fileShard(store, *shard, invocationId);
        if (!filed) {
            summary.issues.push_back(filed.error().message + " (it is merged next time)");
            continue;
        }
        filed->file = file;
        if (Status moved = moveInto(file, folder.merged()); !moved) {
            summary.issues.push_back(moved.error().message + " (it is filed; the next merge finds it unchanged)");
        }
        summary.merged.push_back(std::move(filed).value());
    }
    return summary;
}

} // namespace mkb::cluster
