// The processes of this machine as /proc shows them (Linux): each one's parent, group and start time, and the
// descendants of one process, so a child's whole tree can be found and killed.
#pragma once

#include <map>
#include <sys/types.h>

namespace mkb {

/// A process's parent, group and start time (in clock ticks since boot: with the pid, it names one process).
struct ProcessEntry {
    pid_t parent = 0;
    pid_t group = 0;
    unsigned long long startTime = 0;
};

/// Every process in /proc; empty where /proc is unavailable.
std::map<pid_t, ProcessEntry> processTable();

/// All descendants of root in the table (children, grandchildren, ...).
std::map<pid_t, ProcessEntry> descendantsOf(pid_t root, const std::map<pid_t, ProcessEntry>& table);

} // namespace mkb
