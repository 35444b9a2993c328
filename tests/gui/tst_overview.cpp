// Overview suite: the model × direction table and family charts from a fixture store, and a click on a row
// filtering the comparisons browser in the main window.
#include "gui/charts/chart.h"
#include "gui/charts/direction_matrix_chart.h"
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/overview/overview_model.h"
#include "gui/overview/overview_view.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"
#include "tst_project_data_fixture.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

using namespace mkb::gui;

namespace {

/// A re-timing of alpha's p1 triton2cuda cell on cuda:0 under grader fingerprint "gf".
mkb::RetimingRecord retimingOf(const mkbguitest::FixtureIds& ids) {
    mkb::RetimingRecord record;
    record.model = "alpha";
    record.suite = "problems";
    record.problemNumber = 1;
    record.sourceDsl = "triton";
    record.targetDsl = "cuda";
    record.sourceTrialId = ids.at("alpha/1/solo_triton");
    record.baseTrialId = ids.at("alpha/1/solo_cuda");
    record.skillTrialId = ids.at("alpha/1/triton2cuda_skill");
    record.createdAt = "2026-12-01T00:00:00Z";
    record.result.ok = true;
    record.result.device = "cuda:0";
    record.result.deviceName = "NVIDIA H200";
    record.result.graderFingerprint = "gf";
    record.result.rounds = 200;
    record.result.stop = "converged";
    for (const char* label : {"source", "base", "skill"}) {
        record.result.kernels.push_back(mkb::RetimedKernel{label, "cuda", std::string(64, 'a'), 0.001, std::nullopt});
    }
    return record;
}

mkb::CalibrationMethodResult methodOf(const std::string& name, int helped, int detected, std::optional<double> safe) {
    mkb::CalibrationMethodResult result;
    result.method = name;
    result.aaComparisons = 40;
    result.aaHelped = helped;
    result.aaHarmed = 1;
    result.abComparisons = 20;
    result.abDetected = detected;
    result.smallestDelta = safe;
    return result;
}

mkb::CalibrationRecord calibrationOf(const std::string& fingerprint) {
    mkb::CalibrationRecord record;
    record.device = "cuda:0";
    record.deviceName = "NVIDIA H200";
    record.graderFingerprint = fingerprint;
    record.selection = "--problems 1-12";
    record.methods = {methodOf("paired", 0, 19, 0.009), methodOf("unpaired", 3, 12, std::nullopt)};
    record.detailJson = "[]";
    record.createdAt = "2026-11-30T10:00:00Z";
    return record;
}

} // namespace

class OverviewTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void tableShowsGroupMetrics();
    void modelPassesTheTester();
    void intervalCellsAndChartsFillInWhenTheIntervalsArrive();
    void familyChartsHoldLiftAndHarm();
    void clickingRowFiltersComparisons();
    void calibrationLineNamesTheRetimedDevicesCalibration();
    void calibrationLineIsAbsentWithoutCalibrationsOrRetimings();

private:
    /// The overview's summary text for the store at path, loaded through a ProjectData.
    static QString summaryTextOf(const QString& path);

    QTemporaryDir dir_;
    QString storePath_;
    ProjectData data_;
};

void OverviewTest::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("mkb-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("gui_overview"));
    QSettings().clear();
    storePath_ = dir_.filePath(QStringLiteral("study.sqlite"));
    mkbguitest::writeTransferFixture(storePath_.toStdString());
    data_.setStorePath(storePath_);
    QVERIFY(data_.waitUntilIdle());
    QVERIFY2(data_.lastError().isEmpty(), qPrintable(data_.lastError()));
}

void OverviewTest::tableShowsGroupMetrics() {
    OverviewView view;
    view.setProjectData(&data_);
    const OverviewModel* model = view.model();
    QCOMPARE(model->rowCount(), 4);
    auto cell = [&](int row, int column) { return model->index(row, column).data().toString(); };
    // Sorted by model, then direction.
    QCOMPARE(cell(0, OverviewModel::ModelColumn), QStringLiteral("alpha"));
    QCOMPARE(cell(0, OverviewModel::DirectionColumn), QStringLiteral("cuda2triton"));
    QCOMPARE(cell(1, OverviewModel::DirectionColumn), QStringLiteral("triton2cuda"));
    // alpha triton2cuda: helped + neutral; ratios 2 and 1.
    QCOMPARE(cell(1, OverviewModel::ComparisonsColumn), QStringLiteral("2"));
    QCOMPARE(cell(1, OverviewModel::TransferRateColumn), QStringLiteral("50.0%"));
    QCOMPARE(cell(1, OverviewModel::HarmRateColumn), QStringLiteral("0.0%"));
    QCOMPARE(cell(1, OverviewModel::DeltaGmColumn), QStringLiteral("+41.4% [+0.0%, +100.0%]")); // with its 95% CI
    // S and lift with their 95% CIs over the two cells (cell 1: base failed, S 0, skill 80, lift +80; cell 2: both S
    // 60, lift 0)
    QCOMPARE(cell(1, OverviewModel::BaseScoreColumn), QStringLiteral("30.0 [0.0, 60.0]"));
    QCOMPARE(cell(1, OverviewModel::SkillScoreColumn), QStringLiteral("70.0 [60.0, 80.0]"));
    QCOMPARE(cell(1, OverviewModel::LiftColumn), QStringLiteral("+40.0 [+0.0, +80.0]"));
    QCOMPARE(cell(1, OverviewModel::BasePassColumn), QStringLiteral("50.0%"));
    QCOMPARE(cell(1, OverviewModel::SkillPassColumn), QStringLiteral("100.0%"));
    QCOMPARE(cell(1, OverviewModel::SourcePassedColumn), QStringLiteral("100.0%"));
    QCOMPARE(cell(1, OverviewModel::SkillCoverageColumn), QStringLiteral("100.0%"));
    // alpha cuda2triton: harmed + neutral (skipped skill); the cuda sources: one failed, one wrote no skill.
    QCOMPARE(cell(0, OverviewModel::HarmRateColumn), QStringLiteral("50.0%"));
    QCOMPARE(cell(0, OverviewModel::TransferRateColumn), QStringLiteral("0.0%"));
    QCOMPARE(cell(0, OverviewModel::SourcePassedColumn), QStringLiteral("50.0%"));
    QCOMPARE(cell(0, OverviewModel::SkillCoverageColumn), QStringLiteral("50.0%"));
    // beta triton2cuda: one helped comparison.
    QCOMPARE(cell(3, OverviewModel::TransferRateColumn), QStringLiteral("100.0%"));
}

void OverviewTest::modelPassesTheTester() {
    OverviewView view;
    QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setProjectData(&data_);
    view.table()->sortByColumn(OverviewModel::LiftColumn, Qt::DescendingOrder);
    data_.reload();
    QVERIFY(data_.waitUntilIdle());
    QCOMPARE(view.model()->rowCount(), 4);
}

void OverviewTest::intervalCellsAndChartsFillInWhenTheIntervalsArrive() {
    ProjectData data;
    OverviewView view;
    QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setProjectData(&data); // the view refreshes on summaryLoaded before the lambda below runs
    const auto cellOf = [&](int row, int column) { return view.model()->index(row, column).data().toString(); };
    const auto errorBarsOf = [&] {
        auto* errorBars = view.liftChart()->findChild<QCPErrorBars*>(QStringLiteral("liftErrorBars"));
        return errorBars ? errorBars->dataCount() : -1;
    };
    const auto titleOf = [&] {
        auto* title = qobject_cast<QCPTextElement*>(view.liftChart()->plotLayout()->element(0, 0));
        return title ? title->text() : QString();
    };
    QStringList atSummary;
    QString tipAtSummary, titleAtSummary;
    int errorBarsAtSummary = -1;
    bool matrixPendingAtSummary = false;
    connect(&data, &ProjectData::summaryLoaded, this, [&] {
        for (const int column : {OverviewModel::DeltaGmColumn, OverviewModel::BaseScoreColumn,
                                 OverviewModel::SkillScoreColumn, OverviewModel::LiftColumn}) {
            atSummary << cellOf(1, column);
        }
        tipAtSummary = view.model()->index(1, OverviewModel::LiftColumn).data(Qt::ToolTipRole).toString();
        titleAtSummary = titleOf();
        errorBarsAtSummary = errorBarsOf();
        matrixPendingAtSummary = view.directionMatrix()->intervalsPending();
    });
    QSignalSpy reset(view.model(), &QAbstractItemModel::modelReset);
    data.setStorePath(storePath_);
    QVERIFY(data.waitUntilIdle());
    // the points first, each interval said to be coming: no interval shown before it is known
    QCOMPARE(atSummary, (QStringList{QStringLiteral("+41.4% […]"), QStringLiteral("30.0 […]"),
                                     QStringLiteral("70.0 […]"), QStringLiteral("+40.0 […]")}));
    QCOMPARE(tipAtSummary, QStringLiteral("The 95% bootstrap interval is being computed"));
    QVERIFY2(titleAtSummary.contains(QStringLiteral("computing")), qPrintable(titleAtSummary));
    QCOMPARE(errorBarsAtSummary, 0);
    QVERIFY(matrixPendingAtSummary);
    // then the intervals, those the single-stage overview showed
    QCOMPARE(cellOf(1, OverviewModel::DeltaGmColumn), QStringLiteral("+41.4% [+0.0%, +100.0%]"));
    QCOMPARE(cellOf(1, OverviewModel::BaseScoreColumn), QStringLiteral("30.0 [0.0, 60.0]"));
    QCOMPARE(cellOf(1, OverviewModel::SkillScoreColumn), QStringLiteral("70.0 [60.0, 80.0]"));
    QCOMPARE(cellOf(1, OverviewModel::LiftColumn), QStringLiteral("+40.0 [+0.0, +80.0]"));
    QCOMPARE(titleOf(), QStringLiteral("Lift by family (S skill − S base)"));
    QCOMPARE(errorBarsOf(), 2);
    QVERIFY(!view.directionMatrix()->intervalsPending());
    QVERIFY(view.directionMatrix()->matrix().find("triton", "cuda")->liftCi());
    // a column narrower than the cell's text cuts it: the tooltip holds it whole
    QCOMPARE(view.model()->index(1, OverviewModel::DeltaGmColumn).data(Qt::ToolTipRole).toString(),
             QStringLiteral("ΔGM +41.4% [+0.0%, +100.0%] (95% bootstrap CI over the group's resolved comparisons)"));
    const int resetsAfterLoad = reset.count();
    data.reload(); // the same rows again: only their intervals' columns change when the intervals come
    QSignalSpy changed(view.model(), &QAbstractItemModel::dataChanged);
    QVERIFY(data.waitUntilIdle());
    QVERIFY(reset.count() > resetsAfterLoad);
    QVERIFY(!changed.isEmpty());
    QCOMPARE(changed.last().at(0).value<QModelIndex>().column(), int(OverviewModel::DeltaGmColumn));
    QCOMPARE(changed.last().at(1).value<QModelIndex>().column(), int(OverviewModel::LiftColumn));
}

void OverviewTest::familyChartsHoldLiftAndHarm() {
    OverviewView view;
    view.setProjectData(&data_);
    auto barsOf = [](QCustomPlot* plot) { return qobject_cast<QCPBars*>(plot->plottable(0)); };
    QCPBars* harm = barsOf(view.harmChart());
    QVERIFY(harm);
    // Families sorted: activation (key 1), reduction (key 2).
    QCOMPARE(harm->data()->size(), 2);
    QCOMPARE(harm->data()->at(0)->value, 0.0);
    QCOMPARE(harm->data()->at(1)->value, 25.0); // one harmed of four reduction comparisons
    // both families' lift intervals contain 0 (activation's is [0, 0]): drawn within noise, in the neutral colour,
    // none in the lift colour; each with its error bar
    QCPBars* lift = barsOf(view.liftChart());
    QCOMPARE(lift->data()->size(), 0);
    auto* noise = view.liftChart()->findChild<QCPBars*>(QStringLiteral("withinNoiseBars"));
    QVERIFY(noise);
    QCOMPARE(noise->brush().color(), chartcolors::neutral());
    QCOMPARE(noise->data()->size(), 2);
    QCOMPARE(noise->data()->at(0)->value, 0.0);
    QVERIFY(noise->data()->at(1)->value > 0);
    auto* errorBars = view.liftChart()->findChild<QCPErrorBars*>(QStringLiteral("liftErrorBars"));
    QVERIFY(errorBars);
    QCOMPARE(errorBars->dataCount(), 2);
    QVERIFY(errorBars->data()->at(1).errorMinus > 0);
}

void OverviewTest::clickingRowFiltersComparisons() {
    MainWindow window;
    window.setSavesLayoutOnClose(false);
    QVERIFY(window.loadProject(storePath_));
    QVERIFY(window.projectData()->waitUntilIdle());
    window.showView(MainWindow::View::Overview);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTableView* table = window.overviewView()->table();
    QCOMPARE(table->model()->rowCount(), 4);
    QSignalSpy requested(window.overviewView(), &OverviewView::comparisonsRequested);
    const QRect cell = table->visualRect(table->model()->index(1, OverviewModel::TransferRateColumn));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QCOMPARE(requested.count(), 1);
    QCOMPARE(requested.at(0).at(0).toString(), QStringLiteral("alpha"));
    QCOMPARE(requested.at(0).at(1).toString(), QStringLiteral("triton2cuda"));
    QVERIFY(window.currentView() == MainWindow::View::Comparisons);
    ComparisonsFilter* filter = window.comparisonsView()->filter();
    QCOMPARE(filter->rowCount(), 2);
    for (int row = 0; row < filter->rowCount(); ++row) {
        QCOMPARE(filter->index(row, ComparisonsModel::ModelColumn).data().toString(), QStringLiteral("alpha"));
        QCOMPARE(filter->index(row, ComparisonsModel::DirectionColumn).data().toString(),
                 QStringLiteral("triton2cuda"));
    }
}

QString OverviewTest::summaryTextOf(const QString& path) {
    ProjectData data;
    data.setStorePath(path);
    if (!data.waitUntilIdle() || !data.lastError().isEmpty()) {
        qWarning("load of %s failed: %s", qPrintable(path), qPrintable(data.lastError()));
        return {};
    }
    OverviewView view;
    view.setProjectData(&data);
    const QLabel* summary = view.findChild<QLabel*>(QStringLiteral("overviewSummary"));
    return summary ? summary->text() : QString();
}

void OverviewTest::calibrationLineNamesTheRetimedDevicesCalibration() {
    const QString path = dir_.filePath(QStringLiteral("calibrated.sqlite"));
    const mkbguitest::FixtureIds ids = mkbguitest::writeTransferFixture(path.toStdString());
    {
        auto store = mkb::Store::open(path.toStdString());
        QVERIFY2(store, store ? "" : store.error().message.c_str());
        QVERIFY((*store)->insertRetiming(retimingOf(ids)).ok());
    }
    // Re-timed data without a calibration: the line says which device lacks one.
    QString text = summaryTextOf(path);
    QVERIFY2(text.endsWith(QStringLiteral("\nno calibration of cuda:0: run mkb calibrate")), qPrintable(text));
    {
        auto store = mkb::Store::open(path.toStdString());
        QVERIFY(store);
        QVERIFY((*store)->insertCalibration(calibrationOf("gf")).ok());
    }
    text = summaryTextOf(path);
    const QStringList lines = text.split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 4);
    QVERIFY2(lines[1].startsWith(QStringLiteral("Timing: ")), qPrintable(text));
    QVERIFY2(lines[2].startsWith(QStringLiteral("Ladder: paired rule ")), qPrintable(text));
    QCOMPARE(lines[3], QStringLiteral("calibration of cuda:0 (NVIDIA H200) on 2026-11-30: paired A/A false 1 of 40 "
                                      "(2.5%), A/B detected 19 of 20 (95%), smallest safe δ 0.9%; unpaired A/A false 4 "
                                      "of 40 (10%), A/B detected 12 of 20 (60%), smallest safe δ none found"));
    // A newer calibration under another grader is taken only when none matches the data's; alone, it is stale.
    const QString stalePath = dir_.filePath(QStringLiteral("stale.sqlite"));
    const mkbguitest::FixtureIds staleIds = mkbguitest::writeTransferFixture(stalePath.toStdString());
    {
        auto store = mkb::Store::open(stalePath.toStdString());
        QVERIFY(store);
        QVERIFY((*store)->insertRetiming(retimingOf(staleIds)).ok());
        QVERIFY((*store)->insertCalibration(calibrationOf("old-grader-fingerprint")).ok());
    }
    text = summaryTextOf(stalePath);
    QVERIFY2(
        text.contains(QStringLiteral("calibration of cuda:0 (NVIDIA H200) on 2026-11-30, stale (grader old-grader-f")),
        qPrintable(text));
}

void OverviewTest::calibrationLineIsAbsentWithoutCalibrationsOrRetimings() {
    const QString text = summaryTextOf(storePath_);
    QCOMPARE(text.split(QLatin1Char('\n')).size(), 3); // the summary, the timing and the ladder lines
    QVERIFY2(!text.contains(QStringLiteral("alibration")), qPrintable(text));
}

QTEST_MAIN(OverviewTest)
#include "tst_overview.moc"
