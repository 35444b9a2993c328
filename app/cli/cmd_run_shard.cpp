// `mkb run-shard`: the entry of one Slurm array task on its node (written into each batch's job.sh by
// `mkb run --executor slurm`): seed a private store, run the task's one trial with `mkb run`, write its shard.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"

#include "core/cluster/batch.h"
#include "core/cluster/shard_job.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kRunShardIntro = R"(usage: mkb run-shard BATCH_DIR --task N [--scratch DIR]

Runs task N of a batch that `mkb run --executor slurm` submitted as a Slurm job array (its job.sh calls this with
$SLURM_ARRAY_TASK_ID). The trial runs exactly as in a local `mkb run`, recorded in a private store in the scratch
folder (default: $SLURM_TMPDIR, else $TMPDIR, else /tmp), never in the project store. When it ends, its trial,
submissions and skill are written to <shared>/shards/<coordinate>.<shard id>.json under a temporary name and
renamed when whole; the coordinator merges it into the project store. A stopped or crashed attempt writes nothing
and is submitted again by the next `mkb run`.

)";

const char* const kRunShardRest =
    R"(exit codes: 0 shard written, 2 bad command line, 3 the batch or its seed cannot be read, 4 the private store
            failed, 5 the attempt ended without a shard (stopped, crashed, or the grader could not start)
)";

const OptionTable& runShardOptions() {
    static const OptionTable table = {
        integerOption("task", "N", "the array index").within(0, 1000000).isRequired(),
        pathOption("scratch", "DIR", "a node-local folder for the private store (removed when the task ends)")
            .defaultSaid("$SLURM_TMPDIR, else $TMPDIR, else /tmp"),
    };
    return table;
}

std::string runShardHelp() {
    return verbHelp(kRunShardIntro, runShardOptions(), kRunShardRest);
}

int runRunShard(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(runShardOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb run-shard --help)");
    }
    if (parsed->help) {
        std::cout << runShardHelp();
        return kExitOk;
    }
    if (parsed->positionals.size() != 1 || !parsed->value("task")) {
        return fail(kExitUsage, "run-shard takes a batch folder and --task N (mkb run-shard --help)");
    }
    const int index = parsed->integer("task");
    const fs::path dir = parsed->positionals[0];
    auto batch = cluster::readBatch(dir, true);
    if (!batch) {
        return fail(kExitBadInput, "run-shard: " + batch.error().message);
    }
    if (index >= static_cast<int>(batch->tasks.size())) {
        return fail(kExitUsage, "run-shard: batch " + batch->name + " has " + std::to_string(batch->tasks.size()) +
                                    " task(s); there is no task " + std::to_string(index));
    }
    const cluster::TaskSpec& task = batch->tasks[index];
    const cluster::SharedFolder folder{fs::absolute(dir).parent_path().parent_path()};
    const char* arrayJob = std::getenv("SLURM_ARRAY_JOB_ID");
    const std::string jobId = arrayJob && *arrayJob ? std::string(arrayJob) + "_" + std::to_string(index) : "";
    fs::path scratch;
    if (auto given = parsed->value("scratch")) {
        scratch = *given;
    } else {
        const char* base = std::getenv("SLURM_TMPDIR");
        base = base && *base ? base : std::getenv("TMPDIR");
        scratch = fs::path(base && *base ? base : "/tmp");
    }
    scratch /= "mkb-shard-" + task.shardId;
    const fs::path privateStore = scratch / "private.sqlite";
    struct RemoveScratch {
        fs::path path;
        ~RemoveScratch() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    } removeScratch{scratch};
    if (Status seeded = cluster::seedPrivateStore(privateStore, task); !seeded) {
        return fail(kExitStore, "run-shard: " + seeded.error().message);
    }
    std::cerr << "mkb run-shard: " << task.coordinate << " (batch " << batch->name << ", task " << index
              << (jobId.empty() ? std::string() : ", slurm job " + jobId) << ")\n";

    // The trial runs as `mkb run` runs it, restricted to this one coordinate and recorded in the private store.
    std::vector<std::string> runArgs = batch->runArgs;
    for (const std::string& word :
         {std::string("--store"), privateStore.string(), std::string("--only"), task.coordinate,
          std::string("--no-retime"), std::string("--workspaces"), (folder.work() / task.shardId).string(),
          std::string("--progress"), std::string("text")}) {
        runArgs.push_back(word);
    }
    const Command* run = nullptr;
    for (const Command& command : commands()) {
        run = command.name == "run" ? &command : run;
    }
    if (!run) {
        return fail(kExitUsage, "run-shard: this mkb has no run verb");
    }
    const int ran = run->run(runArgs);
    if (interruptRequested().load()) {
        return fail(kExitInterrupted, "run-shard: stopped (scancel or Ctrl+C); no shard written");
    }
    auto shard = cluster::collectShard(privateStore, task, jobId, folder);
    if (!shard) {
        return fail(kExitInfrastructure,
                    "run-shard: " + shard.error().message + " (mkb run exited " + std::to_string(ran) + ")");
    }
    std::cerr << "mkb run-shard: wrote " << (folder.shards() / cluster::shardFileName(*shard)).string() << " ("
              << toString(shard->outcome.status) << ")\n";
    return kExitOk;
}

const bool registered = registerCommand(
    {"run-shard", "run one trial of a Slurm batch on its node (job entry)", runShardHelp(), runRunShard});

} // namespace
} // namespace mkb::cli
