// ProjectData: each load opens its own Store in a worker thread (a Store is single-threaded), reads the live trials,
// builds comparisons there, and hands the result back to the GUI thread, where only the newest load is taken in.
#include "gui/project/project_data.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QThread>

#include "core/store/store.h"

#include <filesystem>

namespace mkb::gui {

struct ProjectData::LoadResult {
    bool ok = false;
    QString error;
    std::vector<TrialRecord> trials;
    std::vector<analysis::Comparison> comparisons;
};

ProjectData::ProjectData(QObject* parent) : QObject(parent) {}

ProjectData::~ProjectData() {
    // Threads hold no pointer to this object's data; waiting keeps their finished() handlers from outliving us.
    for (QThread* thread : findChildren<QThread*>(QString(), Qt::FindDirectChildrenOnly)) {
        thread->wait();
    }
}

void ProjectData::setStorePath(const QString& path) {
    storePath_ = path;
    if (path.isEmpty()) {
        ++latestTicket_; // drops any load still running
        loading_ = false;
        setTrials({});
        return;
    }
    startLoad();
}

void ProjectData::reload() {
    if (!storePath_.isEmpty()) {
        startLoad();
    }
}

void ProjectData::startLoad() {
    const int ticket = ++latestTicket_;
    const std::filesystem::path path(storePath_.toStdString());
    auto result = std::make_shared<LoadResult>();
    QThread* thread = QThread::create([path, result] {
        auto store = Store::open(path, OpenMode::ReadExisting); // a reader: no page-by-page check on open
        if (!store) {
            result->error = QString::fromStdString(store.error().message);
            return;
        }
        auto trials = (*store)->loadTrials({}, TrialDetail::Lean); // the inspector reads one trial in full
        if (!trials) {
            result->error = QString::fromStdString(trials.error().message);
            return;
        }
        result->trials = std::move(trials.value());
        result->comparisons = analysis::buildComparisons(result->trials);
        result->ok = true;
    });
    thread->setParent(this);
    ++runningThreads_;
    connect(thread, &QThread::finished, this, [this, thread, ticket, result] {
        --runningThreads_;
        thread->deleteLater();
        takeResult(ticket, result);
    });
    const bool wasLoading = loading_;
    loading_ = true;
    thread->start();
    if (!wasLoading) {
        emit loadingStarted();
    }
}

void ProjectData::takeResult(int ticket, const std::shared_ptr<LoadResult>& result) {
    if (ticket != latestTicket_) {
        return; // superseded by a newer load (or by clearing the path)
    }
    loading_ = false;
    if (!result->ok) {
        lastError_ = result->error;
        emit loadFailed(lastError_);
        return;
    }
    lastError_.clear();
    trials_ = std::move(result->trials);
    comparisons_ = std::move(result->comparisons);
    ++generation_;
    emit loaded();
}

void ProjectData::setTrials(std::vector<TrialRecord> trials) {
    trials_ = std::move(trials);
    comparisons_ = analysis::buildComparisons(trials_);
    lastError_.clear();
    ++generation_;
    emit loaded();
}

const TrialRecord* ProjectData::trial(std::int64_t trialId) const {
    for (const TrialRecord& record : trials_) {
        if (record.id == trialId) {
            return &record;
        }
    }
    return nullptr;
}

void ProjectData::setSettings(const analysis::AnalysisSettings& settings) {
    settings_ = settings;
    emit settingsChanged();
}

bool ProjectData::waitUntilIdle(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while ((loading_ || runningThreads_ > 0) && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    return !loading_ && runningThreads_ == 0;
}

} // namespace mkb::gui
