// flock-based per-device locks with a bounded, interruptible wait.
#include "core/grader_client/gpu_lock.h"

#include "core/util/text.h"
#include "core/wire/grade_request.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace mkb {
namespace {

std::string sanitized(const std::string& text) {
    std::string out;
    for (char c : text) {
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
        out += plain ? c : '_';
    }
    return out;
}

std::string physicalDeviceKey(const std::string& device) {
    auto index = cudaDeviceIndex(device);
    if (!index) {
        return sanitized(device);
    }
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (visible && *visible) {
        auto entries = splitString(visible, ',');
        if (*index < static_cast<int>(entries.size())) {
            return "gpu" + sanitized(std::string(trimmed(entries[static_cast<std::size_t>(*index)])));
        }
    }
    return "gpu" + std::to_string(*index);
}

} // namespace

std::filesystem::path defaultGpuLockDir() {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    std::error_code ec;
    if (runtime && *runtime && std::filesystem::is_directory(runtime, ec)) {
        return runtime;
    }
    return "/tmp";
}

std::filesystem::path gpuLockPath(const std::string& device, const std::filesystem::path& dir) {
    return (dir.empty() ? defaultGpuLockDir() : dir) / ("mkb-" + physicalDeviceKey(device) + ".lock");
}

namespace {

// This process's priority waiters (see GpuLockOptions::priority); other processes keep the plain flock contest.
std::atomic<int> priorityWaiters{0};

struct PriorityWait {
    bool counted;
    explicit PriorityWait(bool priority) : counted(priority) {
        if (counted) {
            priorityWaiters.fetch_add(1);
        }
    }
    ~PriorityWait() {
        if (counted) {
            priorityWaiters.fetch_sub(1);
        }
    }
    PriorityWait(const PriorityWait&) = delete;
    PriorityWait& operator=(const PriorityWait&) = delete;
};

} // namespace

Result<GpuLock> GpuLock::acquire(const std::string& device, const GpuLockOptions& options,
                                 const std::atomic<bool>* cancel) {
    std::filesystem::path path = gpuLockPath(device, options.dir);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        return makeError("cannot open the GPU lock " + path.string() + ": " + std::strerror(errno) +
                         " (check the folder's permissions)");
    }
    auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::milliseconds(5);
    const PriorityWait waiting(options.priority);
    auto tryLock = [&]() {
        if (!options.priority && priorityWaiters.load() > 0) {
            errno = EWOULDBLOCK; // a re-timing of this process waits: let it go first
            return false;
        }
        return ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    };
    while (!tryLock()) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            std::string reason = std::strerror(errno);
            ::close(fd);
            return makeError("cannot lock " + path.string() + ": " + reason);
        }
        double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if ((cancel && cancel->load()) || waited >= options.waitTimeoutS) {
            char holder[32] = {};
            ssize_t got = ::pread(fd, holder, sizeof holder - 1, 0);
            std::string holderPid =
                got > 0 ? std::string(trimmed(std::string(holder, static_cast<std::size_t>(got)))) : "";
            ::close(fd);
            if (cancel && cancel->load()) {
                return makeError("stopped while waiting for the lock of " + device + " (" + path.string() + ")");
            }
            return makeError(device + " is busy: another grader (pid " + (holderPid.empty() ? "?" : holderPid) +
                             ") held " + path.string() + " for more than " +
                             std::to_string(static_cast<long>(std::lround(options.waitTimeoutS))) +
                             " s; wait for it or stop it");
        }
        std::this_thread::sleep_for(pause);
        pause = options.priority ? std::chrono::milliseconds(5) : std::min(pause * 2, std::chrono::milliseconds(100));
    }
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) {
        [[maybe_unused]] ssize_t written = ::pwrite(fd, pid.data(), pid.size(), 0);
    }
    return GpuLock(fd, path);
}

GpuLock::GpuLock(GpuLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
    other.fd_ = -1;
}

GpuLock& GpuLock::operator=(GpuLock&& other) noexcept {
    if (this != &other) {
        release();
        fd_ = other.fd_;
        path_ = std::move(other.path_);
        other.fd_ = -1;
    }
    return *this;
}

GpuLock::~GpuLock() {
    release();
}

void GpuLock::release() {
    if (fd_ >= 0) {
        ::flock(fd_, LOCK_UN);
        ::close(fd_);
        fd_ = -1;
    }
}

} // namespace mkb
