// One grader server per device behind its own lock; least-loaded dispatch; lost devices leave the rotation.
#include "core/grader_client/grader_pool.h"

#include "core/grader_client/gpu_lock.h"
#include "core/util/text.h"
#include "core/wire/verdict_json.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <tuple>

namespace mkb {
namespace {

/// The start of a message for a one-line summary.
std::string firstChars(const std::string& text, std::size_t limit) {
    return text.size() <= limit ? text : text.substr(0, limit) + "...";
}

} // namespace

struct GraderPool::Slot {
    Slot(std::string name, GraderLaunch launch) : device(std::move(name)), server(std::move(launch)) {}
    std::string device;
    GraderProcess server;
    std::mutex serverMutex;  // one request at a time on this device's server
    int priorityWaiting = 0; // priority callers waiting for the server; guarded by the pool's mutex
    std::string peaks;       // guarded by the pool's mutex
    bool lost = false;       // guarded by the pool's mutex
    std::string lostReason;
    int load = 0;
    int completed = 0;
};

int visibleCudaDeviceCount() {
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr) {
        int count = 0;
        for (const std::string& entry : splitString(visible, ',')) {
            std::string name(trimmed(entry));
            if (name.empty() || name == "-1") {
                break; // CUDA stops at the first invalid entry
            }
            ++count;
        }
        return count;
    }
    std::error_code error;
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", error)) {
        count += entry.is_directory(error) ? 1 : 0;
    }
    return count;
}

Result<std::vector<std::string>> parseDeviceList(const std::string& text, int visibleCudaDevices) {
    std::string wanted(trimmed(text));
    std::vector<std::string> devices;
    if (wanted == "all") {
        if (visibleCudaDevices <= 0) {
            return makeError("--devices all found no CUDA device (CUDA_VISIBLE_DEVICES and /proc/driver/nvidia/gpus "
                             "list none); name the devices, e.g. --devices cuda:0,cuda:1, or grade with --device cpu");
        }
        for (int index = 0; index < visibleCudaDevices; ++index) {
            devices.push_back("cuda:" + std::to_string(index));
        }
        return devices;
    }
    std::set<std::string> seen;
    for (const std::string& raw : splitString(wanted, ',')) {
        std::string entry(trimmed(raw));
        bool cpuIndexed = entry.rfind("cpu:", 0) == 0 && entry.size() > 4 &&
                          entry.find_first_not_of("0123456789", 4) == std::string::npos;
        if (entry.empty() || (!cpuIndexed && !validateDevice(entry))) {
            return makeError("--devices: '" + entry +
                             "' is not a device; give \"all\" or a comma list of cuda:N, "
                             "cpu or cpu:N, e.g. --devices cuda:0,cuda:2");
        }
        if (entry == "cuda") {
            entry = "cuda:0";
        }
        if (!seen.insert(entry).second) {
            return makeError("--devices names " + entry + " twice; name each device once");
        }
        devices.push_back(entry);
    }
    if (devices.empty()) {
        return makeError("--devices is empty; give \"all\" or a comma list such as cuda:0,cuda:1");
    }
    return devices;
}

std::string graderDeviceFor(const std::string& device) {
    return device.rfind("cpu:", 0) == 0 ? "cpu" : device;
}

bool verdictBlamesDevice(const Verdict& verdict) {
    return verdict.infrastructureError && !verdict.imported && verdict.stage == "load" &&
           verdict.error.find("CUDA") != std::string::npos;
}

GraderPool::GraderPool(std::vector<std::string> devices, GraderLaunch launch, DeviceLostCallback onLost)
    : launch_(std::move(launch)), onLost_(std::move(onLost)) {
    for (std::string& device : devices) {
        GraderLaunch own = launch_;
        own.lockDevice = false; // the pool holds the device's lock around each request
        own.extraEnvironment.emplace_back("MKB_POOL_DEVICE", device);
        slots_.push_back(std::make_unique<Slot>(std::move(device), std::move(own)));
    }
}

GraderPool::~GraderPool() {
    stop();
}

Status GraderPool::start() {
    std::string reasons;
    bool any = false;
    for (std::size_t index = 0; index < slots_.size(); ++index) {
        Slot& slot = *slots_[index];
        Status started = [&]() {
            std::lock_guard<std::mutex> serverLock(slot.serverMutex);
            return slot.server.start();
        }();
        if (!started) {
            reasons += (reasons.empty() ? "" : "; ") + slot.device + ": " + started.error().message;
            markLost(static_cast<int>(index), "its grader server did not start: " + started.error().message);
            continue;
        }
        if (!any) {
            hello_ = slot.server.hello();
        }
        any = true;
    }
    if (!any) {
        return makeError("no grader server started on any of the " + std::to_string(slots_.size()) + " devices (" +
                         reasons + "); check --python and the devices");
    }
    return Ok{};
}

void GraderPool::setPeaks(const std::string& device, const std::string& peaksJson) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& slot : slots_) {
        if (slot->device == device) {
            slot->peaks = peaksJson;
        }
    }
}

int GraderPool::reserve(const std::string& preferred) {
    std::lock_guard<std::mutex> lock(mutex_);
    int best = -1;
    for (std::size_t index = 0; index < slots_.size(); ++index) {
        const Slot& slot = *slots_[index];
        if (slot.lost) {
            continue;
        }
        if (!preferred.empty() && slot.device == preferred) {
            best = static_cast<int>(index);
            break;
        }
        if (best < 0 ||
            std::tie(slot.load, slot.completed) < std::tie(slots_[static_cast<std::size_t>(best)]->load,
                                                           slots_[static_cast<std::size_t>(best)]->completed)) {
            best = static_cast<int>(index);
        }
    }
    if (best >= 0) {
        ++slots_[static_cast<std::size_t>(best)]->load;
    }
    return best;
}

void GraderPool::release(int index, bool answered) {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = *slots_[static_cast<std::size_t>(index)];
    --slot.load;
    slot.completed += answered ? 1 : 0;
}

void GraderPool::markLost(int index, const std::string& reason) {
    Slot& slot = *slots_[static_cast<std::size_t>(index)];
    std::string message;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (slot.lost) {
            return;
        }
        slot.lost = true;
        slot.lostReason = reason;
        int left = 0;
        for (const auto& other : slots_) {
            left += other->lost ? 0 : 1;
        }
        message = "device " + slot.device + " left the rotation: " + reason + "; " +
                  (left == 0 ? std::string("no device is left to grade on")
                             : "its gradings go to the " + std::to_string(left) + " device" + (left == 1 ? "" : "s") +
                                   " left");
    }
    {
        std::lock_guard<std::mutex> serverLock(slot.serverMutex);
        slot.server.stop();
    }
    if (onLost_) {
        onLost_(slot.device, message);
    }
}

std::string GraderPool::noDeviceLeft() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string reasons;
    for (const auto& slot : slots_) {
        reasons += (reasons.empty() ? "" : "; ") + slot->device + ": " + slot->lostReason;
    }
    return "every device of the pool left the rotation (" + reasons + "); check the devices and run again";
}

std::unique_lock<std::mutex> GraderPool::takeServer(Slot& slot, bool priority, const std::atomic<bool>* cancel) {
    // As the GPU lock's priority waiters do (DESIGN §5.5): a cell's re-timing is not starved by a stream of gradings.
    if (priority) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++slot.priorityWaiting;
        }
        std::unique_lock<std::mutex> server(slot.serverMutex);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --slot.priorityWaiting;
        }
        turn_.notify_all();
        return server;
    }
    {
        std::unique_lock<std::mutex> lock(mutex_);
        while (slot.priorityWaiting > 0 && !slot.lost && !(cancel != nullptr && cancel->load())) {
            turn_.wait_for(lock, std::chrono::milliseconds(100));
        }
    }
    return std::unique_lock<std::mutex>(slot.serverMutex);
}

Status GraderPool::onOneDevice(const std::string& preferred, const std::atomic<bool>* cancel, const Attempt& attempt,
                               bool priority, std::string* busyDevice) {
    for (std::size_t tries = 0; tries <= slots_.size(); ++tries) {
        const int index = reserve(preferred);
        if (index < 0) {
            break;
        }
        Slot& slot = *slots_[static_cast<std::size_t>(index)];
        std::optional<std::string> lostBecause;
        {
            std::unique_lock<std::mutex> serverLock = takeServer(slot, priority, cancel);
            const bool lostMeanwhile = [&]() {
                std::lock_guard<std::mutex> lock(mutex_);
                return slot.lost;
            }();
            if (lostMeanwhile) {
                serverLock.unlock();
                release(index, false);
                continue;
            }
            auto lock = GpuLock::acquire(slot.device, launch_.lock, cancel);
            if (!lock) { // a busy or unopenable lock is not a lost device
                serverLock.unlock();
                release(index, false);
                if (busyDevice) {
                    *busyDevice = slot.device;
                }
                return lock.error();
            }
            lostBecause = attempt(slot);
            if (cancel != nullptr && cancel->load()) {
                lostBecause.reset(); // a server stopped by cancel is not a lost device
            }
        }
        if (lostBecause) {
            release(index, false);
            markLost(index, *lostBecause);
            continue; // the whole attempt again, on another device
        }
        release(index, true);
        return Ok{};
    }
    return makeError(noDeviceLeft());
}

Verdict GraderPool::grade(GradeRequest request, const StageCallback& onStage, const std::atomic<bool>* cancel) {
    Verdict verdict;
    std::string device;
    std::string busy; // the device whose lock could not be taken
    Status ran = onOneDevice(
        "", cancel,
        [&](Slot& slot) -> std::optional<std::string> {
            GradeRequest sent = request;
            sent.device = graderDeviceFor(slot.device);
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (!slot.peaks.empty()) {
                    sent.peaksJson = slot.peaks;
                }
            }
            verdict = slot.server.grade(sent, onStage, cancel);
            device = slot.device;
            if (!verdict.infrastructureError) {
                return std::nullopt;
            }
            if (!slot.server.running()) {
                return "its grader server stopped during a grading (" + firstChars(verdict.error, 200) + ")";
            }
            if (verdictBlamesDevice(verdict)) {
                return "the device failed (" + firstChars(verdict.error, 200) + ")";
            }
            return std::nullopt;
        },
        false, &busy);
    if (!ran) {
        Verdict failed = infrastructureVerdict(ran.error().message, "load");
        failed.device = busy; // "" when no device is left
        return failed;
    }
    verdict.device = device;
    return verdict;
}

Result<RetimingResult> GraderPool::retime(RetimeRequest request, const std::string& preferred,
                                          const StageCallback& onStage, const std::atomic<bool>* cancel) {
    std::optional<Result<RetimingResult>> outcome;
    std::string device;
    Status ran = onOneDevice(
        preferred, cancel,
        [&](Slot& slot) -> std::optional<std::string> {
            RetimeRequest sent = request;
            sent.device = graderDeviceFor(slot.device);
            outcome = slot.server.retime(sent, onStage, cancel);
            device = slot.device;
            if (!*outcome && !slot.server.running()) {
                return "its grader server stopped during a re-timing (" + firstChars(outcome->error().message, 200) +
                       ")";
            }
            return std::nullopt;
        },
        true);
    if (!ran) {
        return ran.error();
    }
    if (*outcome) {
        (*outcome)->device = device;
    }
    return std::move(*outcome);
}

Status GraderPool::runOnOneDevice(const DeviceWork& work, const std::string& preferred,
                                  const std::atomic<bool>* cancel) {
    Status outcome = Ok{};
    Status ran = onOneDevice(
        preferred, cancel,
        [&](Slot& slot) -> std::optional<std::string> {
            if (Status started = slot.server.start(); !started) {
                return "its grader server did not start again: " + firstChars(started.error().message, 200);
            }
            const int spawned = slot.server.spawnCount();
            outcome = work(slot.server, slot.device, graderDeviceFor(slot.device));
            if (!slot.server.running() || slot.server.spawnCount() != spawned) {
                return "its grader server stopped during the work (" + firstChars(slot.server.lastStderrLine(), 200) +
                       ")";
            }
            return std::nullopt;
        },
        true);
    return ran ? outcome : ran;
}

std::vector<PoolDeviceState> GraderPool::devices() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<PoolDeviceState> states;
    for (const auto& slot : slots_) {
        states.push_back({slot->device, slot->lost, slot->lostReason, slot->load, slot->completed});
    }
    return states;
}

int GraderPool::inRotation() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const auto& slot) { return !slot->lost; }));
}

void GraderPool::stop() {
    for (auto& slot : slots_) {
        std::lock_guard<std::mutex> serverLock(slot->serverMutex);
        slot->server.stop();
    }
}

} // namespace mkb
