// Numbers the background jobs of one kind, so that only the newest job's result is taken in and a superseded one
// is dropped when it arrives.
#pragma once

#include "gui/common/background.h"

#include <functional>
#include <utility>

namespace mkb::gui {

/// Lives in the object that owns the jobs and is used on its (GUI) thread only.
class JobTracker {
public:
    /// Numbers a new job; every job started before it is superseded from now on.
    int startJob() {
        running_ = true;
        return ++latestJob_;
    }
    /// Whether job is the newest one, whose results are wanted.
    bool isCurrent(int job) const { return job == latestJob_; }
    /// Called when a job ended: true when it is the newest one (take its result in), which then runs no more.
    bool finishJob(int job) {
        if (!isCurrent(job)) {
            return false;
        }
        running_ = false;
        return true;
    }
    /// Supersedes every job still running: none of their results will be taken in.
    void supersedeAll() {
        ++latestJob_;
        running_ = false;
    }
    /// Whether the newest job is still running.
    bool isJobRunning() const { return running_; }

    /// Runs work on a worker thread of owner (see runInBackground) and hands its result to take on owner's thread,
    /// unless a newer job was started in the meantime.
    template <typename Result>
    void run(QObject* owner, std::function<Result()> work, std::function<void(Result&)> take) {
        const int job = startJob();
        runInBackground<Result>(owner, std::move(work), [this, job, take = std::move(take)](Result& result) {
            if (finishJob(job)) {
                take(result);
            }
        });
    }

private:
    int latestJob_ = 0;
    bool running_ = false;
};

} // namespace mkb::gui
