// Tests of the main window offscreen: the problems view on a temp project, view shortcuts, recent projects, the
// saved layout's version check and the refusal of a corrupt project file.
#include "gui_fixtures.h"
#include "support/testpaths.h"

#include "core/catalog/catalog.h"
#include "core/store/store.h"
#include "core/util/paths.h"
#include "gui/charts/chart.h"
#include "gui/charts/charts_view.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/problems/problems_filter.h"
#include "gui/problems/problems_model.h"
#include "gui/problems/problems_view.h"
#include "gui/runs/runs_view.h"
#include "gui/shell/main_window.h"
#include "gui/shell/recent_projects.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <sqlite3.h>

using namespace mkb;
using namespace mkb::gui;

namespace {

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QStringList recentMenuPaths(QMenu* menu) {
    emit menu->aboutToShow();
    QStringList paths;
    for (QAction* action : menu->actions()) {
        if (!action->data().toString().isEmpty()) {
            paths << action->data().toString();
        }
    }
    return paths;
}

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    QString fixtureSuite_;

    QString projectPath(const QString& name) const { return dir_.filePath(name + ".sqlite"); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("XDG_DATA_HOME", dir_.filePath("xdg-data").toUtf8());
        QCoreApplication::setOrganizationName("MetaKernelBenchTest");
        QCoreApplication::setApplicationName("mkb-workbench-test");
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.filePath("settings"));
        fixtureSuite_ = dir_.filePath("suite");
        QVERIFY(mkbguitest::writeFixtureSuite(fixtureSuite_));
    }

    void init() { QSettings().clear(); }

    void temporaryProjectShowsTheShippedSuite() {
        const Catalog shipped = loadCatalog({shippedProblemsDir()});
        QVERIFY2(!shipped.problems.empty(), "the shipped suite has no problems");

        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QAbstractItemModelTester tester(window.problemsView()->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(window.loadProject(projectPath("shipped"), OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        QVERIFY(QFileInfo::exists(projectPath("shipped")));
        QVERIFY(window.currentView() == MainWindow::View::Problems);
        QVERIFY(window.windowTitle().contains("shipped.sqlite"));

        ProblemsView* view = window.problemsView();
        QCOMPARE(view->model()->rowCount(), int(shipped.problems.size()));
        for (size_t i = 0; i < shipped.problems.size(); ++i) {
            QCOMPARE(view->model()->rowAt(int(i))->problem.fingerprint, shipped.problems[i].fingerprint);
        }
        QCOMPARE(view->table()->model()->rowCount(), int(shipped.problems.size()));
        QVERIFY(view->statusLine()->text().startsWith(QString("%1 of %1 problems").arg(shipped.problems.size())));

        // The family combo lists every family; choosing one narrows the table to it.
        const QString family = QString::fromStdString(shipped.problems.front().family);
        const int familyIndex = view->familyCombo()->findData(family);
        QVERIFY(familyIndex > 0);
        view->familyCombo()->setCurrentIndex(familyIndex);
        int expected = 0;
        for (const Problem& problem : shipped.problems) {
            expected += problem.family == family.toStdString() ? 1 : 0;
        }
        QCOMPARE(view->table()->model()->rowCount(), expected);
        QVERIFY(expected < int(shipped.problems.size()) || shipped.problems.size() == 1);
    }

    void filterAndSortInTheWindow() {
        MainWindow window({fixtureSuite_.toStdString()});
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(projectPath("fixture"), OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        ProblemsView* view = window.problemsView();
        QAbstractItemModel* shown = view->table()->model();
        QCOMPARE(shown->rowCount(), 4);

        QTest::keyClicks(view->filterEdit(), "attention");
        QCOMPARE(shown->rowCount(), 2);
        QVERIFY(view->statusLine()->text().startsWith("2 of 4 problems"));
        view->filterEdit()->clear();
        QCOMPARE(shown->rowCount(), 4);

        view->table()->sortByColumn(ProblemsModel::NumberColumn, Qt::DescendingOrder);
        QCOMPARE(shown->index(0, ProblemsModel::NumberColumn).data().toString(), QString("04"));
        view->table()->sortByColumn(ProblemsModel::FamilyColumn, Qt::AscendingOrder);
        QCOMPARE(shown->index(3, ProblemsModel::FamilyColumn).data().toString(), QString("moe"));
    }

    void problemsStoredInTheProjectAppearBesideTheSuite() {
        {
            auto store = Store::open(projectPath("stored").toStdString(), OpenMode::CreateIfMissing);
            QVERIFY2(store, store ? "" : store.error().message.c_str());
            Problem imported;
            imported.suite = "metakernelbench";
            imported.number = 42;
            imported.slug = "paged_write";
            imported.family = "kv_cache";
            imported.title = "Paged KV write";
            imported.source = "\"\"\"Paged KV write\"\"\"\n";
            imported.fingerprint = std::string(64, 'a');
            auto id = store.value()->upsertProblem(imported);
            QVERIFY2(id, id ? "" : id.error().message.c_str());
        }
        MainWindow window({fixtureSuite_.toStdString()});
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(projectPath("stored")));
        QVERIFY(window.waitUntilIdle());
        ProblemsModel* model = window.problemsView()->model();
        QCOMPARE(model->rowCount(), 5);
        QCOMPARE(model->index(4, ProblemsModel::SlugColumn).data().toString(), QString("paged_write"));
        QCOMPARE(model->index(4, ProblemsModel::SuiteColumn).data().toString(), QString("metakernelbench (project)"));
    }

    void ctrlDigitsSwitchViews() {
        MainWindow window({fixtureSuite_.toStdString()});
        window.setSavesLayoutOnClose(false);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QVERIFY(QFile::exists(":/mkb/icons/view-problems.svg"));
        QVERIFY(!window.windowIcon().isNull());
        QTest::keyClick(&window, Qt::Key_1, Qt::ControlModifier);
        QVERIFY(window.currentView() == MainWindow::View::Overview);
        // Every view is real: no stand-in page is left.
        QVERIFY(window.findChildren<QLabel*>("pendingViewText").isEmpty());
        QVERIFY(window.chartsView() != nullptr);
        QVERIFY(window.runsView() != nullptr);
        QTest::keyClick(&window, Qt::Key_5, Qt::ControlModifier);
        QVERIFY(window.currentView() == MainWindow::View::Runs);
        QTest::keyClick(&window, Qt::Key_2, Qt::ControlModifier);
        QVERIFY(window.currentView() == MainWindow::View::Transfers);
        QTest::keyClick(&window, Qt::Key_3, Qt::ControlModifier);
        QVERIFY(window.currentView() == MainWindow::View::Comparisons);
        // Ctrl+F focuses the current view's search field.
        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(window.comparisonsView()->searchField()->hasFocus());
        QTest::keyClick(&window, Qt::Key_4, Qt::ControlModifier);
        QVERIFY(window.currentView() == MainWindow::View::Charts);
        QTest::keyClick(&window, Qt::Key_PageDown, Qt::ControlModifier);
        QCOMPARE(window.chartsView()->currentChart(), window.chartsView()->charts().at(1));
        QTest::keyClick(&window, Qt::Key_PageUp, Qt::ControlModifier);
        QTest::keyClick(&window, Qt::Key_PageUp, Qt::ControlModifier);
        QCOMPARE(window.chartsView()->currentChart(), window.chartsView()->charts().back());
        QTest::keyClick(&window, Qt::Key_6, Qt::ControlModifier);
        QVERIFY(window.currentView() == MainWindow::View::Problems);
        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(window.problemsView()->filterEdit()->hasFocus());
    }

    void recentProjectsUpdateAndPrune() {
        QSettings settings;
        RecentProjects recent(settings);
        QVERIFY(recent.paths().isEmpty());
        QStringList created;
        for (int i = 0; i < RecentProjects::kMaximum + 2; ++i) {
            created << projectPath(QString("recent%1").arg(i));
            QVERIFY(mkbguitest::writeFile(created.back(), ""));
            recent.add(created.back());
        }
        QCOMPARE(recent.paths().size(), RecentProjects::kMaximum);
        QCOMPARE(recent.paths().front(), created.back());
        recent.add(created[5]);
        QCOMPARE(recent.paths().front(), created[5]);
        QCOMPARE(recent.paths().count(created[5]), 1);
        QVERIFY(QFile::remove(created[5]));
        QVERIFY(!recent.paths().contains(created[5]));
        QVERIFY(!settings.value("recentProjects").toStringList().contains(created[5])); // pruned for good

        // The window adds each opened project first and drops files that disappeared.
        recent.clear();
        MainWindow window({fixtureSuite_.toStdString()});
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(projectPath("first"), OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        QVERIFY(window.loadProject(projectPath("second"), OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        QCOMPARE(recentMenuPaths(window.recentProjectsMenu()),
                 QStringList({projectPath("second"), projectPath("first")}));
        QVERIFY(QFile::remove(projectPath("first")));
        QFile::remove(projectPath("first") + "-wal");
        QFile::remove(projectPath("first") + "-shm");
        QCOMPARE(recentMenuPaths(window.recentProjectsMenu()), QStringList({projectPath("second")}));
    }

    void layoutRestoreIgnoresAnOldVersion() {
        {
            MainWindow window({fixtureSuite_.toStdString()});
            window.resize(900, 600);
            window.showView(MainWindow::View::Charts);
            window.problemsView()->table()->sortByColumn(ProblemsModel::TitleColumn, Qt::DescendingOrder);
            window.saveLayout();
        }
        {
            MainWindow window({fixtureSuite_.toStdString()});
            QVERIFY(window.restoreLayout());
            QVERIFY(window.currentView() == MainWindow::View::Charts);
            QCOMPARE(window.size(), QSize(900, 600));
            QVERIFY(window.loadProject(projectPath("layout"), OpenMode::CreateIfMissing));
            QVERIFY(window.waitUntilIdle());
            QTableView* table = window.problemsView()->table();
            QCOMPARE(table->horizontalHeader()->sortIndicatorSection(), int(ProblemsModel::TitleColumn));
            QCOMPARE(table->model()->index(0, ProblemsModel::NumberColumn).data().toString(), QString("03"));
        }
        QSettings().setValue("mainWindow/layoutVersion", MainWindow::kLayoutVersion - 1);
        {
            MainWindow window({fixtureSuite_.toStdString()});
            QVERIFY(!window.restoreLayout());
            QVERIFY(window.currentView() == MainWindow::View::Problems);
            QVERIFY(window.size() != QSize(900, 600));
            QCOMPARE(window.problemsView()->table()->horizontalHeader()->sortIndicatorSection(),
                     int(ProblemsModel::NumberColumn));
        }
    }

    void corruptProjectIsReportedAndLeftByteIdentical() {
        const QString corrupt = projectPath("corrupt");
        QByteArray garbage = "SQLite format 3";
        garbage.append('\0');
        for (int i = 0; i < 3000; ++i) {
            garbage.append(char((i * 7919) % 251));
        }
        QVERIFY(mkbguitest::writeFile(corrupt, garbage));

        MainWindow window({fixtureSuite_.toStdString()});
        window.setSavesLayoutOnClose(false);
        QSignalSpy failures(&window, &MainWindow::projectOpenFailed);
        const Status status = window.loadProject(corrupt);
        QVERIFY(!status);
        QVERIFY2(QString::fromStdString(status.error().message).contains("corrupt.sqlite"),
                 status.error().message.c_str());
        QCOMPARE(failures.count(), 1);
        QVERIFY(window.store() == nullptr);
        QCOMPARE(readAll(corrupt), garbage);

        // Interactively: a message box names the file and the reason and offers another project.
        QString boxText;
        QString boxDetails;
        QStringList buttons;
        QTimer poll;
        poll.setInterval(20);
        connect(&poll, &QTimer::timeout, this, [&] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box) {
                return;
            }
            poll.stop();
            boxText = box->text();
            boxDetails = box->informativeText();
            for (QAbstractButton* button : box->buttons()) {
                buttons << button->text();
            }
            box->reject();
        });
        poll.start();
        QVERIFY(!window.openProject(corrupt));
        QVERIFY2(boxText.contains(corrupt), qPrintable(boxText));
        QVERIFY2(boxDetails.contains(QString::fromStdString(status.error().message)), qPrintable(boxDetails));
        QVERIFY(boxDetails.contains("has not been changed"));
        QVERIFY2(buttons.contains("Open Another Project…"), qPrintable(buttons.join(',')));
        QCOMPARE(readAll(corrupt), garbage);
        QVERIFY(!QFileInfo::exists(corrupt + "-wal"));

        // A good project stays open when another one fails.
        QVERIFY(window.loadProject(projectPath("good"), OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        QVERIFY(!window.loadProject(corrupt));
        QCOMPARE(window.projectPath(), projectPath("good"));
        QVERIFY(window.store() != nullptr);
        QCOMPARE(readAll(corrupt), garbage);
    }

    void newerSchemaProjectIsRefusedAndLeftByteIdentical() {
        const QString newer = projectPath("newer");
        QVERIFY(Store::open(newer.toStdString(), OpenMode::CreateIfMissing));
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(newer.toUtf8().constData(), &db), SQLITE_OK);
        const std::string bump = "PRAGMA user_version = " + std::to_string(Store::latestSchemaVersion() + 5);
        QCOMPARE(sqlite3_exec(db, bump.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
        QCOMPARE(sqlite3_close(db), SQLITE_OK);
        const QByteArray before = readAll(newer);

        MainWindow window({fixtureSuite_.toStdString()});
        window.setSavesLayoutOnClose(false);
        const Status status = window.loadProject(newer);
        QVERIFY(!status);
        QVERIFY2(QString::fromStdString(status.error().message).contains("newer.sqlite"),
                 status.error().message.c_str());
        QVERIFY(window.store() == nullptr);
        QCOMPARE(readAll(newer), before);
    }

    void theBinaryOpensAProjectAndSavesAScreenshot() {
        const QString binary = QString::fromStdString((mkbtest::binaryDir() / "app" / "mkb-workbench").string());
        QVERIFY2(QFileInfo(binary).isExecutable(), qPrintable(binary));
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("QT_QPA_PLATFORM", "offscreen");
        environment.insert("XDG_CONFIG_HOME", dir_.filePath("binary-config"));
        environment.insert("XDG_DATA_HOME", dir_.filePath("binary-data"));

        const QString screenshot = dir_.filePath("shots/problems.png");
        QProcess workbench;
        workbench.setProcessEnvironment(environment);
        workbench.start(binary, {"--screenshot", screenshot, "--view", "problems"});
        QVERIFY(workbench.waitForFinished(60000));
        QCOMPARE(workbench.exitCode(), 0);
        // With no project named, the default project is created under the user's data folder.
        QVERIFY(QFileInfo::exists(dir_.filePath("binary-data/mkb/default.mkb.sqlite")));
        const QImage image(screenshot);
        QCOMPARE(image.size(), QSize(1280, 800));
        QVERIFY(image.pixel(10, 10) != image.pixel(640, 400) || image.pixel(640, 400) != image.pixel(1200, 700));

        // A corrupt project named on the command line: one line on stderr, exit 4, file untouched.
        const QString corrupt = dir_.filePath("binary-corrupt.sqlite");
        QVERIFY(mkbguitest::writeFile(corrupt, "not a database at all\n"));
        workbench.start(binary, {"--screenshot", dir_.filePath("shots/never.png"), corrupt});
        QVERIFY(workbench.waitForFinished(60000));
        QCOMPARE(workbench.exitCode(), 4);
        const QString error = QString::fromUtf8(workbench.readAllStandardError());
        QVERIFY2(error.contains("binary-corrupt.sqlite"), qPrintable(error));
        QCOMPARE(readAll(corrupt), QByteArray("not a database at all\n"));
        QVERIFY(!QFileInfo::exists(dir_.filePath("shots/never.png")));

        workbench.start(binary, {"--view", "nowhere"});
        QVERIFY(workbench.waitForFinished(60000));
        QCOMPARE(workbench.exitCode(), 2);
    }
};

QTEST_MAIN(MainWindowTest)
#include "tst_main_window.moc"
