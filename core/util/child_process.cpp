// Starting a child with fork and execve (the child reports a failed step back through a close-on-exec pipe), its
// pipes, its deadlines, and killing its tree as found in /proc.
#include "core/util/child_process.h"

#include "core/util/process_table.h"
#include "core/util/signals.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace mkb {
namespace {

using Clock = std::chrono::steady_clock;

void closeFd(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

int streamIndex(ChildPipe pipe) {
    return pipe == ChildPipe::Input ? 0 : pipe == ChildPipe::Output ? 1 : 2;
}

ExitStatus statusFrom(int raw) {
    ExitStatus status;
    if (WIFEXITED(raw)) {
        status.code = WEXITSTATUS(raw);
    } else if (WIFSIGNALED(raw)) {
        status.signal = WTERMSIG(raw);
    }
    return status;
}

std::string roleOf(const ChildSpec& spec) {
    return spec.role.empty() ? "'" + spec.argv.front() + "'" : spec.role;
}

Error startError(const ChildSpec& spec, const std::string& reason) {
    return makeError("cannot start " + roleOf(spec) + ": " + reason +
                     (spec.whatToDo.empty() ? "" : "; " + spec.whatToDo));
}

/// The first executable regular file named `name` in a directory of our PATH, as execvp would pick it.
std::optional<std::string> programOnPath(const std::string& name) {
    const char* path = std::getenv("PATH");
    const std::string directories = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= directories.size()) {
        std::size_t end = directories.find(':', start);
        if (end == std::string::npos) {
            end = directories.size();
        }
        const std::string directory = directories.substr(start, end - start);
        const std::string candidate = (directory.empty() ? "." : directory) + "/" + name;
        struct stat info {};
        if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        start = end + 1;
    }
    return std::nullopt;
}

std::vector<std::string> childEnvironment(const ChildSpec& spec) {
    std::vector<std::string> entries;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string text = *entry;
        const std::string name = text.substr(0, text.find('='));
        if (spec.setEnvironment.count(name) == 0 &&
            std::find(spec.unsetEnvironment.begin(), spec.unsetEnvironment.end(), name) ==
                spec.unsetEnvironment.end()) {
            entries.push_back(text);
        }
    }
    for (const auto& [name, value] : spec.setEnvironment) {
        if (std::find(spec.unsetEnvironment.begin(), spec.unsetEnvironment.end(), name) ==
            spec.unsetEnvironment.end()) {
            entries.push_back(name + "=" + value);
        }
    }
    return entries;
}

std::vector<char*> pointersTo(std::vector<std::string>& words) {
    std::vector<char*> pointers;
    for (std::string& word : words) {
        pointers.push_back(word.data());
    }
    pointers.push_back(nullptr);
    return pointers;
}

/// The step the child was at when it gave up, written to the report pipe with errno.
enum class FailedStep : int { Streams = 1, Directory = 2, Exec = 3 };
struct StartReport {
    FailedStep step;
    int error;
};

/// Everything the forked child needs, built before fork: after it only async-signal-safe calls are made.
struct ChildPlan {
    const char* program = nullptr;
    char* const* argv = nullptr;
    char* const* envp = nullptr;
    const char* workingDirectory = nullptr; // null: stay
    int sources[3] = {-1, -1, -1};          // what becomes fd 0, 1, 2; -1 for stderr: same as stdout
    int reportFd = -1;
    bool dieWithParent = false;
    pid_t parent = 0;
};

[[noreturn]] void giveUp(const ChildPlan& plan, FailedStep step) {
    const StartReport report{step, errno};
    [[maybe_unused]] ssize_t written = ::write(plan.reportFd, &report, sizeof report);
    ::_exit(127);
}

[[noreturn]] void becomeChild(ChildPlan plan) {
    ::setpgid(0, 0);
    if (plan.dieWithParent) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != plan.parent) {
            ::_exit(127); // the parent is already gone
        }
    }
    struct sigaction byDefault {};
    byDefault.sa_handler = SIG_DFL;
    sigemptyset(&byDefault.sa_mask);
    for (int signal : {SIGPIPE, SIGINT, SIGTERM}) {
        ::sigaction(signal, &byDefault, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Lift sources below 3 first, so that placing one stream never overwrites the source of another.
    for (int& source : plan.sources) {
        if (source >= 0 && source < 3 && (source = ::fcntl(source, F_DUPFD_CLOEXEC, 3)) < 0) {
            giveUp(plan, FailedStep::Streams);
        }
    }
    for (int stream = 0; stream < 3; ++stream) {
        const int source = stream == 2 && plan.sources[2] < 0 ? 1 : plan.sources[stream];
        if (::dup2(source, stream) < 0) {
            giveUp(plan, FailedStep::Streams);
        }
    }
    if (plan.workingDirectory && ::chdir(plan.workingDirectory) != 0) {
        giveUp(plan, FailedStep::Directory);
    }
    ::execve(plan.program, plan.argv, plan.envp);
    giveUp(plan, FailedStep::Exec);
}

/// Descriptors opened for one spawn, closed when it returns.
struct OpenedFds {
    std::vector<int> fds;
    ~OpenedFds() {
        for (int& fd : fds) {
            closeFd(fd);
        }
    }
    int keep(int fd) {
        fds.push_back(fd);
        return fd;
    }
    int release(int fd) {
        std::replace(fds.begin(), fds.end(), fd, -1);
        return fd;
    }
};

/// Blocks SIGPIPE in this thread while it lives, and swallows a SIGPIPE that a write raised meanwhile.
class SigpipeHeld {
public:
    SigpipeHeld() {
        sigemptyset(&pipeOnly_);
        sigaddset(&pipeOnly_, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &pipeOnly_, &before_);
        sigset_t pending;
        sigpending(&pending);
        wasPending_ = sigismember(&pending, SIGPIPE) == 1;
    }
    ~SigpipeHeld() {
        if (!wasPending_) {
            const timespec noWait{0, 0};
            while (::sigtimedwait(&pipeOnly_, nullptr, &noWait) < 0 && errno == EINTR) {
            }
        }
        ::pthread_sigmask(SIG_SETMASK, &before_, nullptr);
    }
    SigpipeHeld(const SigpipeHeld&) = delete;
    SigpipeHeld& operator=(const SigpipeHeld&) = delete;

private:
    sigset_t pipeOnly_;
    sigset_t before_;
    bool wasPending_ = false;
};

int pollMilliseconds(Deadline deadline) {
    const double left = secondsUntil(deadline);
    return left <= 0 ? 0 : static_cast<int>(std::min(left * 1000.0 + 1, 1e9));
}

} // namespace

Deadline deadlineIn(double seconds) {
    const double bounded = std::clamp(seconds, 0.0, 1e9); // a billion seconds is "never" and cannot overflow
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bounded));
}

double secondsUntil(Deadline deadline) {
    return std::chrono::duration<double>(deadline - Clock::now()).count();
}

std::string ExitStatus::describe() const {
    if (signal != 0) {
        const char* name = ::strsignal(signal);
        return "was killed by signal " + std::to_string(signal) + (name ? std::string(" (") + name + ")" : "");
    }
    if (code < 0) {
        return "ended (its status was collected elsewhere)";
    }
    return "exited with status " + std::to_string(code);
}

Result<ChildProcess> ChildProcess::spawn(const ChildSpec& spec) {
    if (spec.argv.empty() || spec.argv.front().empty()) {
        return makeError("cannot start a child process: no program given");
    }
    std::string program = spec.argv.front();
    if (program.find('/') == std::string::npos) {
        auto found = programOnPath(program);
        if (!found) {
            return startError(spec, "not found on PATH");
        }
        program = *found;
    }
    if (spec.input.kind == ChildStream::Kind::SameAsOutput || spec.output.kind == ChildStream::Kind::SameAsOutput) {
        return makeError("cannot start " + roleOf(spec) + ": only stderr can go where stdout goes");
    }
    std::vector<std::string> words = spec.argv;
    std::vector<std::string> environment = childEnvironment(spec);
    std::vector<char*> argv = pointersTo(words);
    std::vector<char*> envp = pointersTo(environment);
    const std::string workingDirectory = spec.workingDirectory.string();

    OpenedFds opened;
    ChildPlan plan;
    int ours[3] = {-1, -1, -1};
    const ChildStream* streams[3] = {&spec.input, &spec.output, &spec.error};
    const char* streamNames[3] = {"stdin", "stdout", "stderr"};
    for (int stream = 0; stream < 3; ++stream) {
        const ChildStream& how = *streams[stream];
        if (how.kind == ChildStream::Kind::Pipe) {
            int ends[2] = {-1, -1};
            if (::pipe2(ends, O_CLOEXEC) != 0) {
                return startError(spec, std::string("no pipe for its ") + streamNames[stream] + " (" +
                                            std::strerror(errno) + ")");
            }
            opened.keep(ends[0]);
            opened.keep(ends[1]);
            plan.sources[stream] = stream == 0 ? ends[0] : ends[1];
            ours[stream] = stream == 0 ? ends[1] : ends[0];
        } else if (how.kind == ChildStream::Kind::Null || how.kind == ChildStream::Kind::File) {
            const std::string path = how.kind == ChildStream::Kind::Null ? "/dev/null" : how.file.string();
            const int flags =
                stream == 0 ? O_RDONLY : O_WRONLY | (how.kind == ChildStream::Kind::File ? O_CREAT | O_TRUNC : 0);
            const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
            if (fd < 0) {
                return startError(spec, "cannot open " + path + " for its " + streamNames[stream] + " (" +
                                            std::strerror(errno) + ")");
            }
            plan.sources[stream] = opened.keep(fd);
        }
    }
    int report[2] = {-1, -1};
    if (::pipe2(report, O_CLOEXEC) != 0) {
        return startError(spec, std::string("no pipe to hear it start (") + std::strerror(errno) + ")");
    }
    opened.keep(report[0]);
    opened.keep(report[1]);
    plan.program = program.c_str();
    plan.argv = argv.data();
    plan.envp = envp.data();
    plan.workingDirectory = workingDirectory.empty() ? nullptr : workingDirectory.c_str();
    plan.reportFd = report[1];
    plan.dieWithParent = spec.dieWithParent;
    plan.parent = ::getpid();

    const pid_t pid = ::fork();
    if (pid == 0) {
        becomeChild(plan);
    }
    if (pid < 0) {
        return startError(spec, std::string("fork failed (") + std::strerror(errno) + ")");
    }
    ::setpgid(pid, pid); // also here, so that the group exists before we ever signal it (EACCES after exec is fine)

    ChildProcess child;
    child.pid_ = pid;
    for (int stream = 0; stream < 3; ++stream) {
        child.fds_[stream] = ours[stream] >= 0 ? opened.release(ours[stream]) : -1;
    }
    for (int& fd : opened.fds) {
        if (fd != report[0]) {
            closeFd(fd); // the child's ends: it holds its own copies now
        }
    }
    StartReport heard{};
    std::size_t got = 0;
    while (got < sizeof heard) {
        const ssize_t n = ::read(report[0], reinterpret_cast<char*>(&heard) + got, sizeof heard - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += static_cast<std::size_t>(n);
    }
    if (got == sizeof heard) {
        child.waitUntil(deadlineIn(10)); // it exits at once; the destructor reaps it otherwise
        const std::string why = std::strerror(heard.error);
        switch (heard.step) {
        case FailedStep::Directory:
            return startError(spec, "cannot enter its working directory " + workingDirectory + " (" + why + ")");
        case FailedStep::Streams:
            return startError(spec, "cannot set up its standard streams (" + why + ")");
        case FailedStep::Exec:
            break;
        }
        return startError(spec, why);
    }
    for (int fd : child.fds_) {
        if (fd >= 0) {
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
        }
    }
    return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(std::move(other.status_)) {
    for (int stream = 0; stream < 3; ++stream) {
        fds_[stream] = std::exchange(other.fds_[stream], -1);
    }
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        if (pid_ > 0) {
            kill();
        }
        closeAll();
        pid_ = std::exchange(other.pid_, -1);
        status_ = std::move(other.status_);
        for (int stream = 0; stream < 3; ++stream) {
            fds_[stream] = std::exchange(other.fds_[stream], -1);
        }
    }
    return *this;
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0) {
        kill();
    }
    closeAll();
}

void ChildProcess::closeAll() {
    for (int& fd : fds_) {
        closeFd(fd);
    }
}

std::optional<ExitStatus> ChildProcess::poll() {
    if (status_ || pid_ <= 0) {
        return status_;
    }
    int raw = 0;
    const pid_t done = ::waitpid(pid_, &raw, WNOHANG);
    if (done == pid_) {
        status_ = statusFrom(raw);
    } else if (done < 0 && errno == ECHILD) {
        status_ = ExitStatus{}; // reaped elsewhere (SIGCHLD ignored): it has ended, how is unknown
    }
    return status_;
}

std::optional<ExitStatus> ChildProcess::waitUntil(Deadline deadline) {
    auto pause = std::chrono::milliseconds(1);
    while (true) {
        if (auto ended = poll()) {
            return ended;
        }
        const double left = secondsUntil(deadline);
        if (left <= 0 || pid_ <= 0) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::min<Clock::duration>(
            pause, std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left))));
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
}

ExitStatus ChildProcess::kill(double graceSeconds) {
    if (pid_ <= 0) {
        return status_.value_or(ExitStatus{});
    }
    // The tree as it stood before SIGTERM: a descendant whose parent dies in the grace period moves to init, and
    // would be found no more. Each is checked against its start time before the SIGKILL, so a reused pid is spared.
    std::map<pid_t, ProcessEntry> tree;
    if (!poll() && graceSeconds > 0) {
        tree = descendantsOf(pid_, processTable());
        signalGroup(pid_, SIGTERM);
        waitUntil(deadlineIn(graceSeconds));
    }
    // Freeze the group first so nothing forks while the tree is collected, then kill every descendant and the
    // groups they lead (the grader's evaluation children run in process groups of their own).
    signalGroup(pid_, SIGSTOP);
    for (int round = 0; round < 3 && !status_; ++round) {
        bool grew = false;
        for (const auto& [pid, entry] : descendantsOf(pid_, processTable())) {
            if (tree.emplace(pid, entry).second) {
                signalProcess(pid, SIGSTOP);
                grew = true;
            }
        }
        if (!grew) {
            break;
        }
    }
    const std::map<pid_t, ProcessEntry> now = tree.empty() ? std::map<pid_t, ProcessEntry>{} : processTable();
    for (const auto& [pid, entry] : tree) {
        auto current = now.find(pid);
        if (current == now.end() || current->second.startTime != entry.startTime) {
            continue; // gone, or its pid now names another process
        }
        if (current->second.group == pid) {
            signalGroup(pid, SIGKILL);
        }
        signalProcess(pid, SIGKILL);
    }
    signalGroup(pid_, SIGKILL);
    if (!status_) {
        signalProcess(pid_, SIGKILL);
        int raw = 0;
        pid_t done = -1;
        while ((done = ::waitpid(pid_, &raw, 0)) < 0 && errno == EINTR) {
        }
        status_ = done == pid_ ? statusFrom(raw) : ExitStatus{};
    }
    return *status_;
}

int ChildProcess::fd(ChildPipe pipe) const {
    return fds_[streamIndex(pipe)];
}

PipeRead ChildProcess::readAvailable(ChildPipe pipe, std::string& into, std::size_t maxBytes) {
    int& fd = fds_[streamIndex(pipe)];
    if (fd < 0 || pipe == ChildPipe::Input) {
        return PipeRead::Closed;
    }
    std::size_t got = 0;
    char chunk[65536];
    while (got < maxBytes) {
        const ssize_t n = ::read(fd, chunk, std::min(sizeof chunk, maxBytes - got));
        if (n > 0) {
            into.append(chunk, static_cast<std::size_t>(n));
            got += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return got > 0 ? PipeRead::Data : PipeRead::Nothing;
        }
        closeFd(fd); // end of file, or an error that ends the pipe as surely
        return PipeRead::Closed;
    }
    return PipeRead::Data;
}

bool ChildProcess::waitReadable(Deadline deadline) {
    pollfd watched[2];
    nfds_t count = 0;
    for (int stream : {1, 2}) {
        if (fds_[stream] >= 0) {
            watched[count++] = {fds_[stream], POLLIN, 0};
        }
    }
    if (count == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(pollMilliseconds(deadline)));
        return false;
    }
    return ::poll(watched, count, pollMilliseconds(deadline)) > 0;
}

InputWrite ChildProcess::writeInput(std::string_view bytes, Deadline deadline) {
    int& fd = fds_[0];
    if (fd < 0) {
        return {InputWrite::Kind::Closed, "its stdin is not an open pipe"};
    }
    const SigpipeHeld held;
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n > 0) {
            written += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (secondsUntil(deadline) <= 0) {
                return {InputWrite::Kind::TimedOut, {}};
            }
            pollfd writable = {fd, POLLOUT, 0};
            ::poll(&writable, 1, std::min(pollMilliseconds(deadline), 1000));
            continue;
        }
        return {InputWrite::Kind::Closed, std::strerror(errno)};
    }
    return {};
}

void ChildProcess::closePipe(ChildPipe pipe) {
    closeFd(fds_[streamIndex(pipe)]);
}

ChildOutput ChildProcess::capture(Deadline deadline) {
    ChildOutput output;
    closePipe(ChildPipe::Input);
    while (fds_[1] >= 0 || fds_[2] >= 0) {
        if (secondsUntil(deadline) <= 0) {
            output.timedOut = true;
            break;
        }
        waitReadable(deadline);
        readAvailable(ChildPipe::Output, output.out);
        readAvailable(ChildPipe::Error, output.err);
    }
    if (!output.timedOut && !waitUntil(deadline)) {
        output.timedOut = true;
    }
    output.status = output.timedOut ? kill() : *status_;
    return output;
}

Result<ChildOutput> runChild(const ChildSpec& spec, double timeoutS) {
    auto child = ChildProcess::spawn(spec);
    if (!child) {
        return child.error();
    }
    return child->capture(deadlineIn(timeoutS));
}

} // namespace mkb
