// Slurm's commands and their output: sbatch --parsable, squeue/sacct state lines, scontrol's one-line job records.
#include "core/cluster/slurm_client.h"

#include "core/cluster/command_runner.h"
#include "core/util/text.h"

#include <set>

namespace mkb::cluster {

namespace {

std::string trimmedText(std::string_view text) {
    return std::string(trimmed(text));
}

std::string firstLine(const std::string& text) {
    const std::string line = trimmedText(text.substr(0, text.find('\n')));
    return line.size() > 200 ? line.substr(0, 197) + "..." : line;
}

std::string failureOf(const std::vector<std::string>& argv, const CommandOutput& output) {
    const std::string said = firstLine(output.err.empty() ? output.out : output.err);
    if (output.timedOut) {
        return "'" + commandInWords(argv) + "' did not answer in time; is slurmctld up (scontrol ping)?";
    }
    return "'" + commandInWords(argv) + "' failed (exit " + std::to_string(output.exitCode) + ")" +
           (said.empty() ? "" : ": " + said);
}

/// "4-6,9" → {4, 5, 6, 9}; empty when it is not such a list.
std::vector<std::string> expandTaskRange(const std::string& range) {
    std::vector<std::string> tasks;
    for (const std::string& part : splitString(range, ',')) {
        const std::size_t dash = part.find('-');
        try {
            const std::string lowText = part.substr(0, dash);
            const std::string highText = dash == std::string::npos ? lowText : part.substr(dash + 1);
            const std::size_t percent = highText.find('%'); // "0-9%2" limits concurrency; the tasks are the same
            const int low = std::stoi(lowText);
            const int high = std::stoi(highText.substr(0, percent));
            for (int task = low; task <= high && high - low < 100000; ++task) {
                tasks.push_back(std::to_string(task));
            }
        } catch (const std::exception&) {
            return {};
        }
    }
    return tasks;
}

} // namespace

const char* toString(JobPhase phase) {
    switch (phase) {
    case JobPhase::Queued:
        return "queued";
    case JobPhase::Running:
        return "running";
    case JobPhase::Ended:
        return "ended";
    case JobPhase::Unknown:
        return "unknown";
    }
    return "unknown";
}

JobPhase phaseOfSlurmState(const std::string& state) {
    std::string word = trimmedText(state);
    word = word.substr(0, word.find_first_of(" +"));
    static const std::set<std::string> queued = {"PENDING",      "CONFIGURING", "REQUEUED", "REQUEUE_FED",
                                                 "REQUEUE_HOLD", "SUSPENDED",   "RESIZING", "RESV_DEL_HOLD"};
    static const std::set<std::string> running = {"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING"};
    if (word.empty()) {
        return JobPhase::Unknown;
    }
    if (queued.count(word)) {
        return JobPhase::Queued;
    }
    if (running.count(word)) {
        return JobPhase::Running;
    }
    return JobPhase::Ended;
}

Result<std::string> parseSbatchParsable(const std::string& out) {
    const std::string line = firstLine(out);
    const std::string id = line.substr(0, line.find(';'));
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
        return makeError("sbatch printed '" + line + "' where a job id was expected");
    }
    return id;
}

std::map<std::string, JobState> parseStateLines(const std::string& out) {
    std::map<std::string, JobState> states;
    for (const std::string& raw : splitString(out, '\n')) {
        const std::string line = trimmedText(raw);
        const std::size_t bar = line.find('|');
        if (bar == std::string::npos || bar == 0) {
            continue;
        }
        const std::string id = line.substr(0, bar);
        std::string state = line.substr(bar + 1);
        state = state.substr(0, state.find('|'));
        const JobState parsed{phaseOfSlurmState(state), trimmedText(state)};
        const std::size_t open = id.find("_[");
        if (open != std::string::npos && id.back() == ']') {
            for (const std::string& task : expandTaskRange(id.substr(open + 2, id.size() - open - 3))) {
                states[id.substr(0, open) + "_" + task] = parsed;
            }
            continue;
        }
        states[id] = parsed;
    }
    return states;
}

std::map<std::string, JobState> parseScontrolJobs(const std::string& out) {
    std::map<std::string, JobState> states;
    for (const std::string& raw : splitString(out, '\n')) {
        std::map<std::string, std::string> fields;
        for (const std::string& word : splitString(trimmedText(raw), ' ')) {
            const std::size_t equals = word.find('=');
            if (equals != std::string::npos) {
                fields.emplace(word.substr(0, equals), word.substr(equals + 1));
            }
        }
        if (!fields.count("JobId") || !fields.count("JobState")) {
            continue;
        }
        const JobState state{phaseOfSlurmState(fields["JobState"]), fields["JobState"]};
        const std::string array = fields.count("ArrayJobId") ? fields["ArrayJobId"] : "";
        const std::string task = fields.count("ArrayTaskId") ? fields["ArrayTaskId"] : "";
        if (array.empty() || task.empty()) {
            states[fields["JobId"]] = state;
            continue;
        }
        const std::vector<std::string> tasks = expandTaskRange(task);
        for (const std::string& one : tasks) {
            states[array + "_" + one] = state;
        }
    }
    return states;
}

std::vector<std::string> sbatchCommand(const SlurmSettings& settings, const ArraySubmission& array) {
    std::vector<std::string> argv = {"sbatch", "--parsable", "--array=0-" + std::to_string(array.count - 1),
                                     "--job-name=" + array.jobName, "--output=" + array.outputPattern};
    if (!array.workDir.empty()) {
        argv.push_back("--chdir=" + array.workDir.string());
    }
    if (!settings.partition.empty()) {
        argv.push_back("--partition=" + settings.partition);
    }
    if (!settings.gpuRequest.empty()) {
        argv.push_back(settings.gpuRequest);
    }
    if (!settings.timeLimit.empty()) {
        argv.push_back("--time=" + settings.timeLimit);
    }
    for (const std::string& word : settings.extraArgs) {
        argv.push_back(word);
    }
    argv.push_back(array.script.string());
    return argv;
}

Result<std::string> SlurmClient::submit(const ArraySubmission& array) {
    const std::vector<std::string> argv = sbatchCommand(settings_, array);
    auto output = runCommand(argv, settings_.commandTimeoutS, settings_.environment);
    if (!output) {
        return output.error();
    }
    if (output->exitCode != 0) {
        return makeError(failureOf(argv, *output) + " (check --partition, --slurm-args and the GPU request)");
    }
    return parseSbatchParsable(output->out);
}

std::vector<LiveJob> parseLiveJobs(const std::string& out) {
    std::vector<LiveJob> jobs;
    for (const std::string& raw : splitString(out, '\n')) {
        const std::vector<std::string> fields = splitString(trimmedText(raw), '|');
        if (fields.size() < 3 || fields[0].empty()) {
            continue;
        }
        LiveJob job;
        job.id = fields[0];
        job.state = JobState{phaseOfSlurmState(fields[1]), trimmedText(fields[1])};
        job.command = trimmedText(fields[2]);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

Result<std::vector<LiveJob>> SlurmClient::liveJobs(const std::string& jobName) {
    const std::vector<std::string> squeue = {"squeue", "-h", "-r", "--name=" + jobName, "-o", "%i|%T|%o"};
    auto live = runCommand(squeue, settings_.commandTimeoutS, settings_.environment);
    if (!live) {
        return live.error();
    }
    if (live->exitCode != 0) {
        return makeError(failureOf(squeue, *live));
    }
    return parseLiveJobs(live->out);
}

std::map<std::string, JobState> SlurmClient::pastStates(const std::vector<std::string>& jobIds) {
    std::map<std::string, JobState> found;
    if (jobIds.empty()) {
        return found;
    }
    std::string list;
    for (const std::string& id : jobIds) {
        list += (list.empty() ? "" : ",") + id;
    }
    if (!accountingOff_) {
        const std::vector<std::string> sacct = {"sacct", "-n", "-P", "-X", "-o", "JobID,State", "-j", list};
        auto accounted = runCommand(sacct, settings_.commandTimeoutS, settings_.environment);
        if (accounted && accounted->exitCode == 0) {
            const std::map<std::string, JobState> ended = parseStateLines(accounted->out);
            for (const std::string& id : jobIds) {
                auto it = ended.find(id);
                found[id] = it != ended.end() ? it->second : JobState{};
            }
            return found;
        }
        accountingOff_ = true; // "Slurm accounting storage is disabled": scontrol still remembers recent jobs
    }
    for (const std::string& id : jobIds) {
        const std::vector<std::string> scontrol = {"scontrol", "show", "job", "-o", id};
        auto shown = runCommand(scontrol, settings_.commandTimeoutS, settings_.environment);
        JobState state;
        if (shown && shown->exitCode == 0) {
            const std::map<std::string, JobState> parsed = parseScontrolJobs(shown->out);
            if (auto it = parsed.find(id); it != parsed.end()) {
                state = it->second;
            }
        }
        found[id] = state;
    }
    return found;
}

std::string stateWord(const std::string& slurmState) {
    const std::size_t start = slurmState.find_first_not_of(' ');
    if (start == std::string::npos) {
        return {};
    }
    const std::size_t end = slurmState.find_first_of(" +", start);
    return slurmState.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

} // namespace mkb::cluster
