// Signals a test's child QProcess only while it still runs: a finished QProcess reports pid 0, and
// kill(0, …) would signal the test runner's own process group (ctest, the CI shell). Finds the grader server that a
// test's own mkb started for a pool device, so a test can kill that server and nothing else.
#pragma once

#include "core/util/signals.h"

#include <QDir>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/types.h>

namespace mkbtest {

inline bool signalIfRunning(QProcess& process, int signal) {
    return process.state() == QProcess::Running && mkb::signalProcess(pid_t(process.processId()), signal);
}

/// The grader server that mkb (pid `parent`) started for a pool device: its direct child whose environment names the
/// device (MKB_POOL_DEVICE). Only a child of `parent` is ever returned; -1 when there is none (or `parent` is not a
/// real process id).
inline pid_t poolServerOf(pid_t parent, const std::string& device) {
    if (parent <= 1) {
        return -1;
    }
    const QStringList entries = QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString& entry : entries) {
        bool numeric = false;
        const pid_t pid = static_cast<pid_t>(entry.toInt(&numeric));
        if (!numeric || pid <= 1) {
            continue;
        }
        std::ifstream statFile("/proc/" + entry.toStdString() + "/stat");
        const std::string stat((std::istreambuf_iterator<char>(statFile)), std::istreambuf_iterator<char>());
        const std::size_t close = stat.rfind(')');
        if (close == std::string::npos) {
            continue;
        }
        std::istringstream fields(stat.substr(close + 1));
        std::string state;
        long ppid = 0;
        fields >> state >> ppid;
        if (ppid != parent) {
            continue;
        }
        std::ifstream environFile("/proc/" + entry.toStdString() + "/environ");
        for (std::string variable; std::getline(environFile, variable, '\0');) {
            if (variable == "MKB_POOL_DEVICE=" + device) {
                return pid;
            }
        }
    }
    return -1;
}

} // namespace mkbtest
