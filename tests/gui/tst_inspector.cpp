// Transfer inspector suite: skills, verdicts, the kernel diff and reports of one fixture comparison (read through
// ProjectData off the GUI thread), the claim annotation round trip through the store, and Enter in the comparisons
// browser opening the inspector.
#include "core/store/store.h"
#include "gui/common/diff_view.h"
#include "gui/common/markdown_pane.h"
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/inspector/inspector_view.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"
#include "tst_project_data_fixture.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextEdit>

using namespace mkb::gui;

class InspectorTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void showsSkillsVerdictsDiffAndReports();
    void kernelPairSwitchesDiff();
    void annotationRoundTrip();
    void annotationOffsetsAreUtf8Bytes();
    void taggingWithoutSelectionIsRefused();
    void enterOpensInspectorInMainWindow();

private:
    const mkb::analysis::Comparison& comparison(const std::string& model, const std::string& direction, int problem);
    /// Shows the comparison in a view on data_ and waits for its stored detail to arrive; false when it did not.
    bool showWithDetail(InspectorView& view, const mkb::analysis::Comparison& comparison);

    QTemporaryDir dir_;
    QString storePath_;
    ProjectData data_;
};

void InspectorTest::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("mkb-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("gui_inspector"));
    QSettings().clear();
    storePath_ = dir_.filePath(QStringLiteral("study.sqlite"));
    mkbguitest::writeTransferFixture(storePath_.toStdString());
    data_.setStorePath(storePath_);
    QVERIFY(data_.waitUntilIdle());
}

bool InspectorTest::showWithDetail(InspectorView& view, const mkb::analysis::Comparison& comparison) {
    view.setProjectData(&data_);
    QSignalSpy shown(&view, &InspectorView::detailShown);
    view.showComparison(comparison);
    return shown.wait(10000);
}

const mkb::analysis::Comparison& InspectorTest::comparison(const std::string& model, const std::string& direction,
                                                           int problem) {
    for (const auto& candidate : data_.comparisons()) {
        if (candidate.model == model && candidate.direction == direction && candidate.problemNumber == problem) {
            return candidate;
        }
    }
    qFatal("fixture comparison missing");
}

void InspectorTest::showsSkillsVerdictsDiffAndReports() {
    InspectorView view;
    view.setProjectData(&data_);
    // The numbers show at once; the skills and reports are read from the store off the GUI thread.
    view.showComparison(comparison("alpha", "triton2cuda", 1));
    QVERIFY(view.headline()->text().contains("helped"));
    QVERIFY(view.isReadingDetail());
    QVERIFY(view.sourceSkillPane()->markdown().isEmpty());
    QCOMPARE(view.reportsPane()->toPlainText(), QStringLiteral("Reading the grader reports…"));
    QVERIFY(showWithDetail(view, comparison("alpha", "triton2cuda", 1)));
    QVERIFY(!view.isReadingDetail());
    QCOMPARE(view.sourceSkillPane()->markdown(), QString::fromUtf8(mkbguitest::kSourceSkill));
    QCOMPARE(view.attemptSkillPane()->markdown(), QString::fromUtf8(mkbguitest::kTargetSkill));
    QVERIFY(view.sourceSkillPane()->editor()->toPlainText().contains("one program per row"));
    view.sourceSkillPane()->setRendered(true);
    QVERIFY(!view.sourceSkillPane()->editor()->toPlainText().contains("# Triton")); // the heading is rendered
    QVERIFY(view.sourceSkillPane()->find(QStringLiteral("registers")));
    view.sourceSkillPane()->setRendered(false);

    QVERIFY(view.headline()->text().contains("helped"));
    QVERIFY(view.headline()->text().contains("2.000"));
    QTableWidget* arms = view.armsTable();
    QCOMPARE(arms->rowCount(), 3);
    QCOMPARE(arms->item(0, 1)->text(), QStringLiteral("solo_triton"));
    QCOMPARE(arms->item(1, 3)->text(), QStringLiteral("failed"));
    QCOMPARE(arms->item(1, 4)->text(), QStringLiteral("0"));
    QCOMPARE(arms->item(2, 3)->text(), QStringLiteral("passed"));
    QCOMPARE(arms->item(2, 4)->text(), QStringLiteral("4"));
    QCOMPARE(arms->item(2, 5)->text(), QStringLiteral("2.00"));
    QCOMPARE(arms->item(2, 6)->text(), QStringLiteral("0.5000")); // kernel median ms of a 2x kernel over 1 ms eager

    // Base vs skill: the skill kernel adds one line.
    const SideBySideDiff& diff = view.diffView()->diff();
    QCOMPARE(diff.insertedLines, 1);
    QCOMPARE(diff.removedLines, 0);
    QCOMPARE(diff.changeStarts.size(), size_t(1));
    const DiffRow& inserted = diff.rows[size_t(diff.changeStarts[0])];
    QCOMPARE(inserted.kind, DiffRowKind::Inserted);
    QCOMPARE(inserted.right.text, QStringLiteral("    m = x.max(-1)"));
    QCOMPARE(view.diffView()->leftPane()->document()->blockCount(), int(diff.rows.size()));
    QCOMPARE(view.diffView()->rightPane()->document()->blockCount(), int(diff.rows.size()));
    view.diffView()->nextChange();
    QCOMPARE(view.diffView()->currentRow(), diff.changeStarts[0]);

    // Every submission's report, in order, arm by arm.
    const QString reports = view.reportsPane()->toPlainText();
    const int base = reports.indexOf("Base: solo_cuda");
    const int skill = reports.indexOf("Skill: triton2cuda_skill");
    QVERIFY(base >= 0);
    QVERIFY(skill > base);
    const int first = reports.indexOf("submission 1", base);
    const int second = reports.indexOf("submission 2", base);
    QVERIFY(first > base && second > first && second < skill);
}

void InspectorTest::kernelPairSwitchesDiff() {
    InspectorView view;
    QVERIFY(showWithDetail(view, comparison("alpha", "triton2cuda", 1)));
    view.setKernelPair(InspectorView::KernelPair::SourceVsSkill);
    // The source kernel "# t" has nothing in common with the skill kernel.
    QCOMPARE(view.diffView()->diff().removedLines, 1);
    QCOMPARE(view.diffView()->diff().insertedLines, 6);
    view.setKernelPair(InspectorView::KernelPair::BaseVsSkill);
    QCOMPARE(view.diffView()->diff().insertedLines, 1);
}

void InspectorTest::annotationRoundTrip() {
    InspectorView view;
    QVERIFY(showWithDetail(view, comparison("alpha", "triton2cuda", 1)));
    const QString skill = view.sourceSkillPane()->markdown();
    const QString claim = QStringLiteral("one program per row");
    const int start = int(skill.indexOf(claim));
    QVERIFY(start > 0);
    view.sourceSkillPane()->selectRange(start, start + int(claim.size()));
    QCOMPARE(view.sourceSkillPane()->selectedRange(), (std::pair<int, int>{start, start + int(claim.size())}));
    view.tagCombo()->setCurrentIndex(view.tagCombo()->findData(int(mkb::AnnotationTag::Contradicted)));
    view.noteField()->setText(QStringLiteral("the CUDA attempt used one block per row"));
    const mkb::Status tagged = view.tagSelection(InspectorView::SkillSide::Source);
    QVERIFY2(tagged, tagged ? "" : tagged.error().message.c_str());
    QVERIFY(view.noteField()->text().isEmpty());

    // Read back through a second Store: range, quote, tag and note survived.
    auto reader = mkb::Store::open(storePath_.toStdString(), mkb::OpenMode::MustExist);
    QVERIFY(reader);
    const auto sourceTrial = comparison("alpha", "triton2cuda", 1).source->trialId;
    auto skillRecord = (*reader)->skillOfTrial(sourceTrial);
    QVERIFY(skillRecord && skillRecord->has_value());
    auto annotations = (*reader)->annotations((*skillRecord)->id);
    QVERIFY(annotations);
    QCOMPARE(annotations->size(), size_t(1));
    const mkb::AnnotationRecord& annotation = annotations->front();
    QCOMPARE(annotation.rangeStart, std::int64_t(start));
    QCOMPARE(annotation.rangeEnd, std::int64_t(start + claim.size()));
    QCOMPARE(annotation.quotedText, claim.toStdString());
    QVERIFY(annotation.tag == mkb::AnnotationTag::Contradicted);
    QCOMPARE(annotation.note, std::string("the CUDA attempt used one block per row"));

    // The list shows it; a fresh inspector on the same comparison lists it too; delete removes it from the store.
    QCOMPARE(view.annotationList()->count(), 1);
    QVERIFY(view.annotationList()->item(0)->text().contains("contradicted"));
    InspectorView again;
    QVERIFY(showWithDetail(again, comparison("alpha", "triton2cuda", 1)));
    QCOMPARE(again.annotationsOf(InspectorView::SkillSide::Source).size(), size_t(1));
    QVERIFY(view.deleteAnnotation(annotation.id));
    QCOMPARE(view.annotationList()->count(), 0);
    QVERIFY(again.annotationsOf(InspectorView::SkillSide::Source).empty()); // ProjectData told every view
    QVERIFY((*reader)->annotations((*skillRecord)->id)->empty());
}

void InspectorTest::annotationOffsetsAreUtf8Bytes() {
    InspectorView view;
    QVERIFY(showWithDetail(view, comparison("beta", "cuda2triton", 1)));
    const QString skill = view.sourceSkillPane()->markdown();
    QCOMPARE(skill, QString::fromUtf8(mkbguitest::kUnicodeSkill));
    const QString claim = QStringLiteral("warp shuffles");
    const int start = int(skill.indexOf(claim));
    QVERIFY(view.tagRange(InspectorView::SkillSide::Source, start, start + int(claim.size()),
                          mkb::AnnotationTag::Supported, QString()));
    const auto annotations = view.annotationsOf(InspectorView::SkillSide::Source);
    QCOMPARE(annotations.size(), size_t(1));
    // "—" is 3 bytes and "Δ" 2 bytes in UTF-8 but one QChar each: the byte offset is 3 larger.
    const std::string bytes(mkbguitest::kUnicodeSkill);
    QCOMPARE(annotations[0].rangeStart, std::int64_t(bytes.find("warp shuffles")));
    QCOMPARE(annotations[0].rangeStart, std::int64_t(start + 3));
    QCOMPARE(annotations[0].quotedText, std::string("warp shuffles"));
    // Activating the list entry selects the claim again, in QString positions.
    view.annotationList()->setCurrentRow(0);
    emit view.annotationList()->itemActivated(view.annotationList()->item(0));
    QCOMPARE(view.sourceSkillPane()->selectedRange(), (std::pair<int, int>{start, start + int(claim.size())}));
    QVERIFY(view.deleteAnnotation(annotations[0].id));
}

void InspectorTest::taggingWithoutSelectionIsRefused() {
    InspectorView view;
    QVERIFY(showWithDetail(view, comparison("alpha", "triton2cuda", 1)));
    const mkb::Status noSelection = view.tagSelection(InspectorView::SkillSide::Attempt);
    QVERIFY(!noSelection);
    QVERIFY(QString::fromStdString(noSelection.error().message).contains("select"));
    // cuda2triton on p2: the cuda source wrote no skill.
    QVERIFY(showWithDetail(view, comparison("alpha", "cuda2triton", 2)));
    const mkb::Status noSkill =
        view.tagRange(InspectorView::SkillSide::Source, 0, 1, mkb::AnnotationTag::Other, QString());
    QVERIFY(!noSkill);
    QVERIFY(QString::fromStdString(noSkill.error().message).contains("wrote no skill"));
}

void InspectorTest::enterOpensInspectorInMainWindow() {
    MainWindow window;
    window.setSavesLayoutOnClose(false);
    QVERIFY(window.loadProject(storePath_));
    QVERIFY(window.projectData()->waitUntilIdle());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    ComparisonsView* comparisons = window.comparisonsView();
    comparisons->filterTo(QStringLiteral("beta"), QStringLiteral("triton2cuda"));
    window.showView(MainWindow::View::Comparisons);
    QTableView* table = comparisons->table();
    table->setFocus();
    table->setCurrentIndex(comparisons->filter()->index(0, 0));
    QTest::keyClick(table, Qt::Key_Return);
    QVERIFY(window.currentView() == MainWindow::View::Transfers);
    QVERIFY(window.inspectorView()->headline()->text().contains("beta"));
    QTRY_COMPARE(window.inspectorView()->sourceSkillPane()->markdown(), QStringLiteral("# beta skill\n"));
}

QTEST_MAIN(InspectorTest)
#include "tst_inspector.moc"
