// Guarded kill/killpg: a pid that is not a real child's never turns into "our whole group".
#include "core/util/signals.h"

#include <csignal>

namespace mkb {

bool signalProcess(pid_t pid, int signal) {
    return pid > 1 && ::kill(pid, signal) == 0;
}

bool signalGroup(pid_t group, int signal) {
    return group > 1 && ::killpg(group, signal) == 0;
}

} // namespace mkb
