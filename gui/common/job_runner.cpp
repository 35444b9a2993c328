// JobRunner: a job's cancel flag is set when it is superseded, cancelled, or its context or runner goes away; results
// and partial results are posted to the context only while the flag is clear, under the mutex the context's
// destruction takes too, so nothing is posted to an object already gone.
#include "gui/common/job_runner.h"

#include <QThread>
#include <QThreadPool>
#include <algorithm>

namespace mkb::gui {

void detail::JobRunnerShared::cancelWorking() {
    for (const auto& flag : working) {
        flag->store(true);
    }
}

void JobControl::post(std::function<void()> onContextThread) const {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    QObject* context = shared_->context.data();
    if (context == nullptr || cancelled()) {
        return;
    }
    QMetaObject::invokeMethod(
        context,
        [cancelled = cancelled_, onContextThread = std::move(onContextThread)] {
            if (!cancelled->load()) {
                onContextThread();
            }
        },
        Qt::QueuedConnection);
}

JobRunner::JobRunner(QObject* context) {
    shared_->context = context;
    // Direct: runs in the destructor of the context, before its posted events are removed.
    contextWatch_ = QObject::connect(context, &QObject::destroyed, [shared = shared_] {
        std::lock_guard<std::mutex> lock(shared->mutex);
        shared->context = nullptr;
        shared->cancelWorking();
    });
}

JobRunner::~JobRunner() {
    QObject::disconnect(contextWatch_);
    cancelAll();
    std::unique_lock<std::mutex> lock(shared_->mutex);
    shared_->workReturned.wait(lock, [this] { return shared_->working.empty(); });
}

void JobRunner::cancelAll() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->cancelWorking();
    if (newest_) {
        newest_->store(true); // its work may have returned already, with its result on the way
        newest_.reset();
    }
}

bool JobRunner::isBusy() const {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return isJobRunning() || !shared_->working.empty();
}

std::shared_ptr<std::atomic<bool>> JobRunner::beginJob() {
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->cancelWorking();
    if (newest_) {
        newest_->store(true); // its work may have returned already, with its result on the way
    }
    cancelled->store(shared_->context.isNull());
    shared_->working.push_back(cancelled);
    newest_ = cancelled;
    return cancelled;
}

void JobRunner::runOnPool(std::function<void()> job, const JobControl& control) {
    jobPool().start([job = std::move(job), shared = control.shared_, flag = control.cancelled_] {
        job();
        std::lock_guard<std::mutex> lock(shared->mutex);
        std::erase(shared->working, flag);
        shared->workReturned.notify_all();
    });
}

QThreadPool& jobPool() {
    static QThreadPool pool;
    static const bool sized = [] {
        pool.setMaxThreadCount(std::max(4, QThread::idealThreadCount()));
        return true;
    }();
    Q_UNUSED(sized);
    return pool;
}

} // namespace mkb::gui
