// The run's re-timing thread: a queue of cells whose arms are final, one narrow re-timing pass per cell, a last sweep.
#include "core/protocol/cell_retimer.h"

#include <algorithm>
#include <chrono>

namespace mkb {

CellRetimer::CellRetimer(Store& store, std::mutex& storeMutex, GraderLaunch launch, RetimeJob job,
                         std::function<void(const RetimeOutcome&)> onOutcome,
                         std::function<void(const std::string&)> onError, const std::atomic<bool>& cancel,
                         GraderPool* pool)
    : store_(store), storeMutex_(storeMutex), launch_(std::move(launch)), job_(std::move(job)),
      onOutcome_(std::move(onOutcome)), onError_(std::move(onError)), cancel_(cancel), pool_(pool) {
    job_.storeMutex = &storeMutex_;
}

CellRetimer::~CellRetimer() {
    if (thread_.joinable()) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closing_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
}

void CellRetimer::start() {
    if (pool_) { // the pool's servers are running already
        thread_ = std::thread(&CellRetimer::loop, this);
        return;
    }
    // The grader starts here, before the first attempt, so the first cell whose arms are final finds it ready
    // rather than waiting out its start-up while the last gradings of the run go by.
    grader_ = std::make_unique<GraderProcess>(launch_);
    if (Status started = grader_->start(); !started) {
        // Said once; the cells stay missing for the next run (or mkb retime).
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++counts_.errors;
        }
        onError_("re-timing: " + started.error().message);
        return; // no thread: finish() has nothing to join
    }
    thread_ = std::thread(&CellRetimer::loop, this);
}

void CellRetimer::enqueue(const Cell& cell) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(cell);
    }
    wake_.notify_all();
}

CellRetimeCounts CellRetimer::finish(bool sweep) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closing_ = true;
        sweep_ = sweep;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return counts_;
}

void CellRetimer::retimePass(const RetimeScope& scope) {
    RetimeJob job = job_;
    job.scope = scope;
    auto retimed = pool_ ? retimeOnPool(job) : runRetimes(store_, *grader_, job, {}, onOutcome_, &cancel_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (retimed) {
            counts_.retimed += retimed->retimed + retimed->kernelFailed;
            counts_.errors += retimed->errors;
            return;
        }
        ++counts_.errors;
    }
    onError_("re-timing: " + retimed.error().message);
}

Result<RetimeSummary> CellRetimer::retimeOnPool(const RetimeJob& job) {
    Result<RetimeSummary> retimed = makeError("no device of the run re-timed the cells");
    Status ran = pool_->runOnOneDevice(
        [&](GraderProcess& server, const std::string&, const std::string& graderDevice) -> Status {
            RetimeJob onDevice = job;
            onDevice.device = graderDevice; // what the grader is told and the re-timing records
            retimed = runRetimes(store_, server, onDevice, {}, onOutcome_, &cancel_);
            return Ok{};
        },
        "", &cancel_);
    if (!ran) {
        return ran.error();
    }
    return retimed;
}

void CellRetimer::loop() {
    while (true) {
        Cell cell;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            // Polls for cancel too: a signal handler cannot notify a condition variable.
            while (queue_.empty() && !closing_ && !cancel_.load()) {
                wake_.wait_for(lock, std::chrono::milliseconds(100));
            }
            if (cancel_.load() || queue_.empty()) {
                break;
            }
            cell = queue_.front();
            queue_.pop_front();
        }
        // One cell: the run's scope narrowed to its problem, direction and replicate.
        RetimeScope scope = job_.scope;
        scope.problems.erase(std::remove_if(scope.problems.begin(), scope.problems.end(),
                                            [&](const Problem& p) { return p.number != cell.problemNumber; }),
                             scope.problems.end());
        scope.directions = {cell.direction};
        scope.replicates = {cell.replicate};
        retimePass(scope);
    }
    bool sweep = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        sweep = sweep_ && !cancel_.load();
    }
    if (sweep) {
        retimePass(job_.scope);
    }
    if (grader_) {
        grader_->stop();
    }
}

} // namespace mkb
