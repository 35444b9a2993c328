// Talking to the grader server: a child process in its own process group, bounded JSON lines over its pipes,
// deadlines, and killing its whole process tree on any failure.
#include "core/grader_client/grader_process.h"

#include "core/util/json_input.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/wire/grade_request.h"
#include "core/wire/pool_request.h"
#include "core/wire/retime_request.h"
#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

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

std::string formatSeconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, seconds < 10 ? "%.1f" : "%.0f", seconds);
    return text;
}

std::string printablePrefix(const std::string& text, std::size_t limit) {
    std::string out;
    for (char c : text.substr(0, limit)) {
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    }
    return text.size() > limit ? out + "…" : out;
}

/// GLIBC_TUNABLES for the grader: the caller's own, with glibc's malloc told to back its large blocks with
/// transparent huge pages (glibc 2.35 and later; an older glibc ignores the name) unless the caller chose otherwise.
/// A draw's host tensors (every draw on a CPU device, parked or copied ones on a GPU) are blocks above malloc's
/// mmap threshold, mapped afresh and faulted in 4 KiB at a time on each draw: a CPU grading of a 128 MiB
/// KernelBench-X task spent most of its time in the kernel, 152 s where huge pages take 20-28 s (docs/design.md §5.4).
/// On a GPU the timed region's memory is the device's (torch's caching allocator), so only the work around it changes.
std::string graderMallocTunables(const char* inherited) {
    const std::string own = inherited ? inherited : "";
    if (own.find("glibc.malloc.hugetlb") != std::string::npos) {
        return own;
    }
    return own.empty() ? "glibc.malloc.hugetlb=1" : own + ":glibc.malloc.hugetlb=1";
}

/// The `kind` object of the reply to a `kind` request ("retime", "pool"), or the error: the server's refusal (an
/// "error" reply, its message quoted) or a reply without that object (a grader older than the request).
Result<Json> replyPart(const std::string& line, const std::string& kind) {
    Json message = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(line));
    if (message.value("type", "") == "error") {
        std::string text = message.contains("message") && message["message"].is_string()
                               ? message["message"].get<std::string>()
                               : message.dump();
        return makeError("the grader refused the " + kind + " request: " + printablePrefix(text, 300));
    }
    if (!message.contains(kind) || !message[kind].is_object()) {
        return makeError("the grader's " + kind + " reply has no \"" + kind + "\" object; update the grader");
    }
    return message[kind];
}

/// A grade or retime request line with "device_lock": the lock file mkb holds around each grading of the device. The
/// grader derives the device's timing lock from it, which every timed stage and the pre-started child's warm-up hold
/// (DESIGN §5.4), so a warm-up never runs beside a timing.
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
    ChildSpec spec;
    spec.argv = {launch_.python};
    spec.argv.insert(spec.argv.end(), launch_.serverArgs.begin(), launch_.serverArgs.end());
    const std::filesystem::path packageDir = launch_.packageDir.empty() ? graderPackageDir() : launch_.packageDir;
    const char* oldPath = std::getenv("PYTHONPATH");
    spec.setEnvironment["PYTHONPATH"] = packageDir.string() + (oldPath && *oldPath ? std::string(":") + oldPath : "");
    spec.setEnvironment["PYTHONUNBUFFERED"] = "1";
    spec.setEnvironment["GLIBC_TUNABLES"] = graderMallocTunables(std::getenv("GLIBC_TUNABLES"));
    for (const auto& [key, value] : launch_.extraEnvironment) {
        spec.setEnvironment[key] = value;
    }
    spec.input = ChildStream::pipe();
    spec.role = "the grader with '" + launch_.python + "'";
    spec.whatToDo = "name a Python with torch through --python or MKB_PYTHON";
    auto started = ChildProcess::spawn(spec);
    if (!started) {
        return started.error();
    }
    child_.emplace(std::move(started).value());
    ++spawnCount_;
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
    if (child_) {
        std::string rest;
        child_->readAvailable(ChildPipe::Error, rest, std::size_t(4) << 20);
        appendStderr(rest.data(), rest.size());
    }
    std::string last = lastStderrLine();
    killTree();
    return makeError(what + (last.empty() ? "" : "; grader's last stderr line: " + last));
}

Result<std::string> GraderProcess::readLine(double deadline, const std::atomic<bool>* cancel, const char* waitingFor) {
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
        child_->waitReadable(deadlineIn(std::min(remaining, cancel ? 0.1 : 1.0)));
        std::string err;
        child_->readAvailable(ChildPipe::Error, err, 65536);
        appendStderr(err.data(), err.size());
        if (child_->readAvailable(ChildPipe::Output, stdoutBuffer_) == PipeRead::Closed &&
            stdoutBuffer_.find('\n', scanned) == std::string::npos) {
            auto ended = child_->waitUntil(deadlineIn(1.0));
            const std::string how = ended ? ended->describe() : "closed its stdout";
            return failure("the grader " + how + " while mkb waited for its " + std::string(waitingFor));
        }
    }
}

Status GraderProcess::writeAll(const std::string& bytes, double deadline) {
    const InputWrite sent = child_->writeInput(bytes, deadlineIn(deadline - nowSeconds()));
    if (sent.kind == InputWrite::Kind::TimedOut) {
        return failure("the grader stopped reading its requests; killed it");
    }
    if (sent.kind == InputWrite::Kind::Closed) {
        return failure("the grader closed its stdin (" + sent.reason + ")");
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
        if (kind == "verdict" || kind == "probe_result" || kind == "validation" || kind == "retime" || kind == "pool" ||
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
    prestartedDsl_ = request.nextDsl.empty() ? request.dsl : request.nextDsl;
    double timeoutS = request.settings.timeoutS + launch_.deadlineMarginS;
    std::string lastStage;
    StageCallback trackStage = [&](const std::string& stage) {
        lastStage = stage;
        if (onStage) {
            onStage(stage);
        }
    };
    double began = nowSeconds();
    lastGradingPrestarted_ = false;
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
    lastGradingPrestarted_ = message.value("prestarted", false);
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
    prestartedDsl_.clear(); // the server pre-starts a child for all of the re-timing's DSLs together
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
    auto part = replyPart(reply->line, "retime");
    if (!part) {
        return part.error();
    }
    return retimingResultFromJson(part->dump());
}

Result<PoolResult> GraderProcess::pool(const PoolRequest& request, const StageCallback& onStage,
                                       const std::atomic<bool>* cancel) {
    if (request.kernels.empty() || request.kernels.size() > 8) {
        return makeError("a pool takes 1 to 8 kernels, not " + std::to_string(request.kernels.size()));
    }
    std::optional<GpuLock> lock;
    if (launch_.lockDevice) {
        auto acquired = GpuLock::acquire(request.device, launch_.lock, cancel);
        if (!acquired) {
            return acquired.error();
        }
        lock.emplace(std::move(acquired).value());
    }
    const std::string id = "c" + std::to_string(::getpid()) + "-" + std::to_string(++requestCounter_);
    auto reply = exchange(withDeviceLock(poolRequestJson(request, id), gpuLockPath(request.device, launch_.lock.dir)),
                          id, request.settings.timeoutS + launch_.deadlineMarginS, onStage, cancel);
    if (!reply) {
        return makeError("pooled draws on " + request.device + " failed: " + reply.error().message);
    }
    auto part = replyPart(reply->line, "pool");
    if (!part) {
        return part.error();
    }
    return poolResultFromJson(part->dump());
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
    Json request = {{"type", "probe"},
                    {"id", id},
                    {"device", device},
                    {"device_lock", gpuLockPath(device, launch_.lock.dir).string()}};
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
    if (child_) {
        child_->kill(); // the server's group, and the evaluation children in groups of their own
        child_.reset();
    }
    stdoutBuffer_.clear();
}

void GraderProcess::stop() {
    if (!child_) {
        return;
    }
    if (!child_->exitStatus()) {
        child_->writeInput("{\"type\":\"shutdown\"}\n", deadlineIn(0));
        child_->closePipe(ChildPipe::Input);
        child_->waitUntil(deadlineIn(2.0));
    }
    killTree();
}

} // namespace mkb
