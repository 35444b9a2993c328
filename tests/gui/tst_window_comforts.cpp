// Tests of the window's everyday comforts offscreen: dropping a store opens it, dropping a MetaKernelBench results
// folder imports it in the background, palettes are applied and remembered, every view's table header is saved with
// the layout, and the problems view shows the project's last gradings once its data loaded.
#include "tst_project_data_fixture.h"

#include "gui/common/palettes.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/overview/overview_model.h"
#include "gui/overview/overview_view.h"
#include "gui/problems/problems_model.h"
#include "gui/problems/problems_view.h"
#include "gui/project/project_data.h"
#include "gui/runs/runs_view.h"
#include "gui/shell/main_window.h"

#include <QApplication>
#include <QDropEvent>
#include <QHeaderView>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <fstream>

using namespace mkb;
using namespace mkb::gui;

namespace {

void writeText(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::string recordJson(double passed, double speedup) {
    return R"({"rewards": {"imported": 1.0, "correct": )" + std::to_string(passed) + R"(, "speedup_vs_eager": )" +
           std::to_string(speedup) + R"(, "passed": )" + std::to_string(passed) +
           R"(}, "timed_out": false, "error": null, "skipped": null,
              "stamps": {"task_fingerprint": "fp1", "skill_sha256": null}})";
}

/// A MetaKernelBench results folder: one model, one problem, two solos and one skill arm.
QString makeResultsFolder(const QString& root) {
    const std::filesystem::path model = std::filesystem::path(root.toStdString()) / "results" / "glm-5";
    writeText(model / "store.json",
              R"({"model": "openrouter/z/glm-5", "prefix": "abc123", "created_at": "2026-01-01"})");
    writeText(model / "results.json",
              R"({"cells": [{"cell": {"problem": "01_mha_prefill", "category": "attention"}}]})");
    const std::filesystem::path problem = model / "problems" / "01_mha_prefill";
    writeText(problem / "abc123_p01_r1_solo_cutedsl" / "record.json", recordJson(1.0, 2.5));
    writeText(problem / "abc123_p01_r1_solo_tirx" / "record.json", recordJson(0.0, 0.0));
    writeText(problem / "abc123_p01_r1_cutedsl2tirx_skill" / "record.json", recordJson(1.0, 1.2));
    return QString::fromStdString((std::filesystem::path(root.toStdString()) / "results").string());
}

void drop(QWidget* target, const QString& path) {
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent dropEvent(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &dropEvent);
    QVERIFY(dropEvent.isAccepted());
}

} // namespace

class WindowComfortsTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString fixtureStore_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("XDG_DATA_HOME", dir_.filePath("xdg-data").toUtf8());
        QCoreApplication::setOrganizationName("MetaKernelBenchTest");
        QCoreApplication::setApplicationName("mkb-workbench-comforts-test");
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.filePath("settings"));
        fixtureStore_ = dir_.filePath("transfer.sqlite");
        mkbguitest::writeTransferFixture(fixtureStore_.toStdString());
    }

    void init() { QSettings().clear(); }

    void droppingAStoreOpensIt() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.acceptDrops());
        QSignalSpy opened(&window, &MainWindow::projectOpened);
        drop(&window, fixtureStore_);
        QVERIFY(opened.wait(10000));
        QCOMPARE(window.projectPath(), QFileInfo(fixtureStore_).absoluteFilePath());
        QVERIFY(window.waitUntilIdle());
        QCOMPARE(int(window.projectData()->trials().size()), 12);
        QVERIFY(window.comparisonsView()->model()->rowCount() > 0);
    }

    void droppingAResultsFolderImportsItInTheBackground() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        {
            // The project knows the problem (as `mkb import` of a checkout's problems would file it), so the
            // problems view lists it and can show its last grading.
            auto store = Store::open(dir_.filePath("import.sqlite").toStdString(), OpenMode::CreateIfMissing);
            QVERIFY(store.ok());
            Problem problem;
            problem.suite = "metakernelbench";
            problem.number = 1;
            problem.slug = "mha_prefill";
            problem.family = "attention";
            problem.title = "Multi-head attention prefill";
            problem.source = "def reference(q, k, v):\n    return q\n";
            problem.fingerprint = "fp1";
            QVERIFY((*store)->upsertProblem(problem).ok());
        }
        QVERIFY(window.loadProject(dir_.filePath("import.sqlite"), OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        QCOMPARE(int(window.projectData()->trials().size()), 0);

        QSignalSpy finished(&window, &MainWindow::importFinished);
        drop(&window, makeResultsFolder(dir_.filePath("mkb-checkout")));
        // The drop returns at once; the import runs on a worker while the window stays responsive.
        QTRY_VERIFY(window.isBusy() || !finished.isEmpty());
        QVERIFY(finished.wait(30000) || !finished.isEmpty());
        QVERIFY2(finished.front().at(0).toBool(), qPrintable(finished.front().at(1).toString()));
        QVERIFY(finished.front().at(1).toString().contains("3 trial(s) imported"));
        QVERIFY(window.waitUntilIdle());
        QCOMPARE(int(window.projectData()->trials().size()), 3);
        // The imported problem appears in the problems view with its last gradings.
        bool found = false;
        for (int row = 0; row < window.problemsView()->model()->rowCount(); ++row) {
            const QString grading =
                window.problemsView()->model()->index(row, ProblemsModel::LastGradingColumn).data().toString();
            found = found || grading.contains("cutedsl passed 2.50×");
        }
        QVERIFY(found);

        // Importing the same folder again changes nothing, and a missing folder is one clear failure.
        finished.clear();
        QVERIFY(window.importResultsFolder(dir_.filePath("mkb-checkout/results")));
        QVERIFY(finished.wait(30000));
        QVERIFY(finished.front().at(1).toString().contains("0 trial(s) imported, 3 unchanged"));
        finished.clear();
        QVERIFY(window.importResultsFolder(dir_.filePath("nowhere")));
        QVERIFY(finished.wait(30000));
        QVERIFY(!finished.front().at(0).toBool());
    }

    void palettesAreAppliedAndRemembered() {
        {
            MainWindow window;
            window.setSavesLayoutOnClose(false);
            window.choosePalette(PaletteChoice::Dark);
            QCOMPARE(QApplication::palette().color(QPalette::Window), darkPalette().color(QPalette::Window));
            QCOMPARE(QSettings().value("appearance/palette").toString(), QString("dark"));
            window.choosePalette(PaletteChoice::Light);
            QCOMPARE(QApplication::palette().color(QPalette::Base), lightPalette().color(QPalette::Base));
            window.choosePalette(PaletteChoice::Dark);
        }
        applyPalette(PaletteChoice::System);
        QVERIFY(QApplication::palette().color(QPalette::Window) != darkPalette().color(QPalette::Window));
        MainWindow reopened;
        reopened.setSavesLayoutOnClose(false);
        reopened.restorePalette();
        QCOMPARE(currentPalette(), PaletteChoice::Dark);
        QCOMPARE(QApplication::palette().color(QPalette::Window), darkPalette().color(QPalette::Window));
        applyPalette(PaletteChoice::System);
    }

    void everyViewsTableHeaderIsSavedWithTheLayout() {
        {
            MainWindow window;
            QVERIFY(window.loadProject(fixtureStore_));
            QVERIFY(window.waitUntilIdle());
            window.comparisonsView()->table()->sortByColumn(3, Qt::DescendingOrder);
            window.overviewView()->table()->setColumnWidth(0, 211);
            window.saveLayout();
        }
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.restoreLayout());
        QCOMPARE(window.comparisonsView()->table()->horizontalHeader()->sortIndicatorSection(), 3);
        QCOMPARE(window.comparisonsView()->table()->horizontalHeader()->sortIndicatorOrder(), Qt::DescendingOrder);
        QCOMPARE(window.overviewView()->table()->columnWidth(0), 211);
        // A layout of another version is ignored as a whole.
        QSettings().setValue("mainWindow/layoutVersion", MainWindow::kLayoutVersion - 1);
        MainWindow older;
        older.setSavesLayoutOnClose(false);
        QVERIFY(!older.restoreLayout());
        QVERIFY(older.comparisonsView()->table()->horizontalHeader()->sortIndicatorSection() != 3 ||
                older.comparisonsView()->table()->horizontalHeader()->sortIndicatorOrder() != Qt::DescendingOrder);
    }

    void hiddenPagesRefreshWhenShownNotOnEveryLoad() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        window.showView(MainWindow::View::Overview);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.loadProject(fixtureStore_));
        QVERIFY(window.waitUntilIdle());
        QVERIFY(window.overviewView()->model()->rowCount() > 0);    // the page shown is filled at once
        QCOMPARE(window.comparisonsView()->model()->rowCount(), 0); // the hidden one waits
        window.showView(MainWindow::View::Comparisons);
        QCOMPARE(window.comparisonsView()->model()->rowCount(), int(window.projectData()->comparisons().size()));
    }

    void theRunsViewFollowsTheOpenProject() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(fixtureStore_));
        QCOMPARE(window.runsView()->storePath(), window.projectPath());
        QVERIFY(window.runsView()->startButton()->isEnabled());
    }
};

QTEST_MAIN(WindowComfortsTest)
#include "tst_window_comforts.moc"
