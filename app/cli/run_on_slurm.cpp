// From `mkb run`'s parsed options to a ClusterSettings and a SlurmClient, then the coordinator (core/cluster).
#include "app/cli/run_on_slurm.h"

#include "core/cluster/coordinator.h"
#include "core/util/shell_words.h"

#include <cmath>
#include <filesystem>

namespace mkb::cli {

namespace fs = std::filesystem;

const std::set<std::string>& slurmRunOptions() {
    static const std::set<std::string> options = {"executor",  "shared",     "partition", "slurm-args",
                                                  "slurm-gpu", "slurm-time", "slurm-poll"};
    return options;
}

namespace {

/// The options every job runs with: the user's own, minus what only the coordinator reads, with paths absolute
/// (a job starts in the shared folder, not where the coordinator was started).
std::vector<std::string> jobRunArgs(const ParsedArgs& args) {
    static const std::set<std::string> coordinatorOnly = {"store", "progress", "workspaces", "concurrency", "only"};
    static const std::set<std::string> paths = {"suite", "dsl-dir", "driver-config"};
    std::vector<std::string> words;
    for (const auto& [name, values] : args.options) {
        if (slurmRunOptions().count(name) || coordinatorOnly.count(name)) {
            continue;
        }
        for (const std::string& value : values) {
            std::error_code ec;
            const bool isPath = paths.count(name) || (name == "python" && value.find('/') != std::string::npos);
            words.push_back("--" + name);
            words.push_back(isPath ? fs::absolute(value, ec).string() : value);
        }
    }
    for (const std::string& flag : args.flags) {
        if (flag != "dry-run" && flag != "help") {
            words.push_back("--" + flag);
        }
    }
    return words;
}

} // namespace

Result<RunSummary> runOnSlurmFromArgs(const ParsedArgs& args, const RunSettings& settings, Store& store,
                                      ProgressSink& progress, const std::atomic<bool>& cancel) {
    if (!args.option("shared")) {
        return makeError("run: --executor slurm needs --shared DIR, a folder this host and every node can write");
    }
    std::error_code ec;
    cluster::ClusterSettings cluster;
    cluster.folder.root = fs::absolute(*args.option("shared"), ec);
    cluster.mkbPath = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec || cluster.mkbPath.empty()) {
        return makeError("run: cannot tell where this mkb is (/proc/self/exe); the jobs need its path");
    }
    cluster.runArgs = jobRunArgs(args);
    auto poll = args.doubleOption("slurm-poll", 5);
    if (!poll || *poll <= 0) {
        return makeError(poll ? "run: --slurm-poll takes a positive number of seconds" : poll.error().message);
    }
    cluster.pollSeconds = *poll;

    cluster::SlurmSettings slurm;
    slurm.partition = args.optionOr("partition", "");
    slurm.extraArgs = shellWords(args.optionOr("slurm-args", ""));
    const std::string gpu = args.optionOr("slurm-gpu", slurm.gpuRequest);
    slurm.gpuRequest = gpu == "none" ? "" : gpu;
    if (!slurm.gpuRequest.empty() && slurm.gpuRequest.rfind("--", 0) != 0) {
        return makeError("run: --slurm-gpu takes an sbatch option such as --gres=gpu:1 or --gpus=1, or none; got '" +
                         gpu + "'");
    }
    auto minutes = args.intOption("slurm-time", 0, 1, 60 * 24 * 365);
    if (!minutes) {
        return minutes.error();
    }
    // The attempt's wall clock, the final grading and a margin for the grader's start on a cold node.
    const int derived =
        static_cast<int>(std::ceil((settings.budget.wallSeconds + settings.grade.timeoutS + 600) / 60.0));
    slurm.timeLimit = std::to_string(*minutes > 0 ? *minutes : derived);
    cluster::SlurmClient client(slurm);
    return cluster::runOnSlurm(settings, cluster, store, client, progress, cancel);
}

} // namespace mkb::cli
