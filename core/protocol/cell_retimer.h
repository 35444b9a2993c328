// Re-timing a run's cells while the run goes on (DESIGN §5.5): a cell is queued as soon as its three arms are final,
// and one thread re-times the queue on the run's device through a grader of its own (each re-timing holds the
// device's GPU lock, as a grading does), or, in a run over several devices, each pass whole on one device of the run's
// pool; a last sweep re-times whatever of the run's scope is still missing or stale.
#pragma once

#include "core/grader_client/grader_pool.h"
#include "core/grader_client/grader_process.h"
#include "core/protocol/cells.h"
#include "core/protocol/retimer.h"
#include "core/store/store.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace mkb {

/// What the re-timings of one run came to.
struct CellRetimeCounts {
    int retimed = 0; // cells whose result was stored (a kernel failing in the child included)
    int errors = 0;  // cells (or whole passes) that got no result: left missing or stale for the next run
};

class CellRetimer {
public:
    /// job.scope is the run's whole selection; the store is shared with the run's workers, so every store call
    /// holds storeMutex. onOutcome hears each re-timed cell, onError a pass that could not run at all (both from
    /// the retimer's thread). With a pool (started, outliving the retimer) each pass runs whole on one of its devices
    /// and launch is not used.
    CellRetimer(Store& store, std::mutex& storeMutex, GraderLaunch launch, RetimeJob job,
                std::function<void(const RetimeOutcome&)> onOutcome, std::function<void(const std::string&)> onError,
                const std::atomic<bool>& cancel, GraderPool* pool = nullptr);
    ~CellRetimer();
    CellRetimer(const CellRetimer&) = delete;
    CellRetimer& operator=(const CellRetimer&) = delete;

    /// Starts the thread and its grader (so the first cell does not wait for the grader to start).
    void start();
    /// Queues a cell whose arms are final in this run.
    void enqueue(const Cell& cell);
    /// Waits for the queued cells (dropped on cancel), then, when sweep, re-times what of the whole scope is still
    /// missing or stale; stops the grader. The counts cover every pass.
    CellRetimeCounts finish(bool sweep);

private:
    void loop();
    void retimePass(const RetimeScope& scope);
    /// One pass on a device of the pool: moved whole to another device when the one it ran on is lost.
    Result<RetimeSummary> retimeOnPool(const RetimeJob& job);

    Store& store_;
    std::mutex& storeMutex_;
    GraderLaunch launch_;
    RetimeJob job_;
    std::function<void(const RetimeOutcome&)> onOutcome_;
    std::function<void(const std::string&)> onError_;
    const std::atomic<bool>& cancel_;
    GraderPool* pool_;                      // null: the retimer's own grader
    std::unique_ptr<GraderProcess> grader_; // made and started in start(), without a pool

    std::mutex mutex_; // guards the queue, the flags and the counts
    std::condition_variable wake_;
    std::deque<Cell> queue_;
    bool closing_ = false;
    bool sweep_ = false;
    CellRetimeCounts counts_;
    std::thread thread_;
};

} // namespace mkb
