// Running a piece of work on a worker thread and taking its result back on the owner's (GUI) thread.
#pragma once

#include <QObject>
#include <QThread>
#include <functional>
#include <memory>
#include <optional>

namespace mkb::gui {

/// Runs work() on a new thread parented to owner and calls done(result) on owner's thread when it finished.
/// The owner must call waitForWorkers(this) in its destructor, so no worker outlives it.
template <typename Result>
QThread* runInBackground(QObject* owner, std::function<Result()> work, std::function<void(Result&)> done) {
    auto result = std::make_shared<std::optional<Result>>();
    QThread* thread = QThread::create([work = std::move(work), result] { result->emplace(work()); });
    thread->setParent(owner);
    QObject::connect(thread, &QThread::finished, owner, [thread, result, done = std::move(done)] {
        thread->deleteLater();
        if (result->has_value()) {
            done(**result);
        }
    });
    thread->start();
    return thread;
}

/// Waits for every worker thread owned by owner (its direct QThread children).
inline void waitForWorkers(QObject* owner) {
    for (QThread* thread : owner->findChildren<QThread*>(QString(), Qt::FindDirectChildrenOnly)) {
        thread->wait();
    }
}

} // namespace mkb::gui
