// Signals a test's child QProcess only while it still runs: a finished QProcess reports pid 0, and
// kill(0, …) would signal the test runner's own process group (ctest, the CI shell).
#pragma once

#include "core/util/signals.h"

#include <QProcess>

namespace mkbtest {

inline bool signalIfRunning(QProcess& process, int signal) {
    return process.state() == QProcess::Running && mkb::signalProcess(pid_t(process.processId()), signal);
}

} // namespace mkbtest
