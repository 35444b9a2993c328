// Talking to Slurm through its own commands: sbatch to submit job arrays, squeue/sacct/scontrol to follow them.
#pragma once

#include "core/util/result.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb::cluster {

/// How the coordinator asks Slurm for jobs; every field maps to one sbatch option.
struct SlurmSettings {
    std::string partition;                          // --partition; "" = the cluster's default
    std::string gpuRequest = "--gres=gpu:1";        // what one job asks for its GPU; "" on clusters without GRES
    std::string timeLimit;                          // --time; "" = derived from the budget by the caller
    std::vector<std::string> extraArgs;             // --slurm-args, split into words, passed to sbatch as they are
    std::map<std::string, std::string> environment; // for the Slurm commands themselves (e.g. SLURM_CONF)
    double commandTimeoutS = 60;                    // a Slurm command that takes longer counts as failed
};

/// A job's state as the coordinator needs it. Slurm's own name is kept beside it for messages and the GUI.
enum class JobPhase {
    Queued,  // PENDING, CONFIGURING, REQUEUED, SUSPENDED, RESIZING
    Running, // RUNNING, COMPLETING, STAGE_OUT, SIGNALING
    Ended,   // any final state: COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, ...
    Unknown, // Slurm no longer knows the job (purged from its memory, accounting off)
};

const char* toString(JobPhase phase);
/// Slurm's state word ("RUNNING", "CANCELLED by 0", "COMPLETING+") → the phase; unknown words count as Ended.
JobPhase phaseOfSlurmState(const std::string& state);

struct JobState {
    JobPhase phase = JobPhase::Unknown;
    std::string slurmState; // "PENDING", "COMPLETED", …, "" when unknown
};

/// A job squeue lists: "<array>_<task>", its state, and the command (the batch script) it runs.
struct LiveJob {
    std::string id;
    JobState state;
    std::string command;
};

/// squeue -h -r -o '%i|%T|%o' lines → jobs; lines not of that form are ignored.
std::vector<LiveJob> parseLiveJobs(const std::string& out);

/// A job array as sbatch submits it: tasks 0..count-1 of one batch script.
struct ArraySubmission {
    std::filesystem::path script;
    int count = 0;
    std::string jobName;           // --job-name, shared by every job of a coordinator (squeue --name finds them)
    std::string outputPattern;     // --output, e.g. DIR/logs/%A_%a.out
    std::filesystem::path workDir; // --chdir
};

/// "12345" or "12345;cluster" (sbatch --parsable) → "12345"; the error quotes what sbatch printed.
Result<std::string> parseSbatchParsable(const std::string& out);
/// Lines "ID|STATE" (squeue -h -r -o '%i|%T', sacct -n -P -X -o JobID,State) → states by job id. Lines that are not
/// of that form are ignored; an array's summary row ("123_[4-9]") is expanded when the range is given.
std::map<std::string, JobState> parseStateLines(const std::string& out);
/// scontrol show job -o output → the state of each job it names (JobId=… ArrayJobId=… ArrayTaskId=… JobState=…).
std::map<std::string, JobState> parseScontrolJobs(const std::string& out);
/// Slurm's state word without its decorations: "CANCELLED by 0" → "CANCELLED", "COMPLETING+" → "COMPLETING".
std::string stateWord(const std::string& slurmState);

/// The sbatch command line for an array (exposed for tests and for the docs' example).
std::vector<std::string> sbatchCommand(const SlurmSettings& settings, const ArraySubmission& array);

/// The Slurm commands, run for real. Each error names the command, what it printed and what to check.
class SlurmClient {
public:
    explicit SlurmClient(SlurmSettings settings) : settings_(std::move(settings)) {}
    virtual ~SlurmClient() = default;

    /// Submits the array; returns the array's job id (task i is "<id>_<i>").
    virtual Result<std::string> submit(const ArraySubmission& array);
    /// The jobs Slurm is still holding under jobName (squeue), array tasks one by one, with their batch script.
    /// Fails when squeue fails: then nothing can be concluded about any job.
    virtual Result<std::vector<LiveJob>> liveJobs(const std::string& jobName);
    /// Final states of jobs squeue no longer lists: sacct, or scontrol where accounting is off. A job neither knows
    /// (purged from slurmctld's memory) is Unknown.
    virtual std::map<std::string, JobState> pastStates(const std::vector<std::string>& jobIds);
    const SlurmSettings& settings() const { return settings_; }

private:
    SlurmSettings settings_;
    bool accountingOff_ = false; // sacct said accounting is disabled: use scontrol from then on
};

} // namespace mkb::cluster
