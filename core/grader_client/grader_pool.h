// Several grader servers on one host, one per device, each behind its own device lock (DESIGN §11): gradings go to
// the least-loaded device, a re-timing runs whole on one device, and a device whose server dies or whose device
// errors leaves the rotation with one message while its grading is rerun on another device.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/records/retiming.h"
#include "core/records/verdict.h"
#include "core/util/result.h"
#include "core/wire/grade_request.h"
#include "core/wire/retime_request.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// How many CUDA devices this process may use: the entries of CUDA_VISIBLE_DEVICES when it is set, else the GPUs
/// the NVIDIA driver lists under /proc/driver/nvidia/gpus (0 where there is no driver).
int visibleCudaDeviceCount();

/// The devices of `--devices`: "all" (cuda:0 … cuda:N-1 for the N visible devices) or a comma list of "cuda:N",
/// "cpu" and "cpu:N" (distinct CPU "devices", for exercising several servers on a CPU host; the grader is sent
/// "cpu" for them). Duplicates are refused; the error names the entry and what is accepted.
Result<std::vector<std::string>> parseDeviceList(const std::string& text, int visibleCudaDevices);

/// The device the grader is told for a pool device: "cpu:N" becomes "cpu", every other name is sent as it is.
std::string graderDeviceFor(const std::string& device);

/// True when an infrastructure verdict says the device itself failed (not the kernel, not the request): the
/// grader's own set-up could not use the CUDA device before any candidate code ran.
bool verdictBlamesDevice(const Verdict& verdict);

/// One device of the pool as seen from outside.
struct PoolDeviceState {
    std::string device;
    bool lost = false;
    std::string lostReason; // why it left the rotation, "" while in it
    int load = 0;           // gradings running or waiting on it now
    int completed = 0;      // requests it answered
};

/// Called once per lost device with one line for the user.
using DeviceLostCallback = std::function<void(const std::string& device, const std::string& message)>;

/// Thread-safe: any number of threads may grade at once; each device's server takes one request at a time.
class GraderPool {
public:
    /// `launch` is the template of every server; the pool takes each device's lock itself (launch.lock), so the
    /// servers' own locking is turned off. Every server gets MKB_POOL_DEVICE=<device> in its environment.
    GraderPool(std::vector<std::string> devices, GraderLaunch launch, DeviceLostCallback onLost = {});
    ~GraderPool();
    GraderPool(const GraderPool&) = delete;
    GraderPool& operator=(const GraderPool&) = delete;

    /// Starts every server. A device whose server cannot start leaves the rotation (with its message); the error
    /// comes only when none starts, and names each device's reason.
    Status start();
    /// The hello of the first server that started (every server runs the same grader).
    const GraderHello& hello() const { return hello_; }

    /// The peaks object sent with gradings on `device` (its own measured peaks), "" to send the request's.
    void setPeaks(const std::string& device, const std::string& peaksJson);

    /// Grades on the least-loaded device in rotation (ties: the one that answered fewest). The request's device
    /// is replaced by the chosen one, and the verdict records it in Verdict::device. When the device is lost during
    /// the grading the same request runs again on another device; when none is left the verdict is an
    /// infrastructure error saying so.
    Verdict grade(GradeRequest request, const StageCallback& onStage = {}, const std::atomic<bool>* cancel = nullptr);

    /// Re-times on one device: `preferred` when it is in rotation, else the least-loaded. A device lost meanwhile
    /// makes the whole re-timing start again on another one (it never mixes devices). The result's device is the
    /// pool device it ran on. It goes before the gradings that come to its device while it waits.
    Result<RetimingResult> retime(RetimeRequest request, const std::string& preferred = "",
                                  const StageCallback& onStage = {}, const std::atomic<bool>* cancel = nullptr);

    /// What runOnOneDevice runs: the device's own server, the pool device, and the device to name in requests.
    using DeviceWork =
        std::function<Status(GraderProcess& server, const std::string& device, const std::string& graderDevice)>;
    /// Runs `work` with one device's server to itself and that device's lock held throughout: `preferred` when it
    /// is in rotation, else the least-loaded. When the server dies during the work (it was restarted, or is down
    /// at the end) the device leaves the rotation and the work runs again from the start on another device, so
    /// everything it does stays on one device. Returns the status of its last run, or an error when no device is
    /// left. Like retime, it goes before the gradings that come to its device while it waits.
    Status runOnOneDevice(const DeviceWork& work, const std::string& preferred = "",
                          const std::atomic<bool>* cancel = nullptr);

    std::vector<PoolDeviceState> devices() const;
    /// How many devices are still in rotation.
    int inRotation() const;

    /// Stops every server.
    void stop();

private:
    struct Slot;
    /// One try on a device, run with its server to itself and its lock held: returns why the device is lost (its
    /// server died, the device failed), or nothing when the device is fine.
    using Attempt = std::function<std::optional<std::string>(Slot& slot)>;
    /// The one dispatch loop of grade, retime and runOnOneDevice: reserves a device in rotation (`preferred` first,
    /// else the least-loaded), takes its lock and runs `attempt`; a device the attempt names lost leaves the rotation
    /// and the attempt runs again whole on another. Errors: no device is left, or a device's lock could not be taken
    /// (busy is not lost; `busyDevice` names it). A priority attempt (a re-timing, work on one device) goes before
    /// the gradings that come to its device while it waits.
    Status onOneDevice(const std::string& preferred, const std::atomic<bool>* cancel, const Attempt& attempt,
                       bool priority, std::string* busyDevice = nullptr);
    /// The device's server to itself, a priority caller before the ordinary ones that arrive while it waits.
    std::unique_lock<std::mutex> takeServer(Slot& slot, bool priority, const std::atomic<bool>* cancel);
    /// Picks and reserves (load + 1) a device in rotation; -1 when none is left.
    int reserve(const std::string& preferred);
    void release(int index, bool answered);
    void markLost(int index, const std::string& reason);
    std::string noDeviceLeft() const;

    std::vector<std::unique_ptr<Slot>> slots_;
    GraderLaunch launch_;
    DeviceLostCallback onLost_;
    GraderHello hello_;
    mutable std::mutex mutex_;
    std::condition_variable turn_; // a priority caller took its device's server
};

} // namespace mkb
