// Reading /proc/<pid>/stat for every process: the parent, group and start time fields, past the command name.
#include "core/util/process_table.h"

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace mkb {
namespace {

std::optional<ProcessEntry> readProcessEntry(const char* statPath) {
    const int fd = ::open(statPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return std::nullopt;
    }
    char text[1024];
    const ssize_t got = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (got <= 0) {
        return std::nullopt;
    }
    text[got] = '\0';
    const char* close = std::strrchr(text, ')'); // the command name may hold spaces and parentheses
    ProcessEntry entry;
    char state = 0;
    int parent = 0;
    int group = 0;
    if (!close ||
        std::sscanf(close + 1, " %c %d %d %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu", &state,
                    &parent, &group, &entry.startTime) != 4) {
        return std::nullopt;
    }
    entry.parent = parent;
    entry.group = group;
    return entry;
}

} // namespace

std::map<pid_t, ProcessEntry> processTable() {
    std::map<pid_t, ProcessEntry> table;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc", ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        if (auto entry = readProcessEntry((it->path() / "stat").c_str())) {
            table[static_cast<pid_t>(std::stol(name))] = *entry;
        }
    }
    return table;
}

std::map<pid_t, ProcessEntry> descendantsOf(pid_t root, const std::map<pid_t, ProcessEntry>& table) {
    std::map<pid_t, ProcessEntry> found;
    std::vector<pid_t> frontier = {root};
    while (!frontier.empty()) {
        const pid_t parent = frontier.back();
        frontier.pop_back();
        for (const auto& [pid, entry] : table) {
            if (entry.parent == parent && found.emplace(pid, entry).second) {
                frontier.push_back(pid);
            }
        }
    }
    return found;
}

} // namespace mkb
