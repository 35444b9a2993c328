// Running one short external command with posix_spawnp, reading its stdout and stderr through poll().
#include "core/cluster/command_runner.h"

#include "core/util/signals.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mkb::cluster {

namespace {

double nowSeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

} // namespace

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
    std::vector<std::string> envStrings;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string text = *entry;
        if (environment.count(text.substr(0, text.find('='))) == 0) {
            envStrings.push_back(text);
        }
    }
    for (const auto& [key, value] : environment) {
        envStrings.push_back(key + "=" + value);
    }
    std::vector<char*> envp;
    for (std::string& entry : envStrings) {
        envp.push_back(entry.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> words = argv;
    std::vector<char*> args;
    for (std::string& word : words) {
        args.push_back(word.data());
    }
    args.push_back(nullptr);

    int outPipe[2] = {-1, -1};
    int errPipe[2] = {-1, -1};
    if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
        closeFd(outPipe[0]);
        closeFd(outPipe[1]);
        return makeError("cannot run " + argv[0] + ": no pipe (" + std::strerror(errno) + ")");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigset_t emptyMask;
    sigemptyset(&emptyMask);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &emptyMask);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t child = -1;
    const int spawnError = ::posix_spawnp(&child, args[0], &actions, &attributes, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    closeFd(outPipe[1]);
    closeFd(errPipe[1]);
    if (spawnError != 0) {
        closeFd(outPipe[0]);
        closeFd(errPipe[0]);
        return makeError("cannot run '" + argv[0] + "': " + std::strerror(spawnError) +
                         " (install Slurm's client commands, or put them on PATH)");
    }

    CommandOutput output;
    const double deadline = nowSeconds() + timeoutS;
    int fds[2] = {outPipe[0], errPipe[0]};
    std::string* sinks[2] = {&output.out, &output.err};
    while (fds[0] >= 0 || fds[1] >= 0) {
        const double left = deadline - nowSeconds();
        if (left <= 0) {
            output.timedOut = true;
            signalProcess(child, SIGKILL);
            break;
        }
        pollfd polled[2];
        for (int i = 0; i < 2; ++i) {
            polled[i] = {fds[i], POLLIN, 0};
        }
        const int ready = ::poll(polled, 2, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i] < 0 || (polled[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
                continue;
            }
            char buffer[4096];
            const ssize_t got = ::read(fds[i], buffer, sizeof buffer);
            if (got > 0) {
                sinks[i]->append(buffer, static_cast<std::size_t>(got));
            } else if (got == 0 || errno != EINTR) {
                closeFd(fds[i]);
            }
        }
    }
    closeFd(fds[0]);
    closeFd(fds[1]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    output.exitCode = !output.timedOut && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return output;
}

} // namespace mkb::cluster
