// The loaded analysis inputs of one project store (comparisons with the overview first, then the trials), read off the
// GUI thread and shared by every view that shows numbers.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/direction_matrix.h"
#include "core/analysis/settings.h"
#include "core/io/kbx_regraded_rounds.h"
#include "core/io/kbx_transitions.h"
#include "core/io/skill_annotations.h"
#include "core/records/trial.h"
#include "core/report/report_model.h"
#include "gui/common/job_runner.h"
#include "gui/project/comparison_detail.h"
#include "gui/project/overview_rows.h"

#include <QObject>
#include <QString>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace mkb {
class Store;
}

namespace mkb::gui {

class ProjectData : public QObject {
    Q_OBJECT
public:
    explicit ProjectData(QObject* parent = nullptr);
    /// Cancels the jobs still running and waits for them (their results are dropped).
    ~ProjectData() override;

    /// Sets the store file to read and starts loading it; an empty path clears the data (and emits loaded()).
    void setStorePath(const QString& path);
    QString storePath() const { return storePath_; }

    /// Loads the store again (after a run finished, an import, …). A load still running is superseded: its result
    /// is told to stop and its result is dropped, and only the newest load emits loaded() or loadFailed().
    void reload();

    bool isLoading() const { return loads_.isJobRunning(); }
    /// Increases with every load whose result was taken in (0 = nothing loaded yet).
    int generation() const { return generation_; }
    /// The one-line error of the last load, empty when it succeeded.
    QString lastError() const { return lastError_; }

    /// Every live (not archived) trial of the store, ordered by id.
    const std::vector<TrialRecord>& trials() const { return trials_; }
    /// analysis::buildComparisons over trials(): every comparison, resolved or not.
    const std::vector<analysis::Comparison>& comparisons() const { return *comparisons_; }
    /// The trial with that id, or nullptr (a binary search when trials() ascend by id, as the store loads them).
    const TrialRecord* trial(std::int64_t trialId) const;

    /// The overview's rows and family bars over comparisons() for settings(): computed with the data (off the GUI
    /// thread when loading) and again when the settings change, so showing the overview costs no analysis. Their
    /// bootstrap intervals (ΔGM, S and lift: a bootstrap per group, most of the overview's cost) come after them, from
    /// a job of their own (overviewIntervalsLoaded); until then a row's and the bars' intervalsPending is true.
    const std::vector<OverviewRow>& overviewRows() const { return overviewRows_; }
    /// Whether the overview's intervals (of overviewRows(), familyBars() and directionMatrix()) are still being
    /// computed.
    bool intervalsPending() const { return intervals_.isJobRunning(); }
    const FamilyBars& familyBars() const { return familyBars_; }
    /// The overview's direction matrix over comparisons() for settings() (overviewMatrix: its ΔGM intervals left out,
    /// the heat map shows the lift and its interval), computed with the rows; its lift intervals come with the rows'
    /// (intervalsPending()).
    const analysis::DirectionMatrix& directionMatrix() const { return directionMatrix_; }
    /// The live calibrations matched to the devices and graders of the live re-timings (report::calibrationSummary),
    /// read with the summary; empty when the data came from setTrials.
    const report::CalibrationSummary& calibration() const { return calibration_; }

    /// KernelBench-X's transitions of the live trials (io::loadKbxTransitions, every kind), read with the trials; empty
    /// when the store holds no imported corpus, and when the data came from setTrials.
    const std::vector<io::KbxTransition>& kbxTransitions() const { return kbxTransitions_; }
    /// analysis::kbxAgreement per boundary regraded under (io::loadKbxAgreement), read with the trials; empty without
    /// regradings.
    const std::vector<io::KbxBoundaryAgreement>& kbxAgreement() const { return kbxAgreement_; }

    /// The settings every view passes to the analysis functions (ladder thresholds, δ, clipping).
    const analysis::AnalysisSettings& settings() const { return settings_; }
    /// Replaces the settings and emits settingsChanged() (the data stays; views recompute).
    void setSettings(const analysis::AnalysisSettings& settings);

    /// Test and tool helper: spins the event loop until no load is running and the overview's intervals are in, or
    /// timeoutMs passed; true when idle.
    bool waitUntilIdle(int timeoutMs = 10000);

    /// Replaces the data directly (tests, or a caller that already holds the trials); emits loaded().
    void setTrials(std::vector<TrialRecord> trials);

    /// Reads comparison's detail (readComparisonDetail) from the store off the GUI thread through runner, the
    /// caller's, so that a newer read of the same view supersedes its older one, and hands it to show on the runner's
    /// context thread. Without a store nothing is read and show is not called; false then.
    bool readDetail(const analysis::Comparison& comparison, JobRunner& runner,
                    std::function<void(ComparisonDetail&)> show) const;
    /// Stores claim as an annotation of skill (a one-row write, on the GUI thread), then reads the skill's annotations
    /// back and announces them with skillAnnotationsChanged.
    Result<AnnotationRecord> tagClaim(const SkillRecord& skill, const ClaimTag& claim);
    /// Deletes one annotation of skillId, then announces the skill's annotations as tagClaim does.
    Status deleteAnnotation(std::int64_t skillId, std::int64_t annotationId);

signals:
    void loadingStarted();
    /// The first stage of a load arrived: comparisons(), overviewRows() and familyBars() hold the new data, while
    /// trials() still hold the previous load's (loaded() follows when they are in too).
    void summaryLoaded();
    /// The overview's intervals arrived (after summaryLoaded, setTrials or setSettings): those of overviewRows(),
    /// familyBars() and directionMatrix(); only the intervals changed.
    void overviewIntervalsLoaded();
    /// A load finished and its data replaced the previous data.
    void loaded();
    /// A load failed; the previous data is kept.
    void loadFailed(const QString& reason);
    void settingsChanged();
    /// A skill's annotations changed through tagClaim or deleteAnnotation: these are all of them now.
    void skillAnnotationsChanged(qint64 skillId, const std::vector<mkb::AnnotationRecord>& annotations);

private:
    struct LoadResult;
    struct Summary;
    void startLoad();
    void takeSummary(Summary& summary);
    void takeResult(LoadResult& result);
    void computeOverview();
    /// Computes the intervals of overviewRows_, familyBars_ and directionMatrix_ in a job; a newer start cancels it.
    void startIntervals();
    /// The store tagClaim and deleteAnnotation write to, opened on first use; an error says why it cannot be.
    Result<Store*> writer();
    /// Reads skillId's annotations back after a write and emits skillAnnotationsChanged.
    void announceAnnotations(std::int64_t skillId);

    QString storePath_;
    std::vector<TrialRecord> trials_;
    bool trialsSortedById_ = true;
    // Shared with the job that computes the overview's intervals; replaced, never changed, by a load.
    std::shared_ptr<const std::vector<analysis::Comparison>> comparisons_ =
        std::make_shared<const std::vector<analysis::Comparison>>();
    std::vector<OverviewRow> overviewRows_;
    FamilyBars familyBars_;
    analysis::DirectionMatrix directionMatrix_;
    report::CalibrationSummary calibration_;
    std::vector<io::KbxTransition> kbxTransitions_;
    std::vector<io::KbxBoundaryAgreement> kbxAgreement_;
    analysis::AnalysisSettings settings_;
    int settingsRevision_ = 0; // increases with every setSettings; a load computed for an older one is redone
    QString lastError_;
    int generation_ = 0;
    bool summaryTaken_ = false;     // the newest load's summary (comparisons, overview) is in
    std::unique_ptr<Store> writer_; // for tagClaim and deleteAnnotation; closed when the path changes
    // Declared last, so they cancel and wait for their jobs before the members those jobs' results go to.
    JobRunner loads_{this};     // only the newest load is taken in
    JobRunner intervals_{this}; // only the intervals of the newest overviewRows_ are taken in
};

} // namespace mkb::gui
