// The one way the workbench works off the GUI thread: jobs on a shared thread pool, each told through a "cancelled?"
// test when a newer job supersedes it or its context object goes away, and each result handed back on the context's
// thread (KDAB/hotspot's JobTracker, with the waiting a Store-reading job needs).
#pragma once

#include <QObject>
#include <QPointer>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

class QThreadPool;

namespace mkb::gui {

namespace detail {

/// What a runner shares with its jobs: the context (null once destroyed) and the cancel flags of the jobs whose work
/// has not yet returned, all under one mutex.
struct JobRunnerShared {
    std::mutex mutex;
    std::condition_variable workReturned;
    QPointer<QObject> context;
    std::vector<std::shared_ptr<std::atomic<bool>>> working;

    /// Sets every working job's flag (under the mutex).
    void cancelWorking();
};

} // namespace detail

/// What a job's work is given: whether it is still wanted, the same as a flag for core calls that take one, and a way
/// to hand a partial result to its context's thread.
class JobControl {
public:
    /// True once a newer job superseded this one, the runner cancelled it, or the context or runner was destroyed:
    /// the work should stop and return; what it returns is then dropped.
    bool cancelled() const { return cancelled_->load(); }
    /// The same test as a flag, for core functions that take `const std::atomic<bool>* cancel`.
    const std::atomic<bool>* cancelFlag() const { return cancelled_.get(); }
    /// Runs onContextThread on the context's thread, unless the job is cancelled before it gets there.
    void post(std::function<void()> onContextThread) const;

private:
    friend class JobRunner;
    JobControl(std::shared_ptr<detail::JobRunnerShared> shared, std::shared_ptr<std::atomic<bool>> cancelled)
        : shared_(std::move(shared)), cancelled_(std::move(cancelled)) {}

    std::shared_ptr<detail::JobRunnerShared> shared_;
    std::shared_ptr<std::atomic<bool>> cancelled_;
};

/// Runs one kind of job for a context object (the object that owns the runner, usually). Used on the context's thread
/// only. Starting a job cancels every older one, so only the newest result is taken in.
class JobRunner {
public:
    explicit JobRunner(QObject* context);
    /// Cancels every job and waits for their work to return, so no job outlives what it was started for.
    ~JobRunner();
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    /// Runs work(control) on the workbench's thread pool and take(result) on the context's thread, unless the job was
    /// cancelled by then. Every job started before it is cancelled now.
    template <typename Work, typename Take>
    void start(Work work, Take take) {
        using Result = std::invoke_result_t<Work&, const JobControl&>;
        static_assert(!std::is_void_v<Result>, "a job's work returns the result its take() receives");
        const JobControl control(shared_, beginJob());
        runOnPool(
            [this, control, work = std::move(work), take = std::move(take)]() mutable {
                auto result = std::make_shared<Result>(work(control));
                // A cancelled job posts nothing; a posted result runs only while the job is still wanted, so the runner
                // (which cancels its jobs when destroyed) is alive then.
                control.post([this, result, take]() mutable {
                    newest_.reset();
                    take(*result);
                });
            },
            control);
    }

    /// Cancels every job: none of their results will be taken in.
    void cancelAll();
    /// Whether the newest job's result is still to come (it is neither delivered nor cancelled).
    bool isJobRunning() const { return newest_ && !newest_->load(); }
    /// Whether any job still works, a cancelled one included, or the newest result is still to come.
    bool isBusy() const;

private:
    std::shared_ptr<std::atomic<bool>> beginJob();
    /// Runs job on the pool; its flag leaves the working list once job returned.
    void runOnPool(std::function<void()> job, const JobControl& control);

    std::shared_ptr<detail::JobRunnerShared> shared_ = std::make_shared<detail::JobRunnerShared>();
    QMetaObject::Connection contextWatch_;
    std::shared_ptr<std::atomic<bool>> newest_; // the cancel flag of the newest job until its result is taken in
};

/// The pool every JobRunner runs on: at least four threads, so a long import leaves room for a load and its intervals.
QThreadPool& jobPool();

} // namespace mkb::gui
