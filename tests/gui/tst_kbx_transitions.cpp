// The workbench's KernelBench-X transitions: the core loader on a fixture corpus, the comparisons page's Transitions
// list and its filters, and a transition opened in the inspector.
#include "core/io/kbx_categories.h"
#include "core/io/kbx_transitions.h"
#include "core/report/report_kbx_agreement.h"
#include "gui/charts/charts_view.h"
#include "gui/charts/kbx_category_chart.h"
#include "gui/charts/kbx_events_chart.h"
#include "gui/common/diff_view.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/comparisons/transitions_model.h"
#include "gui/comparisons/transitions_view.h"
#include "gui/inspector/inspector_view.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"
#include "gui/tst_kbx_transitions_fixture.h"
#include "gui/welcome/example_project.h"
#include "gui/welcome/welcome_page.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>

#include <memory>

using namespace mkb;

namespace {

const io::KbxTransition* find(const std::vector<io::KbxTransition>& transitions, const std::string& task) {
    for (const io::KbxTransition& transition : transitions) {
        if (transition.event.task.find(task) != std::string::npos) {
            return &transition;
        }
    }
    return nullptr;
}

std::vector<io::KbxTransition> loadFixture(const std::string& path) {
    auto store = Store::open(path, OpenMode::MustExist);
    if (!store) {
        qFatal("cannot open %s", path.c_str());
    }
    auto categoryOf = io::storedCategoryOf(**store);
    auto transitions = io::loadKbxTransitions(**store, std::nullopt, *categoryOf);
    if (!transitions) {
        qFatal("%s", transitions.error().message.c_str());
    }
    return std::move(transitions.value());
}

int selectData(QComboBox* combo, const QString& value) {
    const int index = combo->findData(value);
    combo->setCurrentIndex(index);
    return index;
}

} // namespace

class TestKbxTransitions : public QObject {
    Q_OBJECT

private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>(); // a store of its own for each test
        QVERIFY(dir_->isValid());
    }

    void theLoaderGivesEveryKindWithBothVerdictsAndThePairedRatio() {
        const std::vector<io::KbxTransition> transitions = loadFixture(kbxgui::buildStore(*dir_));
        QCOMPARE(transitions.size(), std::size_t(2));
        const io::KbxTransition* exp = find(transitions, "exp");
        QVERIFY(exp);
        QCOMPARE(exp->event.kinds, std::string("speedup_increase"));
        QCOMPARE(exp->event.category, std::string("Math"));
        QCOMPARE(exp->event.beforeIndex, 1);
        QCOMPARE(exp->event.afterIndex, 2);
        QVERIFY(exp->theirsBefore.correct && exp->theirsAfter.correct);
        QCOMPARE(exp->theirsAfter.boundary, std::string("kbx"));
        QVERIFY(exp->event.claimedRatio);
        QCOMPARE(*exp->event.claimedRatio, 1.25);
        QVERIFY(exp->event.paired);
        QCOMPARE(exp->event.paired->ratio, 0.8);
        QCOMPARE(exp->event.paired->ciLow, 0.75);
        QCOMPARE(exp->event.paired->ciHigh, 0.85);
        QVERIFY(exp->oursBefore.at("mkb").correct);
        QVERIFY(!exp->oursAfter.at("mkb").correct);
        QCOMPARE(exp->oursAfter.at("mkb").error, std::string("mismatch at [0]"));
        QVERIFY(exp->beforeKernel.find("BEFORE_EXP") != std::string::npos);
        QVERIFY(exp->afterKernel.find("AFTER_EXP") != std::string::npos);
        QCOMPARE(io::standingText(exp->event), std::string("reversed")); // claimed faster, paired 0.8 slower

        const io::KbxTransition* fusion = find(transitions, "add_relu");
        QVERIFY(fusion);
        QCOMPARE(fusion->event.kinds, std::string("exe_fail_to_pass")); // not a performance kind, still listed
        QCOMPARE(fusion->event.category, std::string("Fusion"));
        QVERIFY(!fusion->theirsBefore.correct && fusion->theirsAfter.correct);
        QVERIFY(fusion->oursBefore.empty() && fusion->oursAfter.empty());
        QVERIFY(!fusion->event.paired);
        QVERIFY(!io::notTimedText(fusion->event).empty()); // no problem file: the fixture imports no suite
        QCOMPARE(io::standingText(fusion->event), "no speed claim (" + io::notTimedText(fusion->event) + ")");
    }

    void theTransitionsListFiltersByCategoryAndKind() {
        gui::ProjectData data;
        data.setStorePath(QString::fromStdString(kbxgui::buildStore(*dir_)));
        QVERIFY(data.waitUntilIdle());
        QCOMPARE(data.kbxTransitions().size(), std::size_t(2));
        gui::ComparisonsView view;
        gui::TransitionsView* list = view.transitions();
        QAbstractItemModelTester tester(list->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.setProjectData(&data);
        QVERIFY(view.tabs()->isTabVisible(1));
        QCOMPARE(list->model()->rowCount(), 2);
        QCOMPARE(list->filter()->rowCount(), 2);
        QCOMPARE(list->categoryCombo()->itemData(0).toString(), QString()); // "all" first
        QCOMPARE(list->categoryCombo()->count(), 3);                        // all, Fusion, Math
        QCOMPARE(list->kindCombo()->count(), 3);                            // all, exe_fail_to_pass, speedup_increase
        QVERIFY(selectData(list->categoryCombo(), QStringLiteral("Math")) > 0);
        QCOMPARE(list->filter()->rowCount(), 1);
        QVERIFY(list->filter()->index(0, gui::TransitionsModel::TaskColumn).data().toString().endsWith("_exp"));
        QVERIFY(selectData(list->kindCombo(), QStringLiteral("exe_fail_to_pass")) > 0);
        QCOMPARE(list->filter()->rowCount(), 0);
        list->categoryCombo()->setCurrentIndex(0);
        QCOMPARE(list->filter()->rowCount(), 1);
        QCOMPARE(list->filter()->index(0, gui::TransitionsModel::CategoryColumn).data().toString(),
                 QStringLiteral("Fusion"));
        list->kindCombo()->setCurrentIndex(0);
        list->searchField()->setText(QStringLiteral("add_relu"));
        QCOMPARE(list->filter()->rowCount(), 1);
        list->searchField()->clear();
        QCOMPARE(list->filter()->rowCount(), 2);

        // The columns: ours under mkb, the claimed and paired ratios, the standing.
        const gui::TransitionsModel* model = list->model();
        QCOMPARE(model->boundaries(), QStringList{QStringLiteral("mkb")});
        int expRow = model->transitionAt(0)->event.task.find("exp") != std::string::npos ? 0 : 1;
        QCOMPARE(model->index(expRow, gui::TransitionsModel::TheirsColumn).data().toString(),
                 QStringLiteral("correct → correct"));
        QCOMPARE(model->index(expRow, gui::TransitionsModel::FixedBeforeOurs).data().toString(),
                 QStringLiteral("correct → not correct"));
        QCOMPARE(model->index(expRow, model->claimedColumn()).data().toString(), QStringLiteral("1.250"));
        QCOMPARE(model->index(expRow, model->pairedColumn()).data().toString(), QStringLiteral("0.800 [0.750, 0.850]"));
        QCOMPARE(model->index(expRow, model->standingColumn()).data().toString(), QStringLiteral("reversed"));
        QCOMPARE(model->index(expRow, gui::TransitionsModel::RoundsColumn).data().toString(),
                 QStringLiteral("round_0 → round_1"));
    }

    void aStoreWithoutTransitionsHidesTheTab() {
        gui::ProjectData data;
        data.setTrials({});
        gui::ComparisonsView view;
        view.setProjectData(&data);
        QVERIFY(!view.tabs()->isTabVisible(1));
        QCOMPARE(view.transitions()->model()->rowCount(), 0);
    }

    void activatingATransitionOpensItInTheInspector() {
        gui::ProjectData data;
        data.setStorePath(QString::fromStdString(kbxgui::buildStore(*dir_)));
        QVERIFY(data.waitUntilIdle());
        gui::ComparisonsView view;
        view.setProjectData(&data);
        view.showTransitions();
        QCOMPARE(view.tabs()->currentIndex(), 1);
        gui::TransitionsView* list = view.transitions();
        QVERIFY(selectData(list->categoryCombo(), QStringLiteral("Math")) > 0);
        QSignalSpy activated(&view, &gui::ComparisonsView::transitionActivated);
        view.resize(900, 500);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        list->table()->setFocus();
        list->table()->setCurrentIndex(list->filter()->index(0, 0));
        QTest::keyClick(list->table(), Qt::Key_Return);
        QCOMPARE(activated.count(), 1);
        const auto transition = activated.front().front().value<io::KbxTransition>();
        QCOMPARE(transition.event.category, std::string("Math"));

        gui::InspectorView inspector;
        inspector.showTransition(transition);
        QVERIFY(inspector.diffView()->leftPane()->toPlainText().contains(QStringLiteral("BEFORE_EXP")));
        QVERIFY(inspector.diffView()->rightPane()->toPlainText().contains(QStringLiteral("AFTER_EXP")));
        QVERIFY(!inspector.diffView()->leftPane()->toPlainText().contains(QStringLiteral("AFTER_EXP")));
        const QString header = inspector.headline()->text();
        QVERIFY2(header.contains(QStringLiteral("Theirs (KernelBench-X): round_0 correct · round_1 correct")),
                 qPrintable(header));
        QVERIFY2(header.contains(QStringLiteral("Ours (mkb): round_0 correct · round_1 not correct: mismatch at [0]")),
                 qPrintable(header));
        QVERIFY2(header.contains(QStringLiteral("paired after/before 0.800, 95% CI [0.750, 0.850]")),
                 qPrintable(header));
        QVERIFY2(header.contains(QStringLiteral("standing: <b>reversed</b>")), qPrintable(header));
    }

    void theCategoryChartDrawsKbxAgreementsNumbers() {
        const std::string path = kbxgui::buildStore(*dir_);
        auto store = Store::open(path, OpenMode::MustExist);
        QVERIFY(store);
        auto categoryOf = io::storedCategoryOf(**store);
        QVERIFY(categoryOf);
        auto rounds = io::loadKbxRegradedRounds(**store, std::nullopt, *categoryOf);
        QVERIFY(rounds);
        QCOMPARE(rounds->size(), std::size_t(1)); // mkb
        const std::vector<analysis::AgreementGroup> groups = analysis::kbxAgreement(rounds->at("mkb"));
        auto agreement = io::loadKbxAgreement(**store, std::nullopt, *categoryOf);
        QVERIFY(agreement);
        const auto bars = gui::KbxCategoryChart::bars(*agreement, gui::KbxCategoryChart::Measure::PassRate);
        // Per category (all, Math): theirs, then ours (mkb); every value kbxAgreement's, in percent.
        QCOMPARE(bars.size(), 2 * groups.size());
        for (std::size_t g = 0; g < groups.size(); ++g) {
            QCOMPARE(bars[2 * g].series, std::string("theirs"));
            QCOMPARE(*bars[2 * g].value, 100.0 * *groups[g].theirsCorrectShare);
            QCOMPARE(bars[2 * g + 1].series, std::string("ours (mkb)"));
            QCOMPARE(*bars[2 * g + 1].value, 100.0 * *groups[g].oursCorrectShare);
            QCOMPARE(bars[2 * g + 1].n, groups[g].rounds);
        }
        QCOMPARE(*bars[1].value, 50.0);  // our grader: round_0 correct, round_1 not
        QCOMPARE(*bars[0].value, 100.0); // theirs: both correct
        // The rounds are the report's: its kbx-agreement table holds the same shares.
        auto tables = report::kbxAgreementTables(**store, report::ReportOptions{}, *categoryOf);
        QVERIFY(tables && !tables->empty());
        const report::ReportTable& table = tables->front();
        QCOMPARE(table.rows.size(), groups.size());
        QCOMPARE(table.rows[0][6].number, *groups[0].oursCorrectShare);
        QCOMPARE(table.rows[0][3].number, *groups[0].theirsCorrectShare);

        const auto speedups = gui::KbxCategoryChart::bars(*agreement, gui::KbxCategoryChart::Measure::Speedup);
        QCOMPARE(speedups.size(), groups.size()); // ours/theirs per boundary only
        QCOMPARE(speedups[0].n, groups[0].speedupPairs);
        QCOMPARE(speedups[0].value.has_value(), groups[0].speedupRatioGeometricMean.has_value());

        gui::ProjectData data;
        data.setStorePath(QString::fromStdString(path));
        QVERIFY(data.waitUntilIdle());
        gui::ChartsView view(&data);
        view.setCurrentChart(7);
        auto* chart = qobject_cast<gui::KbxCategoryChart*>(view.charts()[7]);
        QVERIFY(chart);
        QCOMPARE(chart->marks().size(), bars.size()); // one mark per bar with a value
        QCOMPARE(chart->marks()[1].upper, 50.0);
    }

    void theEventsChartDrawsEachTimedClaimWithTheReportsStanding() {
        const std::string path = kbxgui::buildStore(*dir_);
        const std::vector<io::KbxTransition> transitions = loadFixture(path);
        const gui::KbxEventPoints all = gui::KbxEventsChart::points(transitions);
        QCOMPARE(all.performanceEvents, std::size_t(1)); // exe_fail_to_pass is no performance event
        QCOMPARE(all.points.size(), std::size_t(1));
        const gui::KbxEventPoint& point = all.points.front();
        QCOMPARE(point.kind, std::string("speedup_increase"));
        QCOMPARE(point.paired.ratio, 0.8);
        QVERIFY(point.claimed);
        QCOMPARE(*point.claimed, 1.25);
        QVERIFY(point.standing == analysis::EventStanding::Reversed); // claimed faster, the paired CI is below 1
        QCOMPARE(point.standingText, io::standingText(find(transitions, "exp")->event));

        gui::ProjectData data;
        data.setStorePath(QString::fromStdString(path));
        QVERIFY(data.waitUntilIdle());
        gui::ChartsView view(&data);
        view.setCurrentChart(9);
        auto* chart = qobject_cast<gui::KbxEventsChart*>(view.charts()[9]);
        QVERIFY(chart);
        QCOMPARE(chart->marks().size(), std::size_t(1)); // one mark per timed event
        QCOMPARE(chart->marks()[0].upper, 0.8);
        QVERIFY2(chart->marks()[0].toolTip.contains(QStringLiteral("95% CI [0.750, 0.850]")),
                 qPrintable(chart->marks()[0].toolTip));
        QVERIFY2(chart->marks()[0].toolTip.contains(QStringLiteral("claimed 1.250")),
                 qPrintable(chart->marks()[0].toolTip));
    }

    void theWelcomePagesSecondExampleOpensTheRegradedCorpus() {
        qputenv("XDG_DATA_HOME", dir_->filePath(QStringLiteral("data")).toUtf8());
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_->filePath(QStringLiteral("settings")));
        gui::WelcomePage page;
        QSignalSpy asked(&page, &gui::WelcomePage::openKbxExampleRequested);
        QTest::mouseClick(page.openKbxExampleButton(), Qt::LeftButton);
        QCOMPARE(asked.count(), 1);

        gui::MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.openExampleProject(gui::ExampleProject::KbxCorpusH200));
        QVERIFY(window.waitUntilIdle());
        const QString copy = dir_->filePath(QStringLiteral("data/mkb/example/kbx-corpus-h200.sqlite"));
        QVERIFY2(QFileInfo::exists(copy), qPrintable(copy)); // the user's writable copy, not the shipped file
        QVERIFY(window.windowTitle().contains(QStringLiteral("kbx-corpus-h200.sqlite")));

        gui::ProjectData data;
        data.setStorePath(gui::shippedExampleProject(gui::ExampleProject::KbxCorpusH200));
        QVERIFY(data.waitUntilIdle(30000));
        QCOMPARE(data.trials().size(), std::size_t(84));
        QVERIFY(data.kbxTransitions().size() >= 57);          // the 57 speedup_increase claims at least
        QCOMPARE(data.kbxAgreement().size(), std::size_t(2)); // mkb and strict
        QCOMPARE(data.kbxAgreement().front().groups.front().rounds, std::size_t(141));
    }

private:
    std::unique_ptr<QTemporaryDir> dir_;
};

QTEST_MAIN(TestKbxTransitions)
#include "tst_kbx_transitions.moc"
