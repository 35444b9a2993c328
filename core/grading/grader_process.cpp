// Spawning and talking to the grader server: posix_spawn into its own process group, poll()-driven non-blocking
// pipes, bounded lines, deadlines, and killing the whole process tree on any failure.
// Longer than 600 lines because spawning, the pipes, the deadlines and killing the tree are one process lifecycle
// sharing the process's descriptors and state.
#include "core/grading/grader_process.h"

#include "core/grading/grade_request.h"
#include "core/grading/retime_request.h"
#include "core/grading/verdict_json.h"
#include "core/util/json_input.h"
#include "core/util/paths.h"
#include "core/util/signals.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <poll.h>
#include <set>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace mkb {
namespace {

using Json = nlohmann::ordered_json;

double nowSeconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ignoreSigpipeOnce() {
    static std::once_flag once;
    std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

std::string formatSeconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, seconds < 10 ? "%.1f" : "%.0f", seconds);
    return text;
}

std::string describeExit(int status) {
    if (WIFEXITED(status)) {
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        const char* name = ::strsignal(WTERMSIG(status));
        return "was killed by signal " + std::to_string(WTERMSIG(status)) +
               (name ? std::string(" (") + name + ")" : "");
    }
    return "stopped";
}

std::string printablePrefix(const std::string& text, std::size_t limit) {
    std::string out;
    for (char c : text.substr(0, limit)) {
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    }
    return text.size() > limit ? out + "…" : out;
}

/// Every process's parent and group, read from /proc (Linux). Empty where /proc is unavailable.
struct ProcessEntry {
    pid_t parent = 0;
    pid_t group = 0;
};
std::map<pid_t, ProcessEntry> processTable() {
    std::map<pid_t, ProcessEntry> table;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc", ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        auto stat = readFile(it->path() / "stat");
        if (!stat) {
            continue;
        }
        auto close = stat->rfind(')');
        if (close == std::string::npos) {
            continue;
        }
        char state = 0;
        int parent = 0;
        int group = 0;
        if (std::sscanf(stat->c_str() + close + 1, " %c %d %d", &state, &parent, &group) == 3) {
            table[static_cast<pid_t>(std::stoi(name))] = {parent, group};
        }
    }
    return table;
}

/// All descendants of root in the table (children, grandchildren, ...).
std::set<pid_t> descendantsOf(pid_t root, const std::map<pid_t, ProcessEntry>& table) {
    std::set<pid_t> found;
    std::vector<pid_t> frontier = {root};
    while (!frontier.empty()) {
        pid_t parent = frontier.back();
        frontier.pop_back();
        for (const auto& [pid, entry] : table) {
            if (entry.parent == parent && found.insert(pid).second) {
                frontier.push_back(pid);
            }
        }
    }
    return found;
}

/// A grade or retime request line with "device_lock": the lock file mkb holds around each grading of the device,
/// which the server's pre-started child holds while it warms up (DESIGN §11), so its warm-up never runs beside a
/// timing.
std::string withDeviceLock(const std::string& requestLine, const std::filesystem::path& lockPath) {
    Json line = Json::parse(requestLine, nullptr, false);
    if (!line.is_object()) {
        return requestLine;
    }
    line["device_lock"] = lockPath.string();
    return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace

std::string graderPythonFrom(const std::optional<std::string>& commandLineChoice) {
    if (commandLineChoice && !commandLineChoice->empty()) {
        return *commandLineChoice;
    }
    const char* fromEnvironment = std::getenv("MKB_PYTHON");
    return fromEnvironment && *fromEnvironment ? fromEnvironment : "python3";
}

GraderProcess::GraderProcess(GraderLaunch launch) : launch_(std::move(launch)) {
    ignoreSigpipeOnce();
}

GraderProcess::~GraderProcess() {
    stop();
}

Status GraderProcess::spawn() {
    int toChild[2] = {-1, -1};
    int fromChild[2] = {-1, -1};
    int errFromChild[2] = {-1, -1};
    if (::pipe2(toChild, O_CLOEXEC) != 0 || ::pipe2(fromChild, O_CLOEXEC) != 0 ||
        ::pipe2(errFromChild, O_CLOEXEC) != 0) {
        std::string reason = std::strerror(errno);
        for (int* pair : {toChild, fromChild, errFromChild}) {
            closeFd(pair[0]);
            closeFd(pair[1]);
        }
        return makeError("cannot create pipes for the grader: " + reason);
    }

    std::vector<std::string> argvStrings = {launch_.python};
    argvStrings.insert(argvStrings.end(), launch_.serverArgs.begin(), launch_.serverArgs.end());
    std::vector<char*> argv;
    for (auto& arg : argvStrings) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);

    std::filesystem::path packageDir = launch_.packageDir.empty() ? graderPackageDir() : launch_.packageDir;
    std::map<std::string, std::string> overrides;
    const char* oldPath = std::getenv("PYTHONPATH");
    overrides["PYTHONPATH"] = packageDir.string() + (oldPath && *oldPath ? std::string(":") + oldPath : "");
    overrides["PYTHONUNBUFFERED"] = "1";
    for (const auto& [key, value] : launch_.extraEnvironment) {
        overrides[key] = value;
    }
    std::vector<std::string> envStrings;
    for (char** entry = environ; entry && *entry; ++entry) {
        std::string text = *entry;
        if (overrides.count(text.substr(0, text.find('='))) == 0) {
            envStrings.push_back(text);
        }
    }
    for (const auto& [key, value] : overrides) {
        envStrings.push_back(key + "=" + value);
    }
    std::vector<char*> envp;
    for (auto& entry : envStrings) {
        envp.push_back(entry.data());
    }
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0);
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1);
    posix_spawn_file_actions_adddup2(&actions, errFromChild[1], 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigset_t emptyMask;
    sigemptyset(&emptyMask);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &emptyMask);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    pid_t child = -1;
    int spawnError = ::posix_spawnp(&child, argv[0], &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    closeFd(toChild[0]);
    closeFd(fromChild[1]);
    closeFd(errFromChild[1]);
    if (spawnError != 0) {
        closeFd(toChild[1]);
        closeFd(fromChild[0]);
        closeFd(errFromChild[0]);
        return makeError("cannot start the grader with '" + launch_.python + "': " + std::strerror(spawnError) +
                         " (name a Python with torch through --python or MKB_PYTHON)");
    }
    pid_ = child;
    ++spawnCount_;
    stdinFd_ = toChild[1];
    stdoutFd_ = fromChild[0];
    stderrFd_ = errFromChild[0];
    for (int fd : {stdinFd_, stdoutFd_, stderrFd_}) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    stdoutBuffer_.clear();
    stderrRing_.clear();
    return Ok{};
}

Status GraderProcess::start() {
    if (running()) {
        return Ok{};
    }
    if (Status spawned = spawn(); !spawned) {
        return spawned;
    }
    boundS_ = launch_.startupTimeoutS;
    double deadline = nowSeconds() + boundS_;
    auto line = readLine(deadline, nullptr, "ready line");
    if (!line) {
        return line.error();
    }
    Json hello = parseJsonInputOrDiscarded<Json>(*line);
    if (hello.is_discarded() || !hello.is_object() || hello.value("type", Json()) != "ready") {
        return failure("the grader's first line is not a ready message: '" + printablePrefix(*line, 80) + "'");
    }
    hello_ = {};
    if (hello.contains("protocol") && hello["protocol"].is_number_integer()) {
        hello_.protocol = hello["protocol"].get<int>();
    }
    if (hello_.protocol != 1) {
        return failure("the grader speaks protocol " + std::to_string(hello_.protocol) +
                       ", this mkb speaks 1; install matching versions");
    }
    if (hello.contains("grader_fingerprint") && hello["grader_fingerprint"].is_string()) {
        hello_.graderFingerprint = hello["grader_fingerprint"].get<std::string>();
    }
    if (hello.contains("torch") && hello["torch"].is_string()) {
        hello_.torchVersion = hello["torch"].get<std::string>();
    }
    return Ok{};
}

void GraderProcess::appendStderr(const char* data, std::size_t size) {
    stderrRing_.append(data, size);
    if (stderrRing_.size() > launch_.stderrKeepBytes) {
        stderrRing_.erase(0, stderrRing_.size() - launch_.stderrKeepBytes);
    }
}

std::string GraderProcess::lastStderrLine() const {
    auto lines = splitString(stderrRing_, '\n');
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        auto line = trimmed(*it);
        if (!line.empty()) {
            return printablePrefix(std::string(line), 300);
        }
    }
    return "";
}

std::string GraderProcess::stderrTail() const {
    return stderrRing_;
}

Error GraderProcess::failure(const std::string& what) {
    // Drain what stderr still holds so the message can quote the server's last words.
    if (stderrFd_ >= 0) {
        char chunk[65536];
        for (int round = 0; round < 64; ++round) {
            ssize_t got = ::read(stderrFd_, chunk, sizeof chunk);
            if (got <= 0) {
                break;
            }
            appendStderr(chunk, static_cast<std::size_t>(got));
        }
    }
    std::string last = lastStderrLine();
    killTree();
    return makeError(what + (last.empty() ? "" : "; grader's last stderr line: " + last));
}

Result<std::string> GraderProcess::readLine(double deadline, const std::atomic<bool>* cancel, const char* waitingFor) {
    char chunk[65536];
    std::size_t scanned = 0;
    while (true) {
        auto newline = stdoutBuffer_.find('\n', scanned);
        if (newline != std::string::npos) {
            std::string line = stdoutBuffer_.substr(0, newline);
            stdoutBuffer_.erase(0, newline + 1);
            if (line.size() > launch_.maxLineBytes) {
                return failure("the grader wrote a stdout line of " + std::to_string(line.size() >> 20) +
                               " MiB, over the " + std::to_string(launch_.maxLineBytes >> 20) + " MiB limit");
            }
            return line;
        }
        scanned = stdoutBuffer_.size();
        if (stdoutBuffer_.size() > launch_.maxLineBytes) {
            return failure("the grader wrote a stdout line longer than the " +
                           std::to_string(launch_.maxLineBytes >> 20) + " MiB limit");
        }
        if (cancel && cancel->load()) {
            killTree();
            return makeError("grading was stopped while waiting for the grader's " + std::string(waitingFor));
        }
        double remaining = deadline - nowSeconds();
        if (remaining <= 0) {
            return failure("the grader gave no " + std::string(waitingFor) + " within " + formatSeconds(boundS_) +
                           " s; killed its process tree");
        }
        pollfd fds[2] = {{stdoutFd_, POLLIN, 0}, {stderrFd_, POLLIN, 0}};
        int waitMs = static_cast<int>(std::min(remaining * 1000.0 + 1, cancel ? 100.0 : 1000.0));
        int ready = ::poll(fds, stderrFd_ >= 0 ? 2 : 1, waitMs);
        if (ready < 0) {
            if (errno == EINTR) {
                continue;
            }
            return failure(std::string("poll on the grader's pipes failed: ") + std::strerror(errno));
        }
        if (stderrFd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t got = ::read(stderrFd_, chunk, sizeof chunk);
            if (got > 0) {
                appendStderr(chunk, static_cast<std::size_t>(got));
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                closeFd(stderrFd_);
            }
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            bool endOfFile = false;
            for (int round = 0; round < 16; ++round) {
                ssize_t got = ::read(stdoutFd_, chunk, sizeof chunk);
                if (got > 0) {
                    stdoutBuffer_.append(chunk, static_cast<std::size_t>(got));
                    continue;
                }
                endOfFile = got == 0 || (errno != EAGAIN && errno != EINTR);
                break;
            }
            if (endOfFile && stdoutBuffer_.find('\n', scanned) == std::string::npos) {
                int status = 0;
                std::string how = "closed its stdout";
                for (int tries = 0; tries < 100; ++tries) {
                    pid_t done = ::waitpid(pid_, &status, WNOHANG);
                    if (done == pid_) {
                        how = describeExit(status);
                        pid_ = -pid_; // reaped: killTree must not wait for it again
                        break;
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
                return failure("the grader " + how + " while mkb waited for its " + std::string(waitingFor));
            }
        }
    }
}

Status GraderProcess::writeAll(const std::string& bytes, double deadline) {
    std::size_t written = 0;
    while (written < bytes.size()) {
        ssize_t got = ::write(stdinFd_, bytes.data() + written, bytes.size() - written);
        if (got > 0) {
            written += static_cast<std::size_t>(got);
            continue;
        }
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0 && errno == EAGAIN) {
            double remaining = deadline - nowSeconds();
            if (remaining <= 0) {
                return failure("the grader stopped reading its requests; killed it");
            }
            pollfd fd = {stdinFd_, POLLOUT, 0};
            ::poll(&fd, 1, static_cast<int>(std::min(remaining * 1000.0 + 1, 1000.0)));
            continue;
        }
        return failure(std::string("the grader closed its stdin (") + std::strerror(errno) + ")");
    }
    return Ok{};
}

Result<GraderReply> GraderProcess::exchange(const std::string& requestLine, const std::string& id, double timeoutS,
                                            const StageCallback& onStage, const std::atomic<bool>* cancel) {
    if (Status started = start(); !started) {
        return started.error();
    }
    boundS_ = timeoutS;
    double deadline = nowSeconds() + timeoutS;
    if (Status sent = writeAll(requestLine + "\n", deadline); !sent) {
        return sent.error();
    }
    GraderReply reply;
    while (true) {
        auto line = readLine(deadline, cancel, "reply");
        if (!line) {
            std::string stage = reply.lastStage.empty() ? "" : " (last stage heard: " + reply.lastStage + ")";
            return makeError(line.error().message + stage);
        }
        Json message = parseJsonInputOrDiscarded<Json>(*line);
        if (message.is_discarded()) {
            message = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(*line));
        }
        if (message.is_discarded() || !message.is_object()) {
            return makeError(failure("the grader wrote a line that is not a JSON object: '" +
                                     printablePrefix(*line, 80) + "'; killed it")
                                 .message);
        }
        auto type = message.find("type");
        if (type == message.end() || !type->is_string()) {
            return makeError(failure("the grader wrote a message without a string \"type\": '" +
                                     printablePrefix(*line, 80) + "'; killed it")
                                 .message);
        }
        auto messageId = message.find("id");
        bool ours = messageId != message.end() && messageId->is_string() && messageId->get<std::string>() == id;
        const std::string kind = type->get<std::string>();
        if (kind == "stage") {
            if (ours && message.contains("stage") && message["stage"].is_string()) {
                reply.lastStage = message["stage"].get<std::string>();
                if (onStage) {
                    onStage(reply.lastStage);
                }
            }
            continue;
        }
        if (kind == "verdict" || kind == "probe_result" || kind == "validation" || kind == "retime" ||
            kind == "error") {
            if (!ours && kind == "error" && (messageId == message.end() || messageId->is_null())) {
                reply.line = *line; // the server could not even read our id
                return reply;
            }
            if (!ours) {
                continue; // a late reply to an earlier request; ours is still to come
            }
            reply.line = *line;
            return reply;
        }
        return makeError(
            failure("the grader wrote a message of unknown type '" + printablePrefix(kind, 40) + "'; killed it")
                .message);
    }
}

Verdict GraderProcess::grade(const GradeRequest& request, const StageCallback& onStage,
                             const std::atomic<bool>* cancel) {
    std::optional<GpuLock> lock;
    if (launch_.lockDevice) {
        auto acquired = GpuLock::acquire(request.device, launch_.lock, cancel);
        if (!acquired) {
            return infrastructureVerdict(acquired.error().message, "load");
        }
        lock.emplace(std::move(acquired).value());
    }
    const std::string id = "g" + std::to_string(::getpid()) + "-" + std::to_string(++requestCounter_);
    double timeoutS = request.settings.timeoutS + launch_.deadlineMarginS;
    std::string lastStage;
    StageCallback trackStage = [&](const std::string& stage) {
        lastStage = stage;
        if (onStage) {
            onStage(stage);
        }
    };
    double began = nowSeconds();
    auto reply = exchange(withDeviceLock(gradeRequestJson(request, id), gpuLockPath(request.device, launch_.lock.dir)),
                          id, timeoutS, trackStage, cancel);
    if (!reply) {
        bool timedOut = nowSeconds() - began >= timeoutS - 0.05;
        Verdict verdict = infrastructureVerdict(reply.error().message, lastStage, timedOut);
        verdict.evalSeconds = nowSeconds() - began;
        return verdict;
    }
    Json message = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(reply->line));
    if (message.value("type", "") == "error") {
        std::string text = message.contains("message") && message["message"].is_string()
                               ? message["message"].get<std::string>()
                               : message.dump();
        return infrastructureVerdict("the grader refused the request: " + printablePrefix(text, 300), "load");
    }
    if (!message.contains("verdict")) {
        return infrastructureVerdict("the grader's verdict message has no \"verdict\" object; update the grader",
                                     lastStage);
    }
    auto verdict = verdictFromJson(message["verdict"].dump());
    if (!verdict) {
        return infrastructureVerdict(verdict.error().message, lastStage);
    }
    return std::move(verdict).value();
}

double GraderProcess::retimeDeadlineS(const RetimeRequest& request) const {
    return request.settings.timeoutS + request.retime.maxSeconds + 60 + launch_.deadlineMarginS;
}

Result<RetimingResult> GraderProcess::retime(const RetimeRequest& request, const StageCallback& onStage,
                                             const std::atomic<bool>* cancel) {
    if (request.kernels.size() < 2 || request.kernels.size() > 4) {
        return makeError("a re-timing takes 2 to 4 kernels, not " + std::to_string(request.kernels.size()));
    }
    std::optional<GpuLock> lock;
    if (launch_.lockDevice) {
        GpuLockOptions first = launch_.lock;
        first.priority = true; // a cell's arms are final: its re-timing goes before the gradings still queued
        auto acquired = GpuLock::acquire(request.device, first, cancel);
        if (!acquired) {
            return acquired.error();
        }
        lock.emplace(std::move(acquired).value());
    }
    const std::string id = "r" + std::to_string(::getpid()) + "-" + std::to_string(++requestCounter_);
    auto reply = exchange(withDeviceLock(retimeRequestJson(request, id), gpuLockPath(request.device, launch_.lock.dir)),
                          id, retimeDeadlineS(request), onStage, cancel);
    if (!reply) {
        return makeError("re-timing on " + request.device + " failed: " + reply.error().message);
    }
    Json message = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(reply->line));
    if (message.value("type", "") == "error") {
        std::string text = message.contains("message") && message["message"].is_string()
                               ? message["message"].get<std::string>()
                               : message.dump();
        return makeError("the grader refused the retime request: " + printablePrefix(text, 300));
    }
    if (!message.contains("retime") || !message["retime"].is_object()) {
        return makeError("the grader's retime reply has no \"retime\" object; update the grader (it speaks protocol " +
                         std::to_string(hello_.protocol) + " without re-timing)");
    }
    return retimingResultFromJson(message["retime"].dump());
}

Result<DeviceProbe> GraderProcess::probe(const std::string& device, const std::atomic<bool>* cancel) {
    std::optional<GpuLock> lock;
    if (launch_.lockDevice) {
        auto acquired = GpuLock::acquire(device, launch_.lock, cancel);
        if (!acquired) {
            return acquired.error();
        }
        lock.emplace(std::move(acquired).value());
    }
    const std::string id = "p" + std::to_string(::getpid()) + "-" + std::to_string(++requestCounter_);
    Json request = {{"type", "probe"}, {"id", id}, {"device", device}};
    auto reply = exchange(request.dump(), id, launch_.probeTimeoutS, {}, cancel);
    if (!reply) {
        return reply.error();
    }
    Json message = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(reply->line));
    if (message.value("type", "") == "error") {
        std::string text = message.contains("message") && message["message"].is_string()
                               ? message["message"].get<std::string>()
                               : message.dump();
        return makeError("the grader could not probe " + device + ": " + printablePrefix(text, 300));
    }
    if (!message.contains("device") || !message["device"].is_object()) {
        return makeError("the grader's probe_result has no \"device\" object; update the grader or report this");
    }
    auto probe = deviceProbeFromJson(message["device"].dump());
    if (probe) {
        probe->device = device;
    }
    return probe;
}

void GraderProcess::killTree() {
    if (pid_ > 0) {
        // Freeze the server's group first so nothing forks while the tree is collected, then kill every
        // descendant (and the groups they lead: evaluation children run in process groups of their own).
        signalGroup(pid_, SIGSTOP);
        std::set<pid_t> tree;
        for (int round = 0; round < 3; ++round) {
            std::set<pid_t> found = descendantsOf(pid_, processTable());
            bool grew = false;
            for (pid_t pid : found) {
                if (tree.insert(pid).second) {
                    signalProcess(pid, SIGSTOP);
                    grew = true;
                }
            }
            if (!grew) {
                break;
            }
        }
        auto table = processTable();
        for (pid_t pid : tree) {
            auto it = table.find(pid);
            if (it != table.end() && it->second.group == pid) {
                signalGroup(pid, SIGKILL);
            }
            signalProcess(pid, SIGKILL);
        }
        signalGroup(pid_, SIGKILL);
        signalProcess(pid_, SIGKILL);
    } else if (pid_ < -1) {
        signalGroup(-pid_, SIGKILL); // the server is gone; its group may still hold stragglers
    }
    reap();
}

void GraderProcess::reap() {
    if (pid_ > 0) {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
    }
    pid_ = -1;
    closeFd(stdinFd_);
    closeFd(stdoutFd_);
    closeFd(stderrFd_);
    stdoutBuffer_.clear();
}

void GraderProcess::stop() {
    if (pid_ <= 0) {
        if (pid_ < -1) {
            killTree();
        }
        return;
    }
    if (stdinFd_ >= 0) {
        const std::string shutdown = "{\"type\":\"shutdown\"}\n";
        [[maybe_unused]] ssize_t written = ::write(stdinFd_, shutdown.data(), shutdown.size());
        closeFd(stdinFd_);
    }
    for (int tries = 0; tries < 200; ++tries) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -pid_;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    killTree();
}

} // namespace mkb
