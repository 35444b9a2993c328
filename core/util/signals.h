// Signals that can reach only a process or process group we started: 0, -1 and 1 never name one of ours.
#pragma once

#include <sys/types.h>

namespace mkb {

/// Sends `signal` to the process `pid`. Refuses (returns false, sends nothing) when pid <= 1: kill(0, …)
/// would signal our own process group, kill(-1, …) every process we may signal, and pid 1 is init.
bool signalProcess(pid_t pid, int signal);

/// Sends `signal` to the process group led by `group`, with the same refusal for group <= 1.
bool signalGroup(pid_t group, int signal);

} // namespace mkb
