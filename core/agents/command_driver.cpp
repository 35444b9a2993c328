// Running a terminal agent in its own process group under the wall clock, and serving its submissions over a socket.
#include "core/agents/command_driver.h"

#include "core/agents/workspace.h"
#include "core/util/child_process.h"
#include "core/util/json_input.h"
#include "core/util/shell_words.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace mkb {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void replaceAll(std::string& text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
}

/// Reads one '\n'-terminated line from fd within the deadline; the line excludes the newline.
Result<std::string> readLine(int fd, std::size_t maxBytes, double timeoutS) {
    const auto start = Clock::now();
    std::string line;
    char buffer[65536];
    while (true) {
        const double left = timeoutS - secondsSince(start);
        if (left <= 0) {
            return makeError("timed out after " + std::to_string(static_cast<int>(timeoutS)) + " s");
        }
        pollfd item{fd, POLLIN, 0};
        const int ready = ::poll(&item, 1, static_cast<int>(std::min(left, 0.5) * 1000) + 1);
        if (ready < 0 && errno != EINTR) {
            return makeError(std::string("poll failed: ") + std::strerror(errno));
        }
        if (ready <= 0) {
            continue;
        }
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (got <= 0) {
            return makeError("the other side closed the connection before a full line");
        }
        const char* end = static_cast<const char*>(std::memchr(buffer, '\n', static_cast<std::size_t>(got)));
        line.append(buffer, end ? static_cast<std::size_t>(end - buffer) : static_cast<std::size_t>(got));
        if (end) {
            return line;
        }
        if (line.size() > maxBytes) {
            return makeError("the message is over " + std::to_string(maxBytes) + " bytes");
        }
    }
}

bool writeAll(int fd, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (wrote < 0 && errno == EINTR) {
            continue;
        }
        if (wrote <= 0) {
            return false;
        }
        done += static_cast<std::size_t>(wrote);
    }
    return true;
}

std::string newSocketPath() {
    static std::atomic<int> counter{0};
    const std::string name = "mkb-submit-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".sock";
    std::error_code ec;
    fs::path dir = fs::temp_directory_path(ec);
    if (ec || (dir / name).string().size() >= sizeof(sockaddr_un::sun_path)) {
        dir = "/tmp";
    }
    return (dir / name).string();
}

/// A listening Unix socket, removed on destruction.
class SubmitListener {
public:
    ~SubmitListener() {
        if (fd_ >= 0) {
            ::close(fd_);
            ::unlink(path_.c_str());
        }
    }
    Status open(const std::string& path) {
        path_ = path;
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd_ < 0) {
            return makeError(std::string("cannot create the submit socket: ") + std::strerror(errno));
        }
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
        ::unlink(path.c_str());
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd_, 8) != 0) {
            return makeError("cannot listen on the submit socket " + path + ": " + std::strerror(errno));
        }
        ::chmod(path.c_str(), 0600);
        return Ok{};
    }
    int fd() const { return fd_; }

private:
    int fd_ = -1;
    std::string path_;
};

void serveOneSubmission(int client, SubmissionGate& gate, int maxKernelBytes) {
    const std::size_t limit = static_cast<std::size_t>(maxKernelBytes) * 8 + (1u << 20);
    auto line = readLine(client, limit, 60);
    SubmitOutcome outcome;
    if (!line) {
        outcome.reportText = "mkb submit: bad request (" + line.error().message + "); nothing was graded";
    } else {
        nlohmann::json request = parseJsonInputOrDiscarded<nlohmann::json>(*line);
        if (request.is_discarded() || !request.is_object() || !request.contains("kernel") ||
            !request["kernel"].is_string()) {
            outcome.reportText = "mkb submit: the request must be a JSON object with a \"kernel\" string; nothing "
                                 "was graded";
        } else {
            outcome = gate.submit(request["kernel"].get<std::string>());
        }
    }
    if (!outcome.counted && !outcome.verdict) {
        outcome.submissionsLeft = gate.submissionsLeft();
        outcome.secondsLeft = gate.secondsLeft();
    }
    writeAll(client, submitReplyJson(outcome) + "\n");
    ::close(client);
}

void readUsage(const fs::path& file, Usage& usage) {
    auto text = readFile(file, 1u << 20); // the agent writes it: a FIFO or a link to /dev/zero must not stall the run
    if (!text) {
        return;
    }
    nlohmann::json json = parseJsonInputOrDiscarded<nlohmann::json>(*text);
    if (!json.is_object()) {
        return;
    }
    auto integer = [&](const char* key, std::optional<std::int64_t>& into) {
        if (json.contains(key) && json[key].is_number_integer()) {
            into = json[key].get<std::int64_t>();
        }
    };
    integer("input_tokens", usage.inputTokens);
    integer("cache_tokens", usage.cacheTokens);
    integer("output_tokens", usage.outputTokens);
    if (json.contains("cost_usd") && json["cost_usd"].is_number()) {
        usage.costUsd = json["cost_usd"].get<double>();
    }
}

class CommandDriver final : public AgentDriver {
public:
    explicit CommandDriver(CommandSettings settings) : settings_(std::move(settings)) {}

    std::string name() const override { return "command"; }

    AttemptResult attempt(const AttemptTask& task, SubmissionGate& gate, const std::atomic<bool>& cancel) override {
        const auto started = Clock::now();
        AttemptResult result;
        const WorkspaceLayout layout = workspaceLayout(task.workspace, task.problem);
        const std::string submitCommand = shellQuoted(settings_.mkb.string()) + " submit";
        const fs::path submitScript = task.workspace / "submit";
        if (Status written = writeFileAtomically(submitScript, "#!/bin/sh\n# Grades ./kernel.py through mkb run.\n"
                                                               "exec " +
                                                                   submitCommand + " \"$@\"\n");
            !written) {
            result.error = written.error().message;
            result.infrastructureError = true;
            return result;
        }
        ::chmod(submitScript.c_str(), 0755);

        SubmitListener listener;
        const std::string socketPath = newSocketPath();
        if (Status opened = listener.open(socketPath); !opened) {
            result.error = opened.error().message;
            result.infrastructureError = true;
            return result;
        }

        const std::string logPath = (task.workspace / ".agent.log").string();
        ChildSpec spec;
        spec.argv = {"/bin/sh", "-c",
                     expandCommandLine(settings_.command, task.workspace, layout.instruction, submitCommand)};
        spec.setEnvironment = {{kSubmitSocketVariable, socketPath}, {"MKB_WORKSPACE", task.workspace.string()}};
        spec.workingDirectory = task.workspace;
        spec.output = ChildStream::toFile(logPath);
        spec.error = ChildStream::sameAsOutput();
        spec.dieWithParent = true; // an agent never outlives a killed mkb run
        spec.role = "the agent";
        auto spawned = ChildProcess::spawn(spec);
        if (!spawned) {
            result.error = spawned.error().message;
            result.infrastructureError = true;
            return result;
        }
        ChildProcess& agent = *spawned;

        std::vector<std::thread> handlers;
        while (!agent.poll()) {
            if (cancel.load()) {
                agent.kill(settings_.killGraceSeconds);
                result.error = "interrupted";
                break;
            }
            if (secondsSince(started) >= task.budget.wallSeconds) {
                agent.kill(settings_.killGraceSeconds);
                result.timedOut = true;
                result.error = "the agent was killed at the wall-clock limit of " +
                               std::to_string(static_cast<long>(task.budget.wallSeconds)) + " s";
                break;
            }
            pollfd item{listener.fd(), POLLIN, 0};
            if (::poll(&item, 1, 50) > 0) {
                const int client = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
                if (client >= 0) {
                    const int flags = ::fcntl(client, F_GETFL);
                    ::fcntl(client, F_SETFL, flags & ~O_NONBLOCK);
                    handlers.emplace_back(serveOneSubmission, client, std::ref(gate), task.budget.maxKernelBytes);
                }
            }
        }
        const ExitStatus status = agent.kill(); // leftovers of the group (background jobs the agent started)
        for (std::thread& handler : handlers) {
            handler.join();
        }
        if (!result.timedOut && result.error.empty()) {
            if (status.exited() && status.code != 0) {
                result.error = "the agent exited with status " + std::to_string(status.code) +
                               (status.code == 127 ? " (command not found?)" : "") + "; see " + logPath;
            } else if (status.signal != 0) {
                result.error = "the agent died of signal " + std::to_string(status.signal) + "; see " + logPath;
            }
        }
        const WorkspaceHarvest harvest = harvestWorkspace(task);
        result.finalKernel = harvest.kernel;
        result.skill = harvest.skill;
        readUsage(task.workspace / "usage.json", result.usage);
        result.usage.agentSeconds = secondsSince(started);
        return result;
    }

private:
    CommandSettings settings_;
};

} // namespace

Result<CommandSettings> parseCommandSettings(const nlohmann::json& settings) {
    CommandSettings parsed;
    const std::string where = "driver 'command' settings: ";
    for (auto it = settings.begin(); it != settings.end(); ++it) {
        if (it.key() == "command") {
            if (!it.value().is_string() || trimmed(it.value().get<std::string>()).empty()) {
                return makeError(where + "'command' must be a non-empty command line");
            }
            parsed.command = it.value().get<std::string>();
        } else if (it.key() == "mkb") {
            if (!it.value().is_string()) {
                return makeError(where + "'mkb' must be the path of the mkb binary");
            }
            parsed.mkb = it.value().get<std::string>();
        } else if (it.key() == "kill_grace_s") {
            if (!it.value().is_number() || it.value().get<double>() < 0) {
                return makeError(where + "'kill_grace_s' must be a number of seconds >= 0");
            }
            parsed.killGraceSeconds = it.value().get<double>();
        } else {
            return makeError(where + "unknown key '" + it.key() + "' (known: command, mkb, kill_grace_s)");
        }
    }
    if (parsed.command.empty()) {
        return makeError(where + "'command' is required, e.g. {\"command\": \"my-agent --task {instruction}\"}");
    }
    if (parsed.mkb.empty()) {
        std::error_code ec;
        parsed.mkb = fs::read_symlink("/proc/self/exe", ec);
        if (ec) {
            return makeError(where + "cannot find this mkb binary (/proc/self/exe); set 'mkb' to its path");
        }
    }
    return parsed;
}

std::string expandCommandLine(const std::string& command, const fs::path& workspace, const fs::path& instruction,
                              const std::string& submitCommand) {
    std::string line = command;
    replaceAll(line, "{workspace}", shellQuoted(workspace.string()));
    replaceAll(line, "{instruction}", shellQuoted(instruction.string()));
    replaceAll(line, "{submit}", submitCommand);
    return line;
}

std::string submitReplyJson(const SubmitOutcome& outcome) {
    nlohmann::json reply;
    reply["counted"] = outcome.counted;
    reply["graded"] = outcome.verdict.has_value();
    reply["passed"] = outcome.verdict && outcome.verdict->passed;
    reply["report"] = outcome.reportText;
    reply["submissions_left"] = outcome.submissionsLeft;
    reply["seconds_left"] = outcome.secondsLeft;
    return reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<SubmitReply> requestSubmission(const std::string& socketPath, const std::string& kernelSource, double timeoutS) {
    const std::string where = "mkb submit: ";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return makeError(where + "cannot create a socket: " + std::strerror(errno));
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socketPath.c_str(), sizeof(address.sun_path) - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        return makeError(where + "cannot reach the running attempt at " + socketPath + " (" + why +
                         "); the attempt has ended or this shell was not started by mkb run");
    }
    nlohmann::json request;
    request["kernel"] = kernelSource;
    if (!writeAll(fd, request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) {
        ::close(fd);
        return makeError(where + "the attempt at " + socketPath + " closed the connection while sending the kernel");
    }
    auto line = readLine(fd, 64u << 20, timeoutS);
    ::close(fd);
    if (!line) {
        return makeError(where + "no reply from the attempt at " + socketPath + ": " + line.error().message);
    }
    nlohmann::json json = parseJsonInputOrDiscarded<nlohmann::json>(*line);
    if (!json.is_object()) {
        return makeError(where + "the attempt at " + socketPath + " replied with something that is not JSON");
    }
    SubmitReply reply;
    reply.counted = json.value("counted", false);
    reply.graded = json.value("graded", false);
    reply.passed = json.value("passed", false);
    reply.report = json.value("report", std::string());
    reply.submissionsLeft = json.value("submissions_left", 0);
    reply.secondsLeft = json.value("seconds_left", 0.0);
    return reply;
}

Result<std::unique_ptr<AgentDriver>> makeCommandDriver(const nlohmann::json& settings) {
    auto parsed = parseCommandSettings(settings);
    if (!parsed) {
        return parsed.error();
    }
    return std::unique_ptr<AgentDriver>(std::make_unique<CommandDriver>(std::move(parsed).value()));
}

} // namespace mkb
