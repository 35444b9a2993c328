// A job's two steps around the run on its node: seed the private store, then turn its one trial into a shard.
#include "core/cluster/shard_job.h"

#include "core/io/trial_filing.h"
#include "core/store/store.h"

#include <unistd.h>

namespace mkb::cluster {

namespace fs = std::filesystem;

namespace {

std::string hostName() {
    char name[256] = {};
    return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

} // namespace

Status seedPrivateStore(const fs::path& storePath, const TaskSpec& task) {
    std::error_code ec;
    fs::create_directories(storePath.parent_path(), ec);
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        fs::remove(storePath.string() + suffix, ec); // a requeued job starts afresh
    }
    auto opened = Store::open(storePath, OpenMode::CreateIfMissing);
    if (!opened) {
        return opened.error();
    }
    if (!task.seed) {
        return Ok{};
    }
    auto filed = fileTrial(**opened, task.seed->trial, task.seed->outcome, {});
    if (!filed) {
        return makeError("seeding the source trial of " + task.coordinate + ": " + filed.error().message);
    }
    return Ok{};
}

Result<Shard> collectShard(const fs::path& storePath, const TaskSpec& task, const std::string& jobId,
                           const SharedFolder& folder) {
    auto opened = Store::open(storePath, OpenMode::MustExist);
    if (!opened) {
        return opened.error();
    }
    Store& store = **opened;
    auto trials = store.loadTrials();
    if (!trials) {
        return trials.error();
    }
    std::optional<std::int64_t> trialId;
    for (const TrialRecord& trial : *trials) {
        if (trial.coordinate == task.coordinate && !trial.archived) {
            trialId = trial.id;
        }
    }
    if (!trialId) {
        return makeError("the run recorded no trial at " + task.coordinate +
                         "; no shard written (is the suite on this node the one the coordinator planned with?)");
    }
    auto trial = store.loadTrial(*trialId);
    if (!trial) {
        return trial.error();
    }
    if (trial->status == TrialStatus::Running || trial->status == TrialStatus::Interrupted) {
        return makeError("the attempt at " + task.coordinate + " was stopped (" + toString(trial->status) +
                         "); no shard written, the coordinator submits it again");
    }
    auto submissions = store.submissions(*trialId);
    if (!submissions) {
        return submissions.error();
    }
    Shard shard;
    shard.shardId = task.shardId;
    shard.jobId = jobId;
    shard.host = hostName();
    shard.replacesTrialId = task.replacesTrialId;
    shard.trial = *trial;
    shard.outcome = outcomeOfTrial(*trial);
    shard.submissions = std::move(submissions).value();
    if (Status written = writeShard(folder.shards(), shard); !written) {
        return written.error();
    }
    return shard;
}

} // namespace mkb::cluster
