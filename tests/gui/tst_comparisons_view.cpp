// Comparisons browser suite: rows and numbers from a fixture store, filters, numeric sort, copy, Enter to open, and
// filters saved per project.
#include "gui/common/table_copy.h"
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/project/project_data.h"
#include "tst_project_data_fixture.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace mkb::gui;

class ComparisonsViewTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void rowsShowAnalysisNumbers();
    void modelsPassTheTester();
    void filtersNarrowRows();
    void pairedRatioSortsNumerically();
    void copyAndEnter();
    void filtersPersistPerProject();
    void aBurstOfKeystrokesIsSavedOnceItSettles();

private:
    QTemporaryDir dir_;
    QString storePath_;
    ProjectData data_;
};

static int findRow(const QAbstractItemModel* model, const QString& modelName, const QString& direction, int problem) {
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->index(row, ComparisonsModel::ModelColumn).data().toString() == modelName &&
            model->index(row, ComparisonsModel::DirectionColumn).data().toString() == direction &&
            model->index(row, ComparisonsModel::ProblemColumn).data(ComparisonsModel::SortRole).toInt() == problem) {
            return row;
        }
    }
    return -1;
}

void ComparisonsViewTest::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("mkb-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("gui_comparisons_view"));
    QSettings().clear();
    storePath_ = dir_.filePath(QStringLiteral("study.sqlite"));
    mkbguitest::writeTransferFixture(storePath_.toStdString());
    data_.setStorePath(storePath_);
    QVERIFY(data_.waitUntilIdle());
    QVERIFY2(data_.lastError().isEmpty(), qPrintable(data_.lastError()));
}

void ComparisonsViewTest::rowsShowAnalysisNumbers() {
    ComparisonsView view;
    view.setProjectData(&data_);
    const ComparisonsModel* model = view.model();
    QCOMPARE(model->rowCount(), 6);
    auto cell = [&](int row, int column) { return model->index(row, column).data().toString(); };
    const int helped = findRow(model, "alpha", "triton2cuda", 1);
    QVERIFY(helped >= 0);
    QCOMPARE(cell(helped, ComparisonsModel::ProblemColumn), QStringLiteral("01 softmax"));
    QCOMPARE(cell(helped, ComparisonsModel::FamilyColumn), QStringLiteral("reduction"));
    QCOMPARE(cell(helped, ComparisonsModel::SourceVerdictColumn), QStringLiteral("passed"));
    QCOMPARE(cell(helped, ComparisonsModel::SourceTierColumn), QStringLiteral("3"));
    QCOMPARE(cell(helped, ComparisonsModel::BaseTierColumn), QStringLiteral("0"));
    QCOMPARE(cell(helped, ComparisonsModel::SkillTierColumn), QStringLiteral("4"));
    QCOMPARE(cell(helped, ComparisonsModel::SkillSpeedupColumn), QStringLiteral("2.00"));
    QCOMPARE(cell(helped, ComparisonsModel::PairedRatioColumn), QStringLiteral("2.000"));
    QCOMPARE(cell(helped, ComparisonsModel::OutcomeColumn), QStringLiteral("helped"));
    QCOMPARE(cell(helped, ComparisonsModel::StandingColumn), QStringLiteral("above"));
    const int harmed = findRow(model, "alpha", "cuda2triton", 1);
    QCOMPARE(cell(harmed, ComparisonsModel::OutcomeColumn), QStringLiteral("harmed"));
    QCOMPARE(cell(harmed, ComparisonsModel::StandingColumn), QStringLiteral("below"));
    QCOMPARE(cell(harmed, ComparisonsModel::PairedRatioColumn), QStringLiteral("0.833"));
    const int skipped = findRow(model, "alpha", "cuda2triton", 2);
    QCOMPARE(cell(skipped, ComparisonsModel::OutcomeColumn), QStringLiteral("neutral"));
    QVERIFY(cell(skipped, ComparisonsModel::TagsColumn).contains("skill skipped"));
    QVERIFY(cell(skipped, ComparisonsModel::TagsColumn).contains("no source skill"));
    QCOMPARE(cell(skipped, ComparisonsModel::SkillTierColumn), QStringLiteral("3")); // counts as its base
}

void ComparisonsViewTest::modelsPassTheTester() {
    ComparisonsView view;
    QAbstractItemModelTester sourceTester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(view.filter(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setProjectData(&data_);
    view.filter()->setColumnFilter(ComparisonsModel::OutcomeColumn, QStringLiteral("helped"));
    view.filter()->setSearchText(QStringLiteral("beta"));
    view.table()->sortByColumn(ComparisonsModel::PairedRatioColumn, Qt::DescendingOrder);
    view.filter()->clearFilters();
    data_.reload();
    QVERIFY(data_.waitUntilIdle());
    QCOMPARE(view.model()->rowCount(), 6);
}

void ComparisonsViewTest::filtersNarrowRows() {
    ComparisonsView view;
    view.setProjectData(&data_);
    ComparisonsFilter* filter = view.filter();
    // The combos offer each column's values.
    QComboBox* outcomes = view.filterCombo(ComparisonsModel::OutcomeColumn);
    QVERIFY(outcomes->findData(QStringLiteral("harmed")) > 0);
    outcomes->setCurrentIndex(outcomes->findData(QStringLiteral("harmed")));
    QCOMPARE(filter->rowCount(), 1);
    outcomes->setCurrentIndex(0);
    QCOMPARE(filter->rowCount(), 6);
    filter->setColumnFilter(ComparisonsModel::ModelColumn, QStringLiteral("alpha"));
    QCOMPARE(filter->rowCount(), 4);
    QCOMPARE(view.filterCombo(ComparisonsModel::ModelColumn)->currentData().toString(), QStringLiteral("alpha"));
    view.searchField()->setText(QStringLiteral("GELU")); // case-insensitive, any column
    QCOMPARE(filter->rowCount(), 2);
    view.filterTo(QStringLiteral("beta"), QStringLiteral("triton2cuda"));
    QCOMPARE(filter->rowCount(), 1);
    QVERIFY(view.searchField()->text().isEmpty());
    QCOMPARE(filter->index(0, ComparisonsModel::OutcomeColumn).data().toString(), QStringLiteral("helped"));
}

void ComparisonsViewTest::pairedRatioSortsNumerically() {
    ComparisonsView view;
    view.setProjectData(&data_);
    const QModelIndex ratio = view.model()->index(0, ComparisonsModel::PairedRatioColumn);
    QCOMPARE(ratio.data(ComparisonsModel::SortRole).typeId(), QMetaType::Double);
    view.table()->sortByColumn(ComparisonsModel::PairedRatioColumn, Qt::AscendingOrder);
    ComparisonsFilter* filter = view.filter();
    QCOMPARE(filter->index(0, ComparisonsModel::PairedRatioColumn).data().toString(), QStringLiteral("0.833"));
    QCOMPARE(filter->index(5, ComparisonsModel::PairedRatioColumn).data().toString(), QStringLiteral("3.000"));
    view.table()->sortByColumn(ComparisonsModel::ProblemColumn, Qt::DescendingOrder);
    QCOMPARE(filter->index(0, ComparisonsModel::ProblemColumn).data().toString(), QStringLiteral("02 gelu"));
}

void ComparisonsViewTest::copyAndEnter() {
    ComparisonsView view;
    view.setProjectData(&data_);
    view.resize(1000, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.filterTo(QStringLiteral("alpha"), QStringLiteral("cuda2triton"));
    view.table()->sortByColumn(ComparisonsModel::ProblemColumn, Qt::AscendingOrder);
    view.table()->selectRow(0);
    const QString tsv = selectedRowsAsTsv(*view.table());
    QVERIFY(tsv.startsWith(QStringLiteral("Model\tDirection\tProblem")));
    QVERIFY(tsv.contains(QStringLiteral("alpha\tcuda2triton\t01 softmax\treduction\t1\tfailed")));
    QSignalSpy activated(&view, &ComparisonsView::comparisonActivated);
    view.table()->setFocus();
    view.table()->setCurrentIndex(view.filter()->index(0, 0));
    QTest::keyClick(view.table(), Qt::Key_Return);
    QCOMPARE(activated.count(), 1);
    const auto comparison = activated.at(0).at(0).value<mkb::analysis::Comparison>();
    QCOMPARE(comparison.direction, std::string("cuda2triton"));
    QCOMPARE(comparison.problemNumber, 1);
}

void ComparisonsViewTest::filtersPersistPerProject() {
    const QString other = dir_.filePath(QStringLiteral("other.sqlite"));
    {
        ComparisonsView view;
        view.setProjectData(&data_);
        view.setProjectKey(storePath_);
        view.filter()->setColumnFilter(ComparisonsModel::FamilyColumn, QStringLiteral("activation"));
        view.searchField()->setText(QStringLiteral("alpha"));
        view.setProjectKey(other);
        QVERIFY(view.filter()->columnFilter(ComparisonsModel::FamilyColumn).isEmpty());
        view.filter()->setColumnFilter(ComparisonsModel::OutcomeColumn, QStringLiteral("helped"));
    }
    ComparisonsView again;
    again.setProjectData(&data_);
    again.setProjectKey(storePath_);
    QCOMPARE(again.filter()->columnFilter(ComparisonsModel::FamilyColumn), QStringLiteral("activation"));
    QCOMPARE(again.searchField()->text(), QStringLiteral("alpha"));
    QCOMPARE(again.filter()->rowCount(), 2);
    QVERIFY(again.filter()->columnFilter(ComparisonsModel::OutcomeColumn).isEmpty());
    again.setProjectKey(other);
    QCOMPARE(again.filter()->columnFilter(ComparisonsModel::OutcomeColumn), QStringLiteral("helped"));
    QVERIFY(again.filter()->columnFilter(ComparisonsModel::FamilyColumn).isEmpty());
}

void ComparisonsViewTest::aBurstOfKeystrokesIsSavedOnceItSettles() {
    // "browser: the filters are written a moment after the last keystroke, not at every one"
    ComparisonsView view;
    view.setProjectData(&data_);
    view.setProjectKey(storePath_);
    const QString group = ComparisonsView::settingsGroupFor(storePath_);
    QSettings().remove(group);
    for (const QString& typed : {QStringLiteral("a"), QStringLiteral("al"), QStringLiteral("alp")}) {
        view.searchField()->setText(typed);
    }
    QVERIFY2(!QSettings().contains(group), "the filters were written while the typing went on");
    QTRY_VERIFY_WITH_TIMEOUT(QSettings().contains(group), 3000);
    QCOMPARE(QSettings().value(group).toMap(), view.filter()->state());
}

QTEST_MAIN(ComparisonsViewTest)
#include "tst_comparisons_view.moc"
