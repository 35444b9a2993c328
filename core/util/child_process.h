// One child process from start to reaping: spawned into a process group of its own, watched against steady-clock
// deadlines through non-blocking pipes, and killed with its whole tree; the one way core starts a program.
#pragma once

#include "core/util/result.h"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace mkb {

using Deadline = std::chrono::steady_clock::time_point;

/// The steady-clock moment `seconds` from now (a negative or zero count is now).
Deadline deadlineIn(double seconds);
/// Seconds from now until `deadline`; negative once it has passed.
double secondsUntil(Deadline deadline);

/// Where one standard stream of the child goes.
struct ChildStream {
    enum class Kind {
        Pipe,        // a pipe to this process, non-blocking on our side
        Null,        // /dev/null
        File,        // `file`: read from (stdin), or created and truncated (stdout, stderr)
        SameAsOutput // stderr only: wherever stdout goes, sharing its offset
    };
    Kind kind = Kind::Null;
    std::filesystem::path file;

    static ChildStream pipe() { return {Kind::Pipe, {}}; }
    static ChildStream null() { return {Kind::Null, {}}; }
    static ChildStream toFile(std::filesystem::path path) { return {Kind::File, std::move(path)}; }
    static ChildStream sameAsOutput() { return {Kind::SameAsOutput, {}}; }
};

/// What to start and how.
struct ChildSpec {
    std::vector<std::string> argv;                     // argv[0] is searched on our PATH when it has no slash
    std::map<std::string, std::string> setEnvironment; // added to our environment, or replacing what it holds
    std::vector<std::string> unsetEnvironment;         // names removed from the child's environment
    std::filesystem::path workingDirectory;            // empty: ours
    ChildStream input = ChildStream::null();
    ChildStream output = ChildStream::pipe();
    ChildStream error = ChildStream::pipe();
    bool dieWithParent = false; // SIGKILL the child when the thread that started it ends (Linux)
    std::string role;           // the program in messages ("the grader with 'python3'"); empty: 'argv[0]'
    std::string whatToDo;       // ends the message when it cannot start ("install …, or put it on PATH")
};

/// How a reaped child ended.
struct ExitStatus {
    int code = -1;  // its exit status; -1 when a signal ended it
    int signal = 0; // the signal that ended it; 0 when it exited
    bool exited() const { return signal == 0; }
    bool succeeded() const { return signal == 0 && code == 0; }
    /// "exited with status 3", "was killed by signal 9 (Killed)".
    std::string describe() const;
};

enum class ChildPipe { Input, Output, Error };

/// What one non-blocking read found.
enum class PipeRead {
    Data,    // bytes were appended
    Nothing, // the pipe is open and empty for now
    Closed   // the pipe reached its end (anything read before it was appended); it is closed on our side
};

/// How a bounded write to the child's stdin ended.
struct InputWrite {
    enum class Kind { Written, TimedOut, Closed };
    Kind kind = Kind::Written;
    std::string reason; // for Closed: why ("Broken pipe")
};

/// What a child wrote on stdout and stderr until it ended or its deadline passed.
struct ChildOutput {
    ExitStatus status;
    bool timedOut = false; // the deadline passed and the tree was killed; status then says how the child died
    std::string out;
    std::string err;
};

/// One started child. Move-only. Destroying it while the child runs kills and reaps the child's whole tree; a child
/// that has ended leaves no zombie and no member of its process group behind either.
class ChildProcess {
public:
    /// Starts spec.argv in a new process group led by the child. Fails, naming the program, when it is not on PATH,
    /// cannot be executed, its working directory cannot be entered, or a stream's file cannot be opened.
    static Result<ChildProcess> spawn(const ChildSpec& spec);

    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess();

    /// The child's pid, which is also its process group id.
    pid_t pid() const { return pid_; }
    /// How the child ended, once it has been reaped (by poll, waitUntil or kill).
    const std::optional<ExitStatus>& exitStatus() const { return status_; }

    /// Reaps the child if it has ended, without blocking.
    std::optional<ExitStatus> poll();
    /// Waits until the child ends (and reaps it) or the deadline passes (nullopt; the child runs on).
    std::optional<ExitStatus> waitUntil(Deadline deadline);

    /// Kills the whole tree: SIGTERM to the child's group and up to graceSeconds for the child to end, then every
    /// process of the group and every descendant of the child (also those that moved to groups or sessions of their
    /// own) is stopped and SIGKILLed, and the child is reaped. With a grace of 0, SIGKILL comes at once.
    ExitStatus kill(double graceSeconds = 0);

    /// Our end of a pipe stream; -1 when that stream is not a pipe or the pipe is closed.
    int fd(ChildPipe pipe) const;
    /// Appends what the Output or Error pipe holds now, at most maxBytes, without blocking.
    PipeRead readAvailable(ChildPipe pipe, std::string& into, std::size_t maxBytes = std::size_t(1) << 20);
    /// Waits until the open Output or Error pipe has something to read or has reached its end, or the deadline
    /// passes (false). With no pipe open it waits for the deadline.
    bool waitReadable(Deadline deadline);
    /// Writes all of bytes to the Input pipe before the deadline. A closed pipe never raises SIGPIPE.
    InputWrite writeInput(std::string_view bytes, Deadline deadline);
    /// Closes our end of a pipe (the child sees end of file on its stdin).
    void closePipe(ChildPipe pipe);

    /// Reads stdout and stderr to their ends while waiting for the child, so a child that writes much never blocks
    /// on a full pipe; at the deadline kills the tree. Pipes that are not pipes read as empty.
    ChildOutput capture(Deadline deadline);

private:
    ChildProcess() = default;
    void closeAll();

    pid_t pid_ = -1;
    int fds_[3] = {-1, -1, -1};
    std::optional<ExitStatus> status_;
};

/// Spawns spec and captures its output until it ends or timeoutS passes (then its tree is killed). Fails only when it
/// cannot start at all.
Result<ChildOutput> runChild(const ChildSpec& spec, double timeoutS);

} // namespace mkb
