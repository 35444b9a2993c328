// Overview suite: the model × direction table and family charts from a fixture store, and a click on a row
// filtering the comparisons browser in the main window.
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/overview/overview_model.h"
#include "gui/overview/overview_view.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"
#include "tst_project_data_fixture.h"

#include <QAbstractItemModelTester>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <qcustomplot.h>

using namespace mkb::gui;

class OverviewTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void tableShowsGroupMetrics();
    void modelPassesTheTester();
    void familyChartsHoldLiftAndHarm();
    void clickingRowFiltersComparisons();

private:
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
    QCOMPARE(cell(1, OverviewModel::DeltaGmColumn), QStringLiteral("+41.4%"));
    QCOMPARE(cell(1, OverviewModel::BaseScoreColumn), QStringLiteral("30.0"));
    QCOMPARE(cell(1, OverviewModel::SkillScoreColumn), QStringLiteral("70.0"));
    QCOMPARE(cell(1, OverviewModel::LiftColumn), QStringLiteral("+40.0"));
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
    QCPBars* lift = barsOf(view.liftChart());
    QCOMPARE(lift->data()->size(), 2);
    QCOMPARE(lift->data()->at(0)->value, 0.0);
    QVERIFY(lift->data()->at(1)->value > 0);
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

QTEST_MAIN(OverviewTest)
#include "tst_overview.moc"
