// InspectorView: shows a comparison's numbers at once and its stored detail (read through ProjectData off the GUI
// thread) when it arrives; the skills' annotations are written through ProjectData.
#include "gui/inspector/inspector_view.h"

#include "core/analysis/calibration.h"
#include "core/analysis/transfer.h"
#include "core/grader_client/report_text.h"
#include "core/io/skill_annotations.h"
#include "core/report/report_model.h"
#include "core/wire/verdict_json.h"
#include "gui/common/diff_view.h"
#include "gui/common/markdown_pane.h"
#include "gui/project/project_data.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextEdit>
#include <QVBoxLayout>
#include <cmath>
#include <map>
#include <tuple>

namespace mkb::gui {
namespace {

constexpr AnnotationTag kTags[] = {AnnotationTag::Supported, AnnotationTag::Unsupported, AnnotationTag::Contradicted,
                                   AnnotationTag::Other};

/// UTF-8 byte offset of a QString position (annotations store byte offsets into the skill text).
std::int64_t utf8Offset(const QString& text, int position) {
    return text.left(position).toUtf8().size();
}

/// The QString position of a UTF-8 byte offset.
int stringPosition(const QString& text, std::int64_t offset) {
    return int(QString::fromUtf8(text.toUtf8().left(int(offset))).size());
}

QString verdictWord(const analysis::Attempt& attempt) {
    if (attempt.skipped) {
        return QObject::tr("skipped (no source skill)");
    }
    if (!attempt.graded) {
        return QObject::tr("not graded");
    }
    return attempt.passed ? QObject::tr("passed") : QObject::tr("failed");
}

// Scrolls `to` to the same relative position as `from` (skills differ in length, so rows cannot match).
void linkProportionally(QScrollBar* from, QScrollBar* to) {
    QObject::connect(from, &QScrollBar::valueChanged, to, [from, to](int value) {
        if (from->maximum() <= 0) {
            return;
        }
        const int target = int(double(value) / from->maximum() * to->maximum() + 0.5);
        if (to->value() != target) {
            const QSignalBlocker blocker(to);
            to->setValue(target);
        }
    });
}

} // namespace

InspectorView::InspectorView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("inspectorView"));
    headline_ = new QLabel(tr("Open a comparison from the Comparisons page (Enter or double-click)."), this);
    headline_->setObjectName(QStringLiteral("inspectorHeadline"));
    headline_->setWordWrap(true);
    headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    arms_ = new QTableWidget(0, 9, this);
    arms_->setObjectName(QStringLiteral("inspectorArms"));
    arms_->setHorizontalHeaderLabels({tr("Role"), tr("Arm"), tr("Trial"), tr("Verdict"), tr("Tier"), tr("Speedup"),
                                      tr("Kernel ms"), tr("Eager ms"), tr("Stage / error")});
    arms_->verticalHeader()->hide();
    arms_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    arms_->horizontalHeader()->setStretchLastSection(true);
    arms_->setMaximumHeight(130);

    // Skills page: two panes, tag controls, annotation list.
    sourceSkill_ = new MarkdownPane(tr("Source skill (handed over)"), this);
    sourceSkill_->setObjectName(QStringLiteral("sourceSkillPane"));
    attemptSkill_ = new MarkdownPane(tr("Skill written by the skill-conditioned attempt"), this);
    attemptSkill_->setObjectName(QStringLiteral("attemptSkillPane"));
    linkProportionally(sourceSkill_->editor()->verticalScrollBar(), attemptSkill_->editor()->verticalScrollBar());
    linkProportionally(attemptSkill_->editor()->verticalScrollBar(), sourceSkill_->editor()->verticalScrollBar());
    auto* skillSplit = new QSplitter(Qt::Horizontal, this);
    skillSplit->addWidget(sourceSkill_);
    skillSplit->addWidget(attemptSkill_);

    tagSkillCombo_ = new QComboBox(this);
    tagSkillCombo_->addItem(tr("Source skill"), int(SkillSide::Source));
    tagSkillCombo_->addItem(tr("Attempt's skill"), int(SkillSide::Attempt));
    tagCombo_ = new QComboBox(this);
    tagCombo_->setObjectName(QStringLiteral("annotationTag"));
    for (AnnotationTag tag : kTags) {
        tagCombo_->addItem(QString::fromLatin1(toString(tag)), int(tag));
    }
    note_ = new QLineEdit(this);
    note_->setObjectName(QStringLiteral("annotationNote"));
    note_->setPlaceholderText(tr("Note (what the evidence is)"));
    auto* tagButton = new QPushButton(tr("Tag Selection"), this);
    tagButton->setObjectName(QStringLiteral("tagSelection"));
    tagButton->setToolTip(tr("Select a claim in the chosen skill pane, pick a tag, add a note, then tag it"));
    connect(tagButton, &QPushButton::clicked, this, [this] {
        const Status status = tagSelection(SkillSide(tagSkillCombo_->currentData().toInt()));
        if (!status) {
            emit errorOccurred(QString::fromStdString(status.error().message));
        }
    });
    auto* tagBar = new QHBoxLayout;
    tagBar->addWidget(new QLabel(tr("Tag claim in"), this));
    tagBar->addWidget(tagSkillCombo_);
    tagBar->addWidget(tagCombo_);
    tagBar->addWidget(note_, 1);
    tagBar->addWidget(tagButton);

    annotationList_ = new QListWidget(this);
    annotationList_->setObjectName(QStringLiteral("annotationList"));
    annotationList_->setMaximumHeight(120);
    connect(tagSkillCombo_, &QComboBox::currentIndexChanged, this, &InspectorView::refreshAnnotations);
    connect(annotationList_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        const auto side = SkillSide(tagSkillCombo_->currentData().toInt());
        MarkdownPane* pane = side == SkillSide::Source ? sourceSkill_ : attemptSkill_;
        const QString& text = skillInfo(side).text;
        pane->selectRange(stringPosition(text, item->data(Qt::UserRole + 1).toLongLong()),
                          stringPosition(text, item->data(Qt::UserRole + 2).toLongLong()));
    });
    auto* deleteButton = new QPushButton(tr("Delete Annotation"), this);
    deleteButton->setObjectName(QStringLiteral("deleteAnnotation"));
    connect(deleteButton, &QPushButton::clicked, this, [this] {
        if (QListWidgetItem* item = annotationList_->currentItem()) {
            const Status status = deleteAnnotation(item->data(Qt::UserRole).toLongLong());
            if (!status) {
                emit errorOccurred(QString::fromStdString(status.error().message));
            }
        }
    });
    auto* annotationBar = new QHBoxLayout;
    annotationBar->addWidget(annotationList_, 1);
    annotationBar->addWidget(deleteButton, 0, Qt::AlignTop);

    auto* skillsPage = new QWidget(this);
    auto* skillsLayout = new QVBoxLayout(skillsPage);
    skillsLayout->addWidget(skillSplit, 1);
    skillsLayout->addLayout(tagBar);
    skillsLayout->addLayout(annotationBar);

    // Kernels page.
    kernelPairCombo_ = new QComboBox(this);
    kernelPairCombo_->setObjectName(QStringLiteral("kernelPair"));
    kernelPairCombo_->addItem(tr("Base (solo target) vs skill-conditioned"), int(KernelPair::BaseVsSkill));
    kernelPairCombo_->addItem(tr("Source vs skill-conditioned"), int(KernelPair::SourceVsSkill));
    kernelPairCombo_->addItem(tr("Source vs base"), int(KernelPair::SourceVsBase));
    connect(kernelPairCombo_, &QComboBox::currentIndexChanged, this,
            [this] { setKernelPair(KernelPair(kernelPairCombo_->currentData().toInt())); });
    diff_ = new DiffView(this);
    auto* kernelsPage = new QWidget(this);
    auto* kernelsLayout = new QVBoxLayout(kernelsPage);
    kernelsLayout->addWidget(kernelPairCombo_);
    kernelsLayout->addWidget(diff_, 1);

    // Reports page.
    reports_ = new QPlainTextEdit(this);
    reports_->setObjectName(QStringLiteral("inspectorReports"));
    reports_->setReadOnly(true);
    reports_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

    tabs_ = new QTabWidget(this);
    tabs_->addTab(skillsPage, tr("Skills"));
    tabs_->addTab(kernelsPage, tr("Kernels"));
    tabs_->addTab(reports_, tr("Grader Reports"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(headline_);
    layout->addWidget(arms_);
    layout->addWidget(tabs_, 1);
}

void InspectorView::setProjectData(ProjectData* data) {
    if (data_ != nullptr) {
        disconnect(data_, nullptr, this, nullptr);
    }
    data_ = data;
    if (data_ != nullptr) {
        connect(data_, &ProjectData::skillAnnotationsChanged, this,
                [this](qint64 skillId, const std::vector<AnnotationRecord>& annotations) {
                    if (annotations_.contains(skillId)) {
                        annotations_[skillId] = annotations;
                        refreshAnnotations();
                    }
                });
    }
    clear();
}

void InspectorView::clear() {
    details_.cancelAll();
    comparison_.reset();
    hasDetail_ = false;
    case_ = {};
    calibrations_.clear();
    annotations_.clear();
    sourceSkillInfo_ = {};
    attemptSkillInfo_ = {};
    headline_->setText(tr("Open a comparison from the Comparisons page (Enter or double-click)."));
    arms_->setRowCount(0);
    sourceSkill_->setMarkdown(QString());
    attemptSkill_->setMarkdown(QString());
    diff_->setTexts(QString(), QString(), QString(), QString());
    reports_->clear();
    annotationList_->clear();
}

InspectorView::SkillInfo InspectorView::skillOf(const TransferArm& arm) {
    SkillInfo info;
    if (arm.skill) {
        info.record = *arm.skill;
        info.text = QString::fromStdString(arm.skill->text);
    }
    return info;
}

QString InspectorView::timingSummary(const analysis::Comparison& comparison,
                                     const analysis::OutcomeJudgement& judgement,
                                     const analysis::AnalysisSettings& settings) {
    if (judgement.ratio) {
        const analysis::PairedTiming& paired = *judgement.ratio;
        return tr("Paired re-timing (%1 rounds on %2): skill/base %3, 95% CI [%4, %5]%6")
            .arg(paired.n)
            .arg(QString::fromStdString(comparison.retiming->deviceName))
            .arg(paired.ratio, 0, 'f', 3)
            .arg(paired.ciLow, 0, 'f', 3)
            .arg(paired.ciHigh, 0, 'f', 3)
            .arg(judgement.withinNoise ? tr(" · within noise: the CI contains 1") : QString());
    }
    if (judgement.decisive) {
        return tr("Decided by pass/fail (%1 rule)").arg(QString::fromLatin1(analysis::toString(settings.timing)));
    }
    if (judgement.fellBack) {
        return tr("No paired re-timing: unpaired rule on two separate gradings (cannot resolve a 5% change; run "
                  "`mkb retime`)");
    }
    if (settings.timing == analysis::TimingRule::Unpaired) {
        return comparison.retiming ? tr("Unpaired rule (a paired re-timing exists but is not used)")
                                   : tr("Unpaired rule");
    }
    return tr("No timing needed (both failed, or the skill arm was skipped)");
}

void InspectorView::showComparison(const analysis::Comparison& comparison) {
    kernelPairCombo_->setVisible(true);
    comparison_ = comparison;
    const analysis::Comparison& c = *comparison_;
    hasDetail_ = false;
    case_ = {};
    calibrations_.clear();
    annotations_.clear();
    if (data_ == nullptr || !data_->readDetail(c, details_, [this](ComparisonDetail& detail) { takeDetail(detail); })) {
        details_.cancelAll();
    }
    QString headline =
        tr("<b>%1</b> · %2 · problem %3 %4 (%5) · replicate %6")
            .arg(QString::fromStdString(c.model).toHtmlEscaped(), QString::fromStdString(c.direction).toHtmlEscaped())
            .arg(c.problemNumber)
            .arg(QString::fromStdString(c.problemSlug).toHtmlEscaped(),
                 QString::fromStdString(c.family).toHtmlEscaped())
            .arg(c.replicate);
    if (c.resolved()) {
        const analysis::OutcomeJudgement judgement = analysis::judgeOutcome(c, settings_);
        QString outcome = QString::fromLatin1(analysis::toString(judgement.outcome));
        if (judgement.withinNoise) {
            outcome = tr("%1, within noise").arg(outcome);
        }
        headline += tr("<br>Outcome: <b>%1</b> · source standing: %2 · paired ratio %3")
                        .arg(outcome, QString::fromLatin1(analysis::toString(analysis::sourceStanding(c, settings_))),
                             QString::number(analysis::pairedRatio(c, settings_), 'f', 3));
        headline += QStringLiteral("<br>") + timingSummary(c, judgement, settings_).toHtmlEscaped();
    } else {
        headline += tr("<br>Unresolved: not every arm holds a verdict yet.");
    }
    headline_->setText(headline);
    fillCase();
}

void InspectorView::takeDetail(ComparisonDetail& detail) {
    case_ = std::move(detail.transferCase);
    calibrations_ = std::move(detail.calibrations);
    annotations_ = std::move(detail.skillAnnotations);
    for (const TransferArm* arm : {&case_.source, &case_.skill}) {
        if (arm->skill) {
            annotations_.try_emplace(arm->skill->id); // a skill without annotations still takes in new ones
        }
    }
    hasDetail_ = true;
    fillCase();
    emit detailShown();
}

void InspectorView::fillCase() {
    sourceSkillInfo_ = skillOf(case_.source);
    attemptSkillInfo_ = skillOf(case_.skill);
    sourceSkill_->setMarkdown(sourceSkillInfo_.text);
    attemptSkill_->setMarkdown(attemptSkillInfo_.text);
    fillArms();
    fillDiff();
    fillReports();
    refreshAnnotations();
}

void InspectorView::fillArms() {
    const analysis::Comparison& c = *comparison_;
    const std::tuple<QString, const analysis::Attempt*, const TransferArm*> rows[] = {
        {tr("Source"), c.source.get(), &case_.source},
        {tr("Base"), c.base.get(), &case_.base},
        {tr("Skill"), c.skill.get(), &case_.skill}};
    arms_->setRowCount(3);
    for (int row = 0; row < 3; ++row) {
        const auto& [role, attempt, arm] = rows[row];
        const std::optional<Verdict>& verdict = arm->finalVerdict;
        auto ms = [](const std::optional<double>& value) {
            return value ? QString::number(*value, 'f', 4) : QString();
        };
        // The speedup with its 95% CI: from the attempt when the loader kept it, else from the stored verdict JSON.
        QString speedupText = attempt && attempt->passed ? QString::number(attempt->speedup, 'f', 2) : QString();
        QString speedupTip;
        auto showCi = [&](double low, double high) { describeSpeedup(*attempt, low, high, speedupText, speedupTip); };
        if (attempt && attempt->passed) {
            if (attempt->speedupCiLow && attempt->speedupCiHigh) {
                showCi(*attempt->speedupCiLow, *attempt->speedupCiHigh);
            } else if (verdict && !verdict->json.empty()) {
                Result<Verdict> parsed = verdictFromJson(verdict->json);
                if (parsed && parsed->speedupCiLow && parsed->speedupCiHigh) {
                    showCi(*parsed->speedupCiLow, *parsed->speedupCiHigh);
                }
            }
        }
        const QStringList cells{
            role,
            attempt ? QString::fromStdString(attempt->arm) : tr("(no verdict)"),
            attempt ? QString::number(attempt->trialId) : QString(),
            attempt ? verdictWord(*attempt) : QString(),
            attempt ? QString::number(analysis::tier(*attempt, settings_)) : QString(),
            speedupText,
            verdict ? ms(verdict->kernelMedianMs) : QString(),
            verdict ? ms(verdict->eagerMedianMs) : QString(),
            verdict ? QString::fromStdString(verdict->stage + (verdict->error.empty() ? "" : ": " + verdict->error))
                    : QString()};
        for (int column = 0; column < cells.size(); ++column) {
            arms_->setItem(row, column, new QTableWidgetItem(cells[column]));
        }
        arms_->item(row, 5)->setToolTip(speedupTip);
    }
    arms_->resizeColumnsToContents();
}

std::optional<CalibrationRecord> InspectorView::calibrationOf(const std::string& deviceName) const {
    std::optional<CalibrationRecord> newest;
    for (const CalibrationRecord& calibration : calibrations_) {
        const bool sameDevice =
            !deviceName.empty() && (calibration.deviceName == deviceName || calibration.device == deviceName);
        if (sameDevice && (!newest || calibration.id > newest->id)) {
            newest = calibration;
        }
    }
    return newest;
}

void InspectorView::describeSpeedup(const analysis::Attempt& attempt, double low, double high, QString& text,
                                    QString& tip) const {
    text = tr("%1 [%2, %3] within-grading").arg(attempt.speedup, 0, 'f', 2).arg(low, 0, 'f', 2).arg(high, 0, 'f', 2);
    tip = tr("Within-grading 95% CI [%1, %2]: it covers this grading's own timing draws only; a grading's conditions "
             "(clock, cache, neighbours) move all of its draws together (docs/metrics.md)")
              .arg(low, 0, 'f', 3)
              .arg(high, 0, 'f', 3);
    const std::optional<CalibrationRecord> calibration = calibrationOf(attempt.deviceName);
    if (!calibration) {
        tip += tr("\nNo calibration of %1: run mkb calibrate to see how far two gradings of one kernel move there")
                   .arg(attempt.deviceName.empty() ? tr("this device") : QString::fromStdString(attempt.deviceName));
        return;
    }
    const std::optional<analysis::BetweenGradingSpread> spread =
        analysis::betweenGradingSpread(report::unpairedAaControls(*calibration));
    if (!spread) {
        tip += tr("\nThe calibration of %1 holds no unpaired A/A gradings to measure the spread between gradings")
                   .arg(QString::fromStdString(calibration->device));
        return;
    }
    const analysis::Interval across = analysis::acrossGradings(low, high, *spread);
    const double percent = (std::exp(spread->logSpread) - 1) * 100;
    text += tr(" · [%1, %2] across gradings (A/A ±%3%)")
                .arg(across.low, 0, 'f', 2)
                .arg(across.high, 0, 'f', 2)
                .arg(percent, 0, 'f', 1);
    tip += tr("\nAcross gradings [%1, %2]: widened by the between-grading spread that the A/A calibration of %3 on "
              "%4 measured: two gradings of one kernel differed by up to %5% (95th percentile of %6 controls), so two "
              "gradings' intervals overlap about 95% of the time")
               .arg(across.low, 0, 'f', 3)
               .arg(across.high, 0, 'f', 3)
               .arg(QString::fromStdString(calibration->device),
                    QString::fromStdString(calibration->createdAt.substr(0, 10)))
               .arg(percent, 0, 'f', 1)
               .arg(spread->controls);
}

void InspectorView::setKernelPair(KernelPair pair) {
    kernelPair_ = pair;
    const int index = kernelPairCombo_->findData(int(pair));
    if (kernelPairCombo_->currentIndex() != index) {
        const QSignalBlocker blocker(kernelPairCombo_);
        kernelPairCombo_->setCurrentIndex(index);
    }
    if (comparison_) {
        fillDiff();
    }
}

void InspectorView::fillDiff() {
    const analysis::Comparison& c = *comparison_;
    auto title = [](const QString& role, const analysis::Attempt* attempt) {
        return attempt ? QStringLiteral("<b>%1</b> %2 (trial %3)")
                             .arg(role, QString::fromStdString(attempt->arm).toHtmlEscaped())
                             .arg(attempt->trialId)
                       : QStringLiteral("<b>%1</b> (none)").arg(role);
    };
    const bool leftIsBase = kernelPair_ == KernelPair::BaseVsSkill;
    const bool rightIsBase = kernelPair_ == KernelPair::SourceVsBase;
    const analysis::Attempt* left = leftIsBase ? c.base.get() : c.source.get();
    const analysis::Attempt* right = rightIsBase ? c.base.get() : c.skill.get();
    const TransferArm& leftArm = leftIsBase ? case_.base : case_.source;
    const TransferArm& rightArm = rightIsBase ? case_.base : case_.skill;
    // Until the detail is in (and without a project), the kernels the comparison itself holds.
    const auto kernel = [this](const analysis::Attempt* attempt, const TransferArm& arm) {
        if (!attempt || attempt->skipped) {
            return QString();
        }
        return QString::fromStdString(hasDetail_ ? arm.finalKernel : attempt->finalKernelSource);
    };
    diff_->setTexts(title(leftIsBase ? tr("Base") : tr("Source"), left), kernel(left, leftArm),
                    title(rightIsBase ? tr("Base") : tr("Skill"), right), kernel(right, rightArm));
}

void InspectorView::fillReports() {
    reports_->clear();
    if (!hasDetail_) {
        reports_->setPlainText(isReadingDetail() ? tr("Reading the grader reports…") : tr("No project open."));
        return;
    }
    const analysis::Comparison& c = *comparison_;
    QString text;
    const std::tuple<QString, const analysis::Attempt*, const TransferArm*> arms[] = {
        {tr("Source"), c.source.get(), &case_.source},
        {tr("Base"), c.base.get(), &case_.base},
        {tr("Skill"), c.skill.get(), &case_.skill}};
    for (const auto& [role, attempt, arm] : arms) {
        if (!attempt) {
            continue;
        }
        text += QStringLiteral("════ %1: %2 (trial %3) ════\n")
                    .arg(role, QString::fromStdString(attempt->arm))
                    .arg(attempt->trialId);
        if (!arm->error.empty() && arm->submissions.empty()) {
            text += QString::fromStdString(arm->error) + QLatin1Char('\n');
            continue;
        }
        if (arm->submissions.empty()) {
            text += tr("(no submissions recorded)\n\n");
        }
        for (const SubmissionRecord& submission : arm->submissions) {
            ReportHeading heading;
            heading.problem = c.family + "/" + c.problemSlug;
            heading.dsl = attempt->dsl;
            text += submission.index == 0 ? tr("── final evaluation ──\n")
                                          : tr("── submission %1 ──\n").arg(submission.index);
            text += QString::fromStdString(verdictReport(submission.verdict, heading)) + QStringLiteral("\n\n");
        }
    }
    reports_->setPlainText(text);
}

const InspectorView::SkillInfo& InspectorView::skillInfo(SkillSide side) const {
    return side == SkillSide::Source ? sourceSkillInfo_ : attemptSkillInfo_;
}

std::vector<AnnotationRecord> InspectorView::annotationsOf(SkillSide side) const {
    const SkillInfo& info = skillInfo(side);
    if (!info.record) {
        return {};
    }
    const auto found = annotations_.find(info.record->id);
    return found != annotations_.end() ? found->second : std::vector<AnnotationRecord>{};
}

void InspectorView::refreshAnnotations() {
    annotationList_->clear();
    const auto side = SkillSide(tagSkillCombo_->currentData().toInt());
    for (const AnnotationRecord& annotation : annotationsOf(side)) {
        QString quoted = QString::fromStdString(annotation.quotedText).simplified();
        if (quoted.size() > 80) {
            quoted = quoted.left(79) + QStringLiteral("…");
        }
        auto* item = new QListWidgetItem(
            QStringLiteral("[%1] “%2”%3")
                .arg(QString::fromLatin1(toString(annotation.tag)), quoted,
                     annotation.note.empty() ? QString()
                                             : QStringLiteral(" — ") + QString::fromStdString(annotation.note)),
            annotationList_);
        item->setData(Qt::UserRole, qlonglong(annotation.id));
        item->setData(Qt::UserRole + 1, qlonglong(annotation.rangeStart));
        item->setData(Qt::UserRole + 2, qlonglong(annotation.rangeEnd));
    }
}

Status InspectorView::tagRange(SkillSide side, int start, int end, AnnotationTag tag, const QString& note) {
    if (data_ == nullptr || data_->storePath().isEmpty()) {
        return makeError("no project is open; open a project before tagging claims");
    }
    if (isReadingDetail()) {
        return makeError("this comparison's skills are still being read from the project; tag once they show");
    }
    const SkillInfo& info = skillInfo(side);
    if (!info.record) {
        return makeError("this comparison's " +
                         std::string(side == SkillSide::Source ? "source" : "skill-conditioned attempt") +
                         " wrote no skill; there is nothing to tag");
    }
    if (start < 0 || end <= start || end > int(info.text.size())) {
        return makeError("no text is selected in the skill pane; select the claim to tag first");
    }
    const ClaimTag claim{utf8Offset(info.text, start), utf8Offset(info.text, end), tag, note.toStdString()};
    auto added = data_->tagClaim(*info.record, claim); // announces the skill's annotations, which refreshes the list
    if (!added) {
        return added.error();
    }
    if (tagSkillCombo_->currentData().toInt() != int(side)) {
        tagSkillCombo_->setCurrentIndex(tagSkillCombo_->findData(int(side))); // refreshes the list
    }
    emit annotationsChanged();
    return Ok{};
}

Status InspectorView::tagSelection(SkillSide side) {
    MarkdownPane* pane = side == SkillSide::Source ? sourceSkill_ : attemptSkill_;
    const auto [start, end] = pane->selectedRange();
    const Status status = tagRange(side, start, end, AnnotationTag(tagCombo_->currentData().toInt()), note_->text());
    if (status) {
        note_->clear();
    }
    return status;
}

Status InspectorView::deleteAnnotation(std::int64_t annotationId) {
    if (data_ == nullptr || data_->storePath().isEmpty()) {
        return makeError("no project is open; open a project before deleting annotations");
    }
    for (const auto& [skillId, annotations] : annotations_) {
        for (const AnnotationRecord& annotation : annotations) {
            if (annotation.id == annotationId) {
                const Status status = data_->deleteAnnotation(skillId, annotationId); // refreshes the list
                if (status) {
                    emit annotationsChanged();
                }
                return status;
            }
        }
    }
    return makeError("annotation " + std::to_string(annotationId) +
                     " is not one of the shown comparison's; open its comparison to delete it");
    return Ok{};
}

} // namespace mkb::gui
