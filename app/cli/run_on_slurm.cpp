// From `mkb run`'s options to a ClusterSettings and a SlurmClient, then the coordinator (core/cluster).
#include "app/cli/run_on_slurm.h"

#include "core/cluster/coordinator.h"
#include "core/util/shell_words.h"

#include <cmath>
#include <filesystem>

namespace mkb::cli {

namespace fs = std::filesystem;

namespace {

std::string absolutePath(const std::string& path) {
    std::error_code ec;
    return fs::absolute(path, ec).string();
}

/// The options every job runs with: the user's own, minus what only the coordinator reads, with paths absolute
/// (a job starts in the shared folder, not where the coordinator was started).
std::vector<std::string> jobRunArgs(const RunOptions& options) {
    const RunOptions& defaults = runOptionDefaults();
    RunOptions job = options;
    job.store = job.workspaces = "";
    job.progress = defaults.progress;
    job.concurrency = defaults.concurrency;
    job.only.clear();
    job.dryRun = false;
    job.executor = defaults.executor;
    job.shared = job.partition = job.slurmArgs = job.slurmGpu = "";
    job.slurmTimeMinutes = defaults.slurmTimeMinutes;
    job.slurmPollSeconds = defaults.slurmPollSeconds;
    for (std::vector<std::string>* paths : {&job.suites, &job.dslDirs}) {
        for (std::string& path : *paths) {
            path = absolutePath(path);
        }
    }
    if (!job.driverConfig.empty()) {
        job.driverConfig = absolutePath(job.driverConfig);
    }
    if (job.python.find('/') != std::string::npos) {
        job.python = absolutePath(job.python); // a bare name is looked up on each node's PATH
    }
    return runArguments(job);
}

} // namespace

Result<RunSummary> runOnSlurm(const RunOptions& options, const RunSettings& settings, Store& store,
                              ProgressSink& progress, const std::atomic<bool>& cancel) {
    if (options.shared.empty()) {
        return makeError("run: --executor slurm needs --shared DIR, a folder this host and every node can write");
    }
    std::error_code ec;
    cluster::ClusterSettings cluster;
    cluster.folder.root = fs::absolute(options.shared, ec);
    cluster.mkbPath = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec || cluster.mkbPath.empty()) {
        return makeError("run: cannot tell where this mkb is (/proc/self/exe); the jobs need its path");
    }
    cluster.runArgs = jobRunArgs(options);
    cluster.pollSeconds = options.slurmPollSeconds;

    cluster::SlurmSettings slurm;
    slurm.partition = options.partition;
    slurm.extraArgs = shellWords(options.slurmArgs);
    const std::string gpu = options.slurmGpu.empty() ? slurm.gpuRequest : options.slurmGpu;
    slurm.gpuRequest = gpu == "none" ? "" : gpu;
    if (!slurm.gpuRequest.empty() && slurm.gpuRequest.rfind("--", 0) != 0) {
        return makeError("run: --slurm-gpu takes an sbatch option such as --gres=gpu:1 or --gpus=1, or none; got '" +
                         gpu + "'");
    }
    // The attempt's wall clock, the final grading and a margin for the grader's start on a cold node.
    const int derived =
        static_cast<int>(std::ceil((settings.budget.wallSeconds + settings.grade.timeoutS + 600) / 60.0));
    slurm.timeLimit = std::to_string(options.slurmTimeMinutes > 0 ? options.slurmTimeMinutes : derived);
    cluster::SlurmClient client(slurm);
    return cluster::runOnSlurm(settings, cluster, store, client, progress, cancel);
}

} // namespace mkb::cli
