// Per-GPU exclusive lock (flock on a file named by the device) so that timings from concurrent graders never overlap.
#pragma once

#include "core/util/result.h"

#include <atomic>
#include <filesystem>
#include <string>

namespace mkb {

struct GpuLockOptions {
    std::filesystem::path dir;  // where lock files live; empty = $XDG_RUNTIME_DIR, else /tmp
    double waitTimeoutS = 3600; // give up waiting after this long
    // A priority waiter (a cell's re-timing) goes before this process's ordinary waiters (gradings): while one
    // waits, they do not try the lock, so a stream of gradings that release and re-take it cannot starve it.
    bool priority = false;
};

/// The folder used when GpuLockOptions::dir is empty.
std::filesystem::path defaultGpuLockDir();

/// The lock file of a device: "cuda:N" maps through CUDA_VISIBLE_DEVICES to the physical GPU (so two processes
/// with different visible sets still agree), "cpu" has a lock of its own.
std::filesystem::path gpuLockPath(const std::string& device, const std::filesystem::path& dir);

/// Holds the lock of one device until destroyed. Move-only.
class GpuLock {
public:
    /// Waits (polling, bounded by options.waitTimeoutS, interruptible through cancel) for the device's lock.
    /// The error names the device, the lock file and the holder's pid when known.
    static Result<GpuLock> acquire(const std::string& device, const GpuLockOptions& options = {},
                                   const std::atomic<bool>* cancel = nullptr);

    GpuLock(GpuLock&& other) noexcept;
    GpuLock& operator=(GpuLock&& other) noexcept;
    GpuLock(const GpuLock&) = delete;
    GpuLock& operator=(const GpuLock&) = delete;
    ~GpuLock();

    const std::filesystem::path& path() const { return path_; }
    void release();

private:
    GpuLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
    int fd_ = -1;
    std::filesystem::path path_;
};

} // namespace mkb
