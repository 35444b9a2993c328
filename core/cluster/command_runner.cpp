// Running one short external command for the Slurm client through the child-process primitive.
#include "core/cluster/command_runner.h"

#include "core/util/child_process.h"

namespace mkb::cluster {

std::string commandInWords(const std::vector<std::string>& argv) {
    std::string words;
    for (const std::string& word : argv) {
        words += (words.empty() ? "" : " ") + (word.size() > 80 ? word.substr(0, 77) + "..." : word);
    }
    return words;
}

Result<CommandOutput> runCommand(const std::vector<std::string>& argv, double timeoutS,
                                 const std::map<std::string, std::string>& environment) {
    if (argv.empty()) {
        return makeError("runCommand: no program given");
    }
    ChildSpec spec;
    spec.argv = argv;
    spec.setEnvironment = environment;
    spec.whatToDo = "install Slurm's client commands, or put them on PATH";
    auto ran = runChild(spec, timeoutS);
    if (!ran) {
        return ran.error();
    }
    CommandOutput output;
    output.timedOut = ran->timedOut;
    output.exitCode = !ran->timedOut && ran->status.exited() ? ran->status.code : -1;
    output.out = std::move(ran->out);
    output.err = std::move(ran->err);
    return output;
}

} // namespace mkb::cluster
