// Boundary filters of the GUI (issue 21): the comparisons browser's Boundary column and combo, and the overview's
// "Boundary: all | mkb | strict | legacy" combo, offering only the boundaries present and counting cells whose arms
// were graded under different boundaries as not comparable, like the report.
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/overview/overview_boundary.h"
#include "gui/overview/overview_model.h"
#include "gui/overview/overview_view.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"
#include "tst_project_data_fixture.h"

#include <QComboBox>
#include <QLabel>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace mkb::gui;

namespace {

/// One finished, passing trial whose final verdict was graded under `boundary`.
std::int64_t writeGraded(mkb::Store& store, int problem, const std::string& arm, const std::string& dsl,
                         const std::string& boundary, std::optional<std::int64_t> source = {}) {
    mkb::TrialRecord trial;
    trial.model = "gamma";
    trial.suite = "problems";
    trial.problemNumber = problem;
    trial.problemSlug = "case" + std::to_string(problem);
    trial.family = "reduction";
    trial.replicate = 1;
    trial.arm = arm;
    trial.dsl = dsl;
    char code[96];
    std::snprintf(code, sizeof code, "p%02d_r1_%s", problem, arm.c_str());
    trial.coordinate = code;
    trial.problemFingerprint = "pf";
    trial.graderFingerprint = "gf";
    trial.sourceTrialId = source;
    trial.status = mkb::TrialStatus::Finished;
    mkb::TrialOutcome outcome;
    outcome.status = trial.status;
    outcome.verdict = mkbguitest::verdictOf(mkbguitest::pass(1.5));
    outcome.verdict->boundary = boundary;
    outcome.skillText = "# a skill of " + arm + "\n";
    auto id = store.insertFinishedTrial(trial, outcome);
    if (!id) {
        QTest::qFail(id.error().message.c_str(), __FILE__, __LINE__);
        return 0;
    }
    return *id;
}

/// p1: every arm mkb; p2: every arm strict; p3: the triton2cuda skill arm strict, the rest mkb, so its triton2cuda
/// comparison is not comparable and its cuda2triton one is mkb.
void writeBoundaryFixture(const std::filesystem::path& path) {
    auto opened = mkb::Store::open(path, mkb::OpenMode::CreateIfMissing);
    QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message.c_str());
    mkb::Store& store = **opened;
    for (const auto& [problem, boundary, skillBoundary] :
         {std::tuple{1, "mkb", "mkb"}, std::tuple{2, "strict", "strict"}, std::tuple{3, "mkb", "strict"}}) {
        const auto triton = writeGraded(store, problem, "solo_triton", "triton", boundary);
        const auto cuda = writeGraded(store, problem, "solo_cuda", "cuda", boundary);
        writeGraded(store, problem, "triton2cuda_skill", "cuda", skillBoundary, triton);
        writeGraded(store, problem, "cuda2triton_skill", "triton", boundary, cuda);
    }
}

QStringList comboData(const QComboBox* combo) {
    QStringList values;
    for (int i = 0; i < combo->count(); ++i) {
        values << combo->itemData(i).toString();
    }
    return values;
}

} // namespace

class BoundaryFilterTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString storePath_;
    ProjectData data_;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("mkb-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("gui_boundary_filter"));
        QSettings().clear();
        storePath_ = dir_.filePath(QStringLiteral("boundaries.sqlite"));
        writeBoundaryFixture(storePath_.toStdString());
        data_.setStorePath(storePath_);
        QVERIFY(data_.waitUntilIdle());
        QVERIFY2(data_.lastError().isEmpty(), qPrintable(data_.lastError()));
        QCOMPARE(int(data_.comparisons().size()), 6);
    }

    void comparisonsShowTheBoundaryAndNeverPairAcrossBoundaries() {
        ComparisonsView view;
        view.setProjectData(&data_);
        const ComparisonsModel* model = view.model();
        QCOMPARE(model->headerData(ComparisonsModel::BoundaryColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Boundary"));
        int notComparable = 0;
        for (int row = 0; row < model->rowCount(); ++row) {
            const QString boundary = model->index(row, ComparisonsModel::BoundaryColumn).data().toString();
            if (boundary == QLatin1String("not comparable")) {
                ++notComparable;
                // Never paired: no outcome, and the tags say why rather than "unresolved".
                QVERIFY(model->index(row, ComparisonsModel::OutcomeColumn).data().toString().isEmpty());
                QCOMPARE(model->index(row, ComparisonsModel::TagsColumn).data().toString(),
                         QStringLiteral("not comparable"));
                QCOMPARE(model->index(row, ComparisonsModel::DirectionColumn).data().toString(),
                         QStringLiteral("triton2cuda"));
            } else {
                QVERIFY2(!model->index(row, ComparisonsModel::OutcomeColumn).data().toString().isEmpty(),
                         qPrintable(boundary));
            }
        }
        QCOMPARE(notComparable, 1);

        // The combo offers the values present (no legacy here) and narrows the rows.
        QComboBox* combo = view.filterCombo(ComparisonsModel::BoundaryColumn);
        QVERIFY(combo);
        QCOMPARE(comboData(combo), QStringList({QString(), "mkb", "not comparable", "strict"}));
        combo->setCurrentIndex(combo->findData(QStringLiteral("mkb")));
        QCOMPARE(view.filter()->rowCount(), 3);
        combo->setCurrentIndex(combo->findData(QStringLiteral("strict")));
        QCOMPARE(view.filter()->rowCount(), 2);
        combo->setCurrentIndex(combo->findData(QStringLiteral("not comparable")));
        QCOMPARE(view.filter()->rowCount(), 1);
        combo->setCurrentIndex(0);
        QCOMPARE(view.filter()->rowCount(), 6);
    }

    void overviewFiltersByBoundaryAndCountsTheNotComparable() {
        OverviewView view;
        view.setProjectData(&data_);
        QComboBox* combo = view.boundaryFilter();
        QCOMPARE(combo->objectName(), QStringLiteral("overviewBoundary"));
        QCOMPARE(comboData(combo), QStringList({QString(), "mkb", "strict"}));
        QCOMPARE(combo->itemText(0), QStringLiteral("Boundary: all"));
        auto shown = [&]() {
            std::size_t total = 0;
            for (const OverviewRow& row : view.model()->rows()) {
                total += row.comparisons;
            }
            return int(total);
        };
        const QString summary = view.findChild<QLabel*>(QStringLiteral("overviewSummary"))->text();
        QVERIFY2(summary.contains("1 cell-replicates not comparable (arms graded under different boundaries)"),
                 qPrintable(summary));
        QCOMPARE(shown(), 6);

        combo->setCurrentIndex(combo->findData(QStringLiteral("strict")));
        QCOMPARE(shown(), 2);
        QVERIFY(view.findChild<QLabel*>(QStringLiteral("overviewSummary"))
                    ->text()
                    .contains("Boundary strict: 2 of 6 comparisons"));
        combo->setCurrentIndex(combo->findData(QStringLiteral("mkb")));
        QCOMPARE(shown(), 3); // the not comparable cell is in neither boundary's rows
        // The choice holds across a reload of the same data.
        data_.reload();
        QVERIFY(data_.waitUntilIdle());
        QCOMPARE(combo->currentData().toString(), QStringLiteral("mkb"));
        QCOMPARE(shown(), 3);
        combo->setCurrentIndex(0);
        QCOMPARE(shown(), 6);
    }

    void overviewRowClickKeepsItsBoundaryInTheComparisons() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(storePath_));
        QVERIFY(window.projectData()->waitUntilIdle());
        window.showView(MainWindow::View::Overview);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QComboBox* boundary = window.overviewView()->boundaryFilter();
        boundary->setCurrentIndex(boundary->findData(QStringLiteral("mkb")));
        QTableView* table = window.overviewView()->table();
        int row = -1;
        for (int i = 0; i < table->model()->rowCount(); ++i) {
            if (table->model()->index(i, OverviewModel::DirectionColumn).data().toString() == "triton2cuda") {
                row = i;
            }
        }
        QVERIFY(row >= 0);
        const QRect cell = table->visualRect(table->model()->index(row, OverviewModel::ComparisonsColumn));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
        QVERIFY(window.currentView() == MainWindow::View::Comparisons);
        ComparisonsFilter* filter = window.comparisonsView()->filter();
        QCOMPARE(filter->rowCount(), 1); // p1's triton2cuda: p2's is strict, p3's not comparable
        QCOMPARE(filter->index(0, ComparisonsModel::BoundaryColumn).data().toString(), QStringLiteral("mkb"));
        QCOMPARE(window.comparisonsView()->filterCombo(ComparisonsModel::BoundaryColumn)->currentData().toString(),
                 QStringLiteral("mkb"));
    }

    void boundariesComeInTheirOwnOrder() {
        std::vector<mkb::analysis::Comparison> comparisons = data_.comparisons();
        QCOMPARE(boundariesPresent(comparisons), std::vector<std::string>({"mkb", "strict"}));
        QCOMPARE(notComparableCount(comparisons), std::size_t(1));
        QCOMPARE(comparisonsUnderBoundary(comparisons, "legacy").size(), std::size_t(0));
        QVERIFY(notComparableLine(0).empty());
    }
};

QTEST_MAIN(BoundaryFilterTest)
#include "tst_boundary_filter.moc"
