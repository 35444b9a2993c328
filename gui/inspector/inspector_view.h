// The transfer inspector for one comparison: the source skill beside the attempt's own skill (with claim tagging),
// the base, skill and source kernels as side-by-side diffs, verdicts, tiers and outcome, and every grader report.
#pragma once

#include "core/records/calibration.h"

#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"
#include "core/analysis/transfer.h"
#include "core/io/kbx_transitions.h"
#include "core/io/transfer_case.h"
#include "core/records/store_records.h"
#include "core/util/result.h"
#include "gui/common/job_runner.h"
#include "gui/project/comparison_detail.h"

#include <QWidget>
#include <map>
#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;
class QTabWidget;

namespace mkb::gui {

class DiffView;
class MarkdownPane;
class ProjectData;

class InspectorView : public QWidget {
    Q_OBJECT
public:
    /// Which skill a tag or the annotation list is about.
    enum class SkillSide { Source = 0, Attempt = 1 };
    /// Which kernels the diff compares.
    enum class KernelPair { BaseVsSkill = 0, SourceVsSkill = 1, SourceVsBase = 2 };

    explicit InspectorView(QWidget* parent = nullptr);

    /// One line on how the outcome was timed: the paired ratio with its CI and "within noise", a pass/fail decision,
    /// or the unpaired fallback (shown under the inspector's headline).
    static QString timingSummary(const analysis::Comparison& comparison, const analysis::OutcomeJudgement& judgement,
                                 const analysis::AnalysisSettings& settings);

    /// The project each comparison's detail is read from (ProjectData::readDetail) and annotations are written
    /// through; clears the view.
    void setProjectData(ProjectData* data);
    void setSettings(const analysis::AnalysisSettings& settings) { settings_ = settings; }
    /// Shows one comparison: its verdict numbers and kernels at once, then its stored detail (skills, the kernels
    /// the store holds, grader reports, annotations) once read off the GUI thread (detailShown). Without a project
    /// only the numbers and kernels are shown.
    void showComparison(const analysis::Comparison& comparison);
    /// Whether the shown comparison's detail is still being read.
    bool isReadingDetail() const { return details_.isJobRunning(); }
    /// Shows one KernelBench-X transition (loaded with the project, so no store is read): the before and after
    /// rounds' code as the Kernels tab's diff, under a header naming both rounds' verdicts (theirs and ours per
    /// boundary, with the reason when not correct) and the paired ratio with its CI and standing.
    void showTransition(const io::KbxTransition& transition);
    /// The header showTransition shows (HTML).
    static QString transitionHeader(const io::KbxTransition& transition);
    void clear();

    /// Tags [start, end) (QString positions in the chosen skill's text) and stores the annotation; the list refreshes.
    Status tagRange(SkillSide side, int start, int end, AnnotationTag tag, const QString& note);
    /// Tags the current selection of the chosen skill's pane with the tag and note controls' values.
    Status tagSelection(SkillSide side);
    Status deleteAnnotation(std::int64_t annotationId);
    /// The annotations of the chosen skill (empty when it has none or no skill).
    std::vector<AnnotationRecord> annotationsOf(SkillSide side) const;

    void setKernelPair(KernelPair pair);

    MarkdownPane* sourceSkillPane() const { return sourceSkill_; }
    MarkdownPane* attemptSkillPane() const { return attemptSkill_; }
    DiffView* diffView() const { return diff_; }
    QTableWidget* armsTable() const { return arms_; }
    QPlainTextEdit* reportsPane() const { return reports_; }
    QListWidget* annotationList() const { return annotationList_; }
    QLabel* headline() const { return headline_; }
    QComboBox* tagCombo() const { return tagCombo_; }
    QLineEdit* noteField() const { return note_; }

signals:
    /// An annotation was added or deleted (the status bar says so).
    void annotationsChanged();
    /// The shown comparison's stored detail arrived and is shown.
    void detailShown();
    void errorOccurred(const QString& message);

private:
    struct SkillInfo {
        std::optional<SkillRecord> record;
        QString text;
    };
    static SkillInfo skillOf(const TransferArm& arm);
    /// Takes a comparison's detail in and shows it.
    void takeDetail(ComparisonDetail& detail);
    /// Fills the skills, arms, diff, reports and annotations from comparison_ and case_.
    void fillCase();
    void fillArms();
    void fillReports();
    void fillDiff();
    void refreshAnnotations();
    const SkillInfo& skillInfo(SkillSide side) const;

    /// The newest live calibration of the device named deviceName (its name or id), from the detail; none without.
    std::optional<CalibrationRecord> calibrationOf(const std::string& deviceName) const;
    /// The speedup cell of one arm: the within-grading 95% CI, and beside it, where the device has a calibration, the
    /// interval widened by the between-grading spread the calibration's A/A controls measured, with its figure.
    void describeSpeedup(const analysis::Attempt& attempt, double low, double high, QString& text, QString& tip) const;

    ProjectData* data_ = nullptr;
    analysis::AnalysisSettings settings_;
    std::vector<CalibrationRecord> calibrations_; // the store's live calibrations, read with the detail
    std::optional<analysis::Comparison> comparison_;
    bool hasDetail_ = false; // case_, calibrations_ and annotations_ hold comparison_'s stored detail
    TransferCase case_;      // the stored detail of comparison_'s trials
    std::map<std::int64_t, std::vector<AnnotationRecord>> annotations_; // of case_'s skills, by skill id
    SkillInfo sourceSkillInfo_;
    SkillInfo attemptSkillInfo_;
    KernelPair kernelPair_ = KernelPair::BaseVsSkill;

    QLabel* headline_ = nullptr;
    QTableWidget* arms_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    MarkdownPane* sourceSkill_ = nullptr;
    MarkdownPane* attemptSkill_ = nullptr;
    QComboBox* tagSkillCombo_ = nullptr;
    QComboBox* tagCombo_ = nullptr;
    QLineEdit* note_ = nullptr;
    QListWidget* annotationList_ = nullptr;
    QComboBox* kernelPairCombo_ = nullptr;
    DiffView* diff_ = nullptr;
    QPlainTextEdit* reports_ = nullptr;
    JobRunner details_{this}; // reads the shown comparison's detail; showing another one supersedes it
};

} // namespace mkb::gui
