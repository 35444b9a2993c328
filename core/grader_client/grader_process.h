// The long-lived Python grader server as seen from C++: spawning, line-delimited JSON over pipes, deadlines, restarts.
#pragma once

#include "core/grader_client/device_probe.h"
#include "core/grader_client/gpu_lock.h"
#include "core/records/retiming.h"
#include "core/records/verdict.h"
#include "core/util/child_process.h"
#include "core/util/result.h"

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace mkb {

struct GradeRequest;
struct PoolRequest;
struct PoolResult;
struct RetimeRequest;

/// How the grader server is started and bounded. The defaults run `python3 -m mkbgrader serve`.
struct GraderLaunch {
    std::string python = "python3"; // interpreter (PATH lookup when it has no slash)
    std::vector<std::string> serverArgs = {"-m", "mkbgrader", "serve"};
    std::filesystem::path packageDir; // prepended to PYTHONPATH; empty = mkb::graderPackageDir()
    std::vector<std::pair<std::string, std::string>> extraEnvironment;
    double startupTimeoutS = 180;         // until the "ready" line
    double deadlineMarginS = 30;          // the whole server gets timeout_s + this per grade request
    double probeTimeoutS = 600;           // bound of a probe request
    std::size_t maxLineBytes = 16u << 20; // a longer stdout line is a protocol violation
    std::size_t stderrKeepBytes = 64u << 10;
    bool lockDevice = true; // hold the device's GpuLock around each grade and probe request
    GpuLockOptions lock;
};

/// The interpreter named by `--python`, else $MKB_PYTHON, else "python3".
std::string graderPythonFrom(const std::optional<std::string>& commandLineChoice);

/// What the server said in its "ready" line.
struct GraderHello {
    int protocol = 0;
    std::string graderFingerprint;
    std::string torchVersion;
};

/// One reply line the caller waited for, plus the last progress stage heard before it.
struct GraderReply {
    std::string line;      // the final reply (verdict, probe_result or error), raw JSON text
    std::string lastStage; // "" when no stage message came
};

/// Called with each progress stage ("import", "correctness", ...) while a request is in flight.
using StageCallback = std::function<void(const std::string& stage)>;

/// One grader server process, reused for many requests. Not thread-safe: one request at a time per object.
/// Any failure (garbage, silence, death, an oversized line) becomes an error value; the server is then killed
/// with its whole process tree and started afresh on the next request.
class GraderProcess {
public:
    explicit GraderProcess(GraderLaunch launch);
    ~GraderProcess();
    GraderProcess(const GraderProcess&) = delete;
    GraderProcess& operator=(const GraderProcess&) = delete;

    /// Starts the server if it is not running and waits for its "ready" line.
    Status start();
    bool running() const { return child_ && !child_->exitStatus(); }
    pid_t pid() const { return child_ ? child_->pid() : -1; }
    const GraderHello& hello() const { return hello_; }
    /// How many times a server process has been spawned by this object.
    int spawnCount() const { return spawnCount_; }
    /// The DSL the server pre-started its next child for: the last grading's "next" (GradeRequest::nextDsl), else
    /// its own DSL (docs/design.md §5.4), so a grading of that DSL finds it imported and its device ready. "" before
    /// the first grading.
    const std::string& prestartedDsl() const { return prestartedDsl_; }
    /// Whether the last grading ran in a child the server had pre-started (its verdict reply's "prestarted").
    bool lastGradingPrestarted() const { return lastGradingPrestarted_; }

    /// Grades one kernel. Never fails as a call: infrastructure failures come back as a Verdict with
    /// infrastructureError set and a one-line error naming what happened and the server's last stderr line.
    Verdict grade(const GradeRequest& request, const StageCallback& onStage = {},
                  const std::atomic<bool>* cancel = nullptr);

    /// Re-times 2 to 4 kernels and eager, paired and interleaved, in one sandboxed child (DESIGN §5.5), holding the
    /// device's GpuLock throughout. The wait is bounded by retimeDeadlineS(request). A result with ok = false is
    /// still a value (a kernel failed its correctness draw, or the grader's own failure with
    /// infrastructureError); an error means no result came back (the server died, went silent or refused).
    Result<RetimingResult> retime(const RetimeRequest& request, const StageCallback& onStage = {},
                                  const std::atomic<bool>* cancel = nullptr);
    /// The C++ bound of one retime request: the grader's own child bound (settings.timeoutS for load, import,
    /// correctness and warm-up, plus retime.maxSeconds of rounds, plus 60 s) plus deadlineMarginS.
    double retimeDeadlineS(const RetimeRequest& request) const;

    /// Checks 1 to 8 kernels of one problem on shared correctness draws in one sandboxed child, each draw's reference
    /// and anchor computed once (docs/grader-protocol.md "Pooled correctness draws"), holding the device's GpuLock.
    /// The wait is bounded by the settings' timeout plus deadlineMarginS. An error means no result came back (the
    /// server died, went silent, refused the request, or predates pools); the caller then checks each kernel alone.
    Result<PoolResult> pool(const PoolRequest& request, const StageCallback& onStage = {},
                            const std::atomic<bool>* cancel = nullptr);

    /// Asks the server to measure a device's peaks.
    Result<DeviceProbe> probe(const std::string& device, const std::atomic<bool>* cancel = nullptr);

    /// Sends one request line (a JSON object with "id") and waits up to timeoutS for the reply with that id.
    Result<GraderReply> exchange(const std::string& requestLine, const std::string& id, double timeoutS,
                                 const StageCallback& onStage = {}, const std::atomic<bool>* cancel = nullptr);

    /// Asks the server to shut down, then kills whatever is left of its process tree.
    void stop();

    /// The last non-empty line the server wrote on stderr ("" if none).
    std::string lastStderrLine() const;
    /// Everything kept of the server's stderr (the last stderrKeepBytes).
    std::string stderrTail() const;

private:
    Status spawn();
    void killTree();
    /// Reads until a complete stdout line is available or the deadline passes; drains stderr meanwhile.
    Result<std::string> readLine(double deadline, const std::atomic<bool>* cancel, const char* waitingFor);
    Status writeAll(const std::string& bytes, double deadline);
    void appendStderr(const char* data, std::size_t size);
    Error failure(const std::string& what);

    GraderLaunch launch_;
    std::optional<ChildProcess> child_; // empty until spawned, and again once killed
    std::string stdoutBuffer_;
    std::string stderrRing_;
    GraderHello hello_;
    int spawnCount_ = 0;
    std::string prestartedDsl_;
    bool lastGradingPrestarted_ = false;
    long requestCounter_ = 0;
    double boundS_ = 0; // the bound of the wait in progress, for messages
};

} // namespace mkb
