// Tests of the first launch: an empty project opens on the welcome page, each of its actions leads where it says
// (example project, grading, runs, import, recent projects), the window's default size, and the README's first
// command still opening the workbench.
#include "support/testpaths.h"

#include "core/store/store.h"
#include "core/util/paths.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"
#include "gui/shell/recent_projects.h"
#include "gui/welcome/example_project.h"
#include "gui/welcome/welcome_page.h"

#include <QApplication>
#include <QFileDialog>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace mkb;
using namespace mkb::gui;

class WelcomeTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

    QString emptyProject(const QString& name) {
        const QString path = dir_.filePath(name + ".sqlite");
        auto store = Store::open(path.toStdString(), OpenMode::CreateIfMissing);
        return store ? path : QString();
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("XDG_DATA_HOME", dir_.filePath("xdg-data").toUtf8());
        qputenv("MKB_DATA_DIR", QByteArray::fromStdString(mkbtest::sourceDir().string()));
        QCoreApplication::setOrganizationName("MetaKernelBenchTest");
        QCoreApplication::setApplicationName("mkb-workbench-welcome-test");
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.filePath("settings"));
    }

    void init() { QSettings().clear(); }

    void anEmptyProjectOpensOnTheWelcomePageWithTheRecentProjects() {
        const QString older = emptyProject("older");
        const QString fresh = emptyProject("fresh");
        {
            QSettings settings;
            RecentProjects(settings).add(older);
        }
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(fresh));
        QVERIFY(window.waitUntilIdle());
        QVERIFY(window.isWelcomeShown());
        QListWidget* recent = window.welcomePage()->recentProjectsList();
        QCOMPARE(recent->count(), 1); // the open project is not offered again
        QCOMPARE(recent->item(0)->data(Qt::UserRole).toString(), QFileInfo(older).absoluteFilePath());
        emit recent->itemActivated(recent->item(0));
        QVERIFY(window.waitUntilIdle());
        QCOMPARE(window.projectPath(), QFileInfo(older).absoluteFilePath());
    }

    void gradeAndRunLeadToTheirViews() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(emptyProject("steps")));
        QVERIFY(window.waitUntilIdle());
        QVERIFY(window.isWelcomeShown());
        window.welcomePage()->gradeKernelButton()->click();
        QVERIFY(!window.isWelcomeShown());
        QCOMPARE(window.currentView(), MainWindow::View::Problems);
        window.welcomePage()->startRunButton()->click();
        QCOMPARE(window.currentView(), MainWindow::View::Runs);
    }

    void importAsksForTheResultsFolder() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(emptyProject("import")));
        QVERIFY(window.waitUntilIdle());
        window.show();
        QString asked;
        QTimer::singleShot(200, this, [&asked] {
            if (auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget())) {
                asked = dialog->windowTitle();
                dialog->reject();
            }
        });
        window.welcomePage()->importResultsButton()->click();
        QVERIFY2(asked.contains("Results Folder"), qPrintable(asked));
        QVERIFY(window.isWelcomeShown()); // cancelled: nothing imported, still empty
    }

    void theExampleProjectOpensFromACopyWithItsData() {
        QVERIFY(QFileInfo(shippedExampleProject()).isFile());
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(emptyProject("before-example")));
        QVERIFY(window.waitUntilIdle());
        window.welcomePage()->openExampleButton()->click();
        QVERIFY(window.waitUntilIdle());
        const QString copy = QString::fromStdString((userDataDir() / "example" / "reference-cpusim.sqlite").string());
        QCOMPARE(window.projectPath(), QFileInfo(copy).absoluteFilePath());
        QVERIFY(!window.projectData()->trials().empty());
        QVERIFY(!window.isWelcomeShown());
        QCOMPARE(window.currentView(), MainWindow::View::Overview);
        for (const TrialRecord& trial : window.projectData()->trials()) {
            QCOMPARE(QString::fromStdString(trial.model), QStringLiteral("reference-solutions"));
        }
    }

    void withNoSavedLayoutTheWindowTakesMostOfTheScreen() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
        QCOMPARE(window.size(), QSize(available.width() * 4 / 5, available.height() * 4 / 5));
        QVERIFY(std::abs(window.geometry().center().x() - available.center().x()) <= 1);
    }

    void theReadmesFirstCommandOpensTheWorkbench() {
        // README: `... && build/dev/app/mkb-workbench` — no argument: the default project, created on first start,
        // empty, so the window opens on the welcome page and stays open until closed.
        const QString binary = QString::fromStdString((mkbtest::binaryDir() / "app" / "mkb-workbench").string());
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("QT_QPA_PLATFORM", "offscreen");
        environment.insert("XDG_CONFIG_HOME", dir_.filePath("readme-config"));
        environment.insert("XDG_DATA_HOME", dir_.filePath("readme-data"));
        QProcess workbench;
        workbench.setProcessEnvironment(environment);
        workbench.start(binary, QStringList{});
        QVERIFY(workbench.waitForStarted(10000));
        QVERIFY2(!workbench.waitForFinished(4000), qPrintable(QString::fromUtf8(workbench.readAllStandardError())));
        QVERIFY(QFileInfo::exists(dir_.filePath("readme-data/mkb/default.mkb.sqlite")));
        workbench.terminate();
        QVERIFY(workbench.waitForFinished(10000));

        // The same start as a screenshot: the empty project shows the welcome page (its heading's text is drawn).
        workbench.start(binary, {"--screenshot", dir_.filePath("welcome.png")});
        QVERIFY(workbench.waitForFinished(60000));
        QCOMPARE(workbench.exitCode(), 0);
        QCOMPARE(QImage(dir_.filePath("welcome.png")).size(), QSize(1280, 800));
    }
};

QTEST_MAIN(WelcomeTest)
#include "tst_welcome.moc"
