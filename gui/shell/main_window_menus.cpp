// The main window's menus: File (projects, recent projects, import, reload), View (views, find, changes, charts,
// palette) and Help; each action's shortcut is listed by the shortcuts dialog.
#include "gui/shell/main_window.h"

#include "gui/common/diff_view.h"
#include "gui/inspector/inspector_view.h"
#include "gui/project/project_data.h"
#include "gui/shell/palette_menu.h"
#include "gui/shell/recent_projects.h"
#include "gui/shell/shortcuts_dialog.h"

#include <QAction>
#include <QActionGroup>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QIcon>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>

namespace mkb::gui {

void MainWindow::buildMenus() {
    QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
    QAction* newProject = fileMenu->addAction(tr("&New Project…"), this, &MainWindow::chooseAndCreateProject);
    newProject->setShortcut(QKeySequence::New);
    QAction* openProjectAction = fileMenu->addAction(tr("&Open Project…"), this, &MainWindow::chooseAndOpenProject);
    openProjectAction->setShortcut(QKeySequence::Open);
    recentMenu_ = fileMenu->addMenu(tr("Open &Recent"));
    recentMenu_->setObjectName(QStringLiteral("recentProjectsMenu"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentProjectsMenu);
    QAction* importAction = fileMenu->addAction(tr("&Import Results Folder…"), this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Import a MetaKernelBench Results Folder"));
        if (!folder.isEmpty()) {
            importResultsFolder(folder);
        }
    });
    importAction->setObjectName(QStringLiteral("importResultsFolder"));
    importAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    QAction* reload = fileMenu->addAction(tr("Re&load Project Data"), projectData_, &ProjectData::reload);
    reload->setObjectName(QStringLiteral("reloadProjectData"));
    reload->setShortcut(QKeySequence::Refresh);
    fileMenu->addSeparator();
    QAction* quit = fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);

    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    viewActions_ = new QActionGroup(this);
    viewActions_->setExclusive(true);
    for (int index = 0; index < kViewCount; ++index) {
        const View view = View(index);
        QAction* action = viewMenu->addAction(QIcon(QString::fromLatin1(describe(view).icon)), viewTitle(view));
        action->setCheckable(true);
        action->setData(index);
        action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + index)));
        action->setShortcutContext(Qt::WindowShortcut);
        viewActions_->addAction(action);
        connect(action, &QAction::triggered, this, [this, view] { showView(view); });
    }
    viewMenu->addSeparator();
    QAction* find = viewMenu->addAction(tr("&Find in View"), this, &MainWindow::focusCurrentSearch);
    find->setObjectName(QStringLiteral("findInView"));
    find->setShortcut(QKeySequence::Find);
    QAction* nextChange = viewMenu->addAction(tr("&Next Change"), this, [this] {
        showView(View::Transfers);
        inspectorView_->diffView()->nextChange();
    });
    nextChange->setShortcut(QKeySequence(Qt::Key_F8));
    QAction* previousChange = viewMenu->addAction(tr("&Previous Change"), this, [this] {
        showView(View::Transfers);
        inspectorView_->diffView()->previousChange();
    });
    previousChange->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F8));
    // The inspector's own button does the tagging, so the keyboard and the mouse take the same path.
    QAction* tagClaim = viewMenu->addAction(tr("&Tag Selected Claim"), this, [this] {
        showView(View::Transfers);
        if (auto* button = inspectorView_->findChild<QPushButton*>(QStringLiteral("tagSelection"))) {
            button->click();
        }
    });
    tagClaim->setObjectName(QStringLiteral("tagSelectedClaim"));
    tagClaim->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
    QAction* nextChart = viewMenu->addAction(tr("Ne&xt Chart"), this, [this] { stepChart(1); });
    nextChart->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_PageDown));
    QAction* previousChart = viewMenu->addAction(tr("Pre&vious Chart"), this, [this] { stepChart(-1); });
    previousChart->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_PageUp));
    viewMenu->addSeparator();
    paletteMenu_ = new PaletteMenu(viewMenu, this);

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    QAction* shortcuts = helpMenu->addAction(tr("&Keyboard Shortcuts"), this, [this] { showShortcutsDialog(this); });
    shortcuts->setShortcut(QKeySequence::HelpContents);
    helpMenu->addAction(tr("&About MetaKernelBench Workbench"), this, [this] {
        QMessageBox::about(this, tr("About MetaKernelBench Workbench"),
                           tr("<b>MetaKernelBench Workbench</b> %1<br>Benchmarking GPU-kernel knowledge transfer "
                              "between kernel DSLs.")
                               .arg(QCoreApplication::applicationVersion().toHtmlEscaped()));
    });
    rebuildRecentProjectsMenu();
}

void MainWindow::rebuildRecentProjectsMenu() {
    QSettings settings;
    const QStringList paths = RecentProjects(settings).paths();
    recentMenu_->clear();
    for (int i = 0; i < paths.size(); ++i) {
        const QString& path = paths[i];
        // The accelerator digit keeps the first ten reachable by keyboard.
        const QString label = QStringLiteral("&%1 %2").arg((i + 1) % 10).arg(QDir::toNativeSeparators(path));
        QAction* action = recentMenu_->addAction(label, this, [this, path] { openProject(path); });
        action->setData(path);
    }
    if (paths.isEmpty()) {
        recentMenu_->addAction(tr("No recent projects"))->setEnabled(false);
        return;
    }
    recentMenu_->addSeparator();
    recentMenu_->addAction(tr("Clear List"), this, [this] {
        QSettings settings;
        RecentProjects(settings).clear();
        rebuildRecentProjectsMenu();
    });
}

} // namespace mkb::gui
