// Running one short external command (sbatch, squeue, sacct, scontrol, scancel) and capturing what it printed.
#pragma once

#include "core/util/result.h"

#include <map>
#include <string>
#include <vector>

namespace mkb::cluster {

struct CommandOutput {
    int exitCode = -1; // the exit status; -1 when it was killed by a signal or by the time limit
    bool timedOut = false;
    std::string out;
    std::string err;
};

/// Runs argv[0] (searched on PATH) with argv and extra environment variables, stdin from /dev/null, and waits at
/// most timeoutS seconds (then kills its process tree). Fails only when it cannot be started at all; the error names
/// the program and says what to install or put on PATH.
Result<CommandOutput> runCommand(const std::vector<std::string>& argv, double timeoutS,
                                 const std::map<std::string, std::string>& environment = {});

/// "sbatch --parsable …" for messages: the words joined by spaces, long ones cut.
std::string commandInWords(const std::vector<std::string>& argv);

} // namespace mkb::cluster
