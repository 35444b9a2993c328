// ProjectData: each load opens its own Store in a job (a Store is single-threaded) and hands its results back to the
// GUI thread in two stages, the comparisons and the overview first, then the trials; a newer load cancels it. The
// overview's bootstrap intervals are a job of their own once its numbers are in; the annotation writes use one writer
// Store.
#include "gui/project/project_data.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QThread>

#include "core/io/attempt_loader.h"
#include "core/io/skill_annotations.h"
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

ProjectData::~ProjectData() = default; // the runners cancel their jobs and wait for them

void ProjectData::setStorePath(const QString& path) {
    storePath_ = path;
    writer_.reset();
    if (path.isEmpty()) {
        loads_.cancelAll(); // drops any load still running
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
    const std::filesystem::path path(storePath_.toStdString());
    summaryTaken_ = false;
    loads_.start(
        [this, path, settings = settings_, settingsRevision = settingsRevision_](const JobControl& job) {
            LoadResult result;
            auto store = Store::open(path, OpenMode::ReadExisting); // a reader: no page-by-page check on open
            if (!store) {
                result.error = QString::fromStdString(store.error().message);
                return result;
            }
            // Stage 1, the summary first: comparisons and the overview, read row by row into attempts (with every
            // column, the default, so they equal the attempts built from the trials).
            Result<io::LoadedAttempts> attempts = io::loadAttempts(**store, io::AttemptLoadOptions{});
            if (!attempts) {
                result.error = QString::fromStdString(attempts.error().message);
                return result;
            }
            if (job.cancelled()) {
                return result;
            }
            auto summary = std::make_shared<Summary>();
            summary->comparisons = std::move(attempts->comparisons);
            // Point estimates only: the bootstrap intervals follow from another job (startIntervals), so the overview
            // shows without waiting for them.
            summary->overviewRows = gui::overviewRows(summary->comparisons, settings, OverviewIntervals::Deferred);
            summary->familyBars = gui::familyBars(summary->comparisons, settings, OverviewIntervals::Deferred);
            summary->directionMatrix = gui::overviewMatrix(summary->comparisons, settings, OverviewIntervals::Deferred);
            summary->settingsRevision = settingsRevision;
            Result<report::CalibrationSummary> calibration = report::calibrationSummary(**store);
            if (!calibration) {
                result.error = QString::fromStdString(calibration.error().message);
                return result;
            }
            summary->calibration = std::move(calibration.value());
            // Arrives on the GUI thread before the result, and only while this load is the newest.
            job.post([this, summary] { takeSummary(*summary); });
            if (job.cancelled()) {
                return result;
            }
            // Stage 2: the trials themselves, for the views that list or open trials.
            auto trials = (*store)->loadTrials({}, TrialDetail::Lean); // the inspector reads one trial in full
            if (!trials) {
                result.error = QString::fromStdString(trials.error().message);
                return result;
            }
            result.trials = std::move(trials.value());
            if (job.cancelled()) {
                return result;
            }
            // KernelBench-X's transitions and the agreement of our regradings, for the transitions list, the
            // inspector and the category chart.
            Result<io::CategoryOf> categoryOf = io::storedCategoryOf(**store);
            if (!categoryOf) {
                result.error = QString::fromStdString(categoryOf.error().message);
                return result;
            }
            Result<std::vector<io::KbxTransition>> transitions =
                io::loadKbxTransitions(**store, std::nullopt, *categoryOf);
            if (!transitions) {
                result.error = QString::fromStdString(transitions.error().message);
                return result;
            }
            result.kbxTransitions = std::move(transitions.value());
            Result<std::vector<io::KbxBoundaryAgreement>> agreement =
                io::loadKbxAgreement(**store, std::nullopt, *categoryOf);
            if (!agreement) {
                result.error = QString::fromStdString(agreement.error().message);
                return result;
            }
            result.kbxAgreement = std::move(agreement.value());
            result.ok = true;
            return result;
        },
        [this](LoadResult& result) { takeResult(result); });
    if (!wasLoading) {
        emit loadingStarted();
    }
}

void ProjectData::takeSummary(Summary& summary) {
    summaryTaken_ = true;
    comparisons_ = std::make_shared<const std::vector<analysis::Comparison>>(std::move(summary.comparisons));
    calibration_ = std::move(summary.calibration);
    if (summary.settingsRevision == settingsRevision_) {
        overviewRows_ = std::move(summary.overviewRows);
        familyBars_ = std::move(summary.familyBars);
        directionMatrix_ = std::move(summary.directionMatrix);
        startIntervals();
    } else {
        computeOverview(); // the settings changed while loading
    }
    emit summaryLoaded();
}

void ProjectData::takeResult(LoadResult& result) {
    if (!result.ok) {
        lastError_ = result.error;
        emit loadFailed(lastError_);
        return;
    }
    lastError_.clear();
    trials_ = std::move(result.trials);
    kbxTransitions_ = std::move(result.kbxTransitions);
    kbxAgreement_ = std::move(result.kbxAgreement);
    trialsSortedById_ = true; // the store loads them in id order
    if (!summaryTaken_) {
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
    familyBars_ = gui::familyBars(*comparisons_, settings_, OverviewIntervals::Deferred);
    directionMatrix_ = gui::overviewMatrix(*comparisons_, settings_, OverviewIntervals::Deferred);
    startIntervals();
}

void ProjectData::startIntervals() {
    intervals_.start([comparisons = comparisons_, settings = settings_](
                         const JobControl& job) { return overviewIntervals(*comparisons, settings, job.cancelFlag()); },
                     [this](OverviewIntervalSet& intervals) {
                         fillIntervals(intervals, overviewRows_, familyBars_, directionMatrix_);
                         emit overviewIntervalsLoaded();
                     });
}

bool ProjectData::readDetail(const analysis::Comparison& comparison, JobRunner& runner,
                             std::function<void(ComparisonDetail&)> show) const {
    if (storePath_.isEmpty()) {
        return false;
    }
    runner.start(
        [path = std::filesystem::path(storePath_.toStdString()), comparison](const JobControl&) {
            auto store = Store::open(path, OpenMode::ReadExisting);
            if (store) {
                return readComparisonDetail(**store, comparison);
            }
            ComparisonDetail unread;
            for (TransferArm* arm :
                 {&unread.transferCase.source, &unread.transferCase.base, &unread.transferCase.skill}) {
                arm->error = store.error().message;
            }
            return unread;
        },
        std::move(show));
    return true;
}

Result<Store*> ProjectData::writer() {
    if (storePath_.isEmpty()) {
        return makeError("no project is open; open a project first");
    }
    if (!writer_) {
        auto opened = Store::open(std::filesystem::path(storePath_.toStdString()), OpenMode::MustExist);
        if (!opened) {
            return opened.error();
        }
        writer_ = std::move(opened.value());
    }
    return writer_.get();
}

Result<AnnotationRecord> ProjectData::tagClaim(const SkillRecord& skill, const ClaimTag& claim) {
    Result<Store*> store = writer();
    if (!store) {
        return store.error();
    }
    Result<AnnotationRecord> added = mkb::tagClaim(**store, skill, claim);
    if (added) {
        announceAnnotations(skill.id);
    }
    return added;
}

Status ProjectData::deleteAnnotation(std::int64_t skillId, std::int64_t annotationId) {
    Result<Store*> store = writer();
    if (!store) {
        return store.error();
    }
    Status deleted = deleteClaimTag(**store, annotationId);
    if (deleted) {
        announceAnnotations(skillId);
    }
    return deleted;
}

void ProjectData::announceAnnotations(std::int64_t skillId) {
    auto annotations = skillAnnotations(*writer_, skillId);
    emit skillAnnotationsChanged(skillId, annotations ? *annotations : std::vector<AnnotationRecord>{});
}

bool ProjectData::waitUntilIdle(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    const auto busy = [this] { return loads_.isBusy() || intervals_.isBusy(); };
    while (busy() && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    return !busy();
}

} // namespace mkb::gui
