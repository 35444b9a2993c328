// ProjectData: each load opens its own Store in a worker thread (a Store is single-threaded) and hands its results
// back to the GUI thread in two stages, the comparisons and the overview first, then the trials; only the newest load
// is taken in. The overview's ΔGM intervals are computed by a worker of their own once its rows are in.
#include "gui/project/project_data.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QThread>

#include "core/io/attempt_loader.h"
#include "core/store/store.h"

#include <algorithm>
#include <filesystem>

namespace mkb::gui {

struct ProjectData::LoadResult {
    bool ok = false;
    QString error;
    std::vector<TrialRecord> trials;
    std::vector<io::KbxTransition> kbxTransitions;
    std::vector<io::KbxBoundaryAgreement> kbxAgreement;
};

/// The first stage of a load: what the overview and every number need, read without holding the trials.
struct ProjectData::Summary {
    std::vector<analysis::Comparison> comparisons;
    std::vector<OverviewRow> overviewRows;
    FamilyBars familyBars;
    analysis::DirectionMatrix directionMatrix;
    report::CalibrationSummary calibration;
    int settingsRevision = 0; // the settings the overview was computed for
};

namespace {

/// The comparisons over trials with their attempts built once, in one vector the comparisons share.
std::shared_ptr<const std::vector<analysis::Comparison>> comparisonsOf(const std::vector<TrialRecord>& trials) {
    const auto attempts = std::make_shared<const std::vector<analysis::Attempt>>(analysis::attemptsFromTrials(trials));
    return std::make_shared<const std::vector<analysis::Comparison>>(analysis::buildComparisons(trials, attempts));
}

} // namespace

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
        loads_.supersedeAll(); // drops any load still running
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
    const bool wasLoading = loads_.isJobRunning();
    const int ticket = loads_.startJob();
    const std::filesystem::path path(storePath_.toStdString());
    auto result = std::make_shared<LoadResult>();
    QThread* thread =
        QThread::create([this, path, result, ticket, settings = settings_, settingsRevision = settingsRevision_] {
            auto store = Store::open(path, OpenMode::ReadExisting); // a reader: no page-by-page check on open
            if (!store) {
                result->error = QString::fromStdString(store.error().message);
                return;
            }
            // Stage 1, the summary first: comparisons and the overview, read row by row into attempts (with every
            // column, the default, so they equal the attempts built from the trials).
            Result<io::LoadedAttempts> attempts = io::loadAttempts(**store, io::AttemptLoadOptions{});
            if (!attempts) {
                result->error = QString::fromStdString(attempts.error().message);
                return;
            }
            auto summary = std::make_shared<Summary>();
            summary->comparisons = std::move(attempts->comparisons);
            // The intervals follow from another worker (startIntervals): the table shows without waiting for them.
            summary->overviewRows = gui::overviewRows(summary->comparisons, settings, OverviewIntervals::Deferred);
            summary->familyBars = gui::familyBars(summary->comparisons, settings);
            summary->directionMatrix =
                analysis::directionMatrix(summary->comparisons, settings, {}, analysis::SummaryInterval::Deferred);
            summary->settingsRevision = settingsRevision;
            Result<report::CalibrationSummary> calibration = report::calibrationSummary(**store);
            if (!calibration) {
                result->error = QString::fromStdString(calibration.error().message);
                return;
            }
            summary->calibration = std::move(calibration.value());
            // Queued to the GUI thread, where it arrives before the thread's finished(); dropped with this object.
            QMetaObject::invokeMethod(
                this, [this, ticket, summary] { takeSummary(ticket, summary); }, Qt::QueuedConnection);
            // Stage 2: the trials themselves, for the views that list or open trials.
            auto trials = (*store)->loadTrials({}, TrialDetail::Lean); // the inspector reads one trial in full
            if (!trials) {
                result->error = QString::fromStdString(trials.error().message);
                return;
            }
            result->trials = std::move(trials.value());
            // KernelBench-X's transitions and the agreement of our regradings, for the transitions list, the
            // inspector and the category chart.
            Result<io::CategoryOf> categoryOf = io::storedCategoryOf(**store);
            if (!categoryOf) {
                result->error = QString::fromStdString(categoryOf.error().message);
                return;
            }
            Result<std::vector<io::KbxTransition>> transitions =
                io::loadKbxTransitions(**store, std::nullopt, *categoryOf);
            if (!transitions) {
                result->error = QString::fromStdString(transitions.error().message);
                return;
            }
            result->kbxTransitions = std::move(transitions.value());
            Result<std::vector<io::KbxBoundaryAgreement>> agreement =
                io::loadKbxAgreement(**store, std::nullopt, *categoryOf);
            if (!agreement) {
                result->error = QString::fromStdString(agreement.error().message);
                return;
            }
            result->kbxAgreement = std::move(agreement.value());
            result->ok = true;
        });
    thread->setParent(this);
    ++runningThreads_;
    connect(thread, &QThread::finished, this, [this, thread, ticket, result] {
        --runningThreads_;
        thread->deleteLater();
        takeResult(ticket, result);
    });
    thread->start();
    if (!wasLoading) {
        emit loadingStarted();
    }
}

void ProjectData::takeSummary(int ticket, const std::shared_ptr<Summary>& summary) {
    if (!loads_.isCurrent(ticket)) {
        return; // superseded
    }
    summaryTicket_ = ticket;
    comparisons_ = std::make_shared<const std::vector<analysis::Comparison>>(std::move(summary->comparisons));
    calibration_ = std::move(summary->calibration);
    if (summary->settingsRevision == settingsRevision_) {
        overviewRows_ = std::move(summary->overviewRows);
        familyBars_ = std::move(summary->familyBars);
        directionMatrix_ = std::move(summary->directionMatrix);
        startIntervals();
    } else {
        computeOverview(); // the settings changed while loading
    }
    emit summaryLoaded();
}

void ProjectData::takeResult(int ticket, const std::shared_ptr<LoadResult>& result) {
    if (!loads_.finishJob(ticket)) {
        return; // superseded by a newer load (or by clearing the path)
    }
    if (!result->ok) {
        lastError_ = result->error;
        emit loadFailed(lastError_);
        return;
    }
    lastError_.clear();
    trials_ = std::move(result->trials);
    kbxTransitions_ = std::move(result->kbxTransitions);
    kbxAgreement_ = std::move(result->kbxAgreement);
    trialsSortedById_ = true; // the store loads them in id order
    if (summaryTicket_ != ticket) {
        comparisons_ = comparisonsOf(trials_); // not reached: the summary arrives first
        computeOverview();
    }
    ++generation_;
    emit loaded();
}

void ProjectData::setTrials(std::vector<TrialRecord> trials) {
    trials_ = std::move(trials);
    trialsSortedById_ =
        std::is_sorted(trials_.begin(), trials_.end(),
                       [](const TrialRecord& left, const TrialRecord& right) { return left.id < right.id; });
    comparisons_ = comparisonsOf(trials_);
    calibration_ = {};
    kbxTransitions_.clear();
    kbxAgreement_.clear();
    computeOverview();
    lastError_.clear();
    ++generation_;
    emit loaded();
}

const TrialRecord* ProjectData::trial(std::int64_t trialId) const {
    if (trialsSortedById_) {
        auto found = std::lower_bound(trials_.begin(), trials_.end(), trialId,
                                      [](const TrialRecord& record, std::int64_t id) { return record.id < id; });
        return found != trials_.end() && found->id == trialId ? &*found : nullptr;
    }
    for (const TrialRecord& record : trials_) {
        if (record.id == trialId) {
            return &record;
        }
    }
    return nullptr;
}

void ProjectData::setSettings(const analysis::AnalysisSettings& settings) {
    settings_ = settings;
    ++settingsRevision_;
    computeOverview();
    emit settingsChanged();
}

void ProjectData::computeOverview() {
    overviewRows_ = gui::overviewRows(*comparisons_, settings_, OverviewIntervals::Deferred);
    familyBars_ = gui::familyBars(*comparisons_, settings_);
    directionMatrix_ = analysis::directionMatrix(*comparisons_, settings_, {}, analysis::SummaryInterval::Deferred);
    startIntervals();
}

void ProjectData::startIntervals() {
    using Intervals = std::vector<std::optional<analysis::Interval>>;
    intervals_.run<Intervals>(
        this, [comparisons = comparisons_, settings = settings_] { return overviewIntervals(*comparisons, settings); },
        [this](Intervals& intervals) {
            fillIntervals(overviewRows_, intervals);
            emit overviewIntervalsLoaded();
        });
}

bool ProjectData::waitUntilIdle(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    const auto busy = [this] { return isLoading() || runningThreads_ > 0 || intervalsPending(); };
    while (busy() && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    return !busy();
}

} // namespace mkb::gui
