// The main window: opening projects (with clear failure dialogs), the view switcher, menus and layout persistence.
#include "gui/shell/main_window.h"

#include "core/util/paths.h"
#include "gui/charts/charts_view.h"
#include "gui/common/resources.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/inspector/inspector_view.h"
#include "gui/overview/overview_view.h"
#include "gui/problems/problems_listing.h"
#include "gui/problems/problems_view.h"
#include "gui/project/project_data.h"
#include "gui/shell/pending_view.h"
#include "gui/shell/recent_projects.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>

namespace mkb::gui {
namespace {

const QString kLayoutGroup = QStringLiteral("mainWindow");
const QString kProjectFilter = QStringLiteral("Workbench projects (*.sqlite *.db);;All files (*)");

struct ViewDescription {
    const char* icon; // resource path
    const char* title;
    const char* pending; // what the view will show once runs exist; empty for views that are real now
};

const ViewDescription kViews[MainWindow::kViewCount] = {
    {":/mkb/icons/view-overview.svg", QT_TRANSLATE_NOOP("MainWindow", "Overview"),
     QT_TRANSLATE_NOOP("MainWindow", "The model × direction table of transfer rate, ΔGM, harm, skill gain and lift, "
                                     "with pass rate and coverage, and per-family lift and regression charts.")},
    {":/mkb/icons/view-transfers.svg", QT_TRANSLATE_NOOP("MainWindow", "Transfers"),
     QT_TRANSLATE_NOOP("MainWindow", "The transfer inspector: the source skill beside the attempt's own skill, the "
                                     "base and skill-conditioned kernels as a side-by-side diff, verdicts, timings and "
                                     "every grader report.")},
    {":/mkb/icons/view-comparisons.svg", QT_TRANSLATE_NOOP("MainWindow", "Comparisons"),
     QT_TRANSLATE_NOOP("MainWindow",
                       "Every comparison as a row (model, direction, problem, replicate, verdicts, tiers, "
                       "speedups, paired ratio, outcome), filterable and sortable.")},
    {":/mkb/icons/view-charts.svg", QT_TRANSLATE_NOOP("MainWindow", "Charts"),
     QT_TRANSLATE_NOOP("MainWindow", "Per-family lift and regression bars, paired ratio by problem, outcomes by source "
                                     "standing, the R@t ladder and source-vs-target speedups, exportable for papers.")},
    {":/mkb/icons/view-runs.svg", QT_TRANSLATE_NOOP("MainWindow", "Runs"),
     QT_TRANSLATE_NOOP("MainWindow", "Runs of this project with live progress, their trials and log; launching, "
                                     "cancelling and resuming runs from here.")},
    {":/mkb/icons/view-problems.svg", QT_TRANSLATE_NOOP("MainWindow", "Problems"), ""},
};

QString viewTitle(int view) {
    return QCoreApplication::translate("MainWindow", kViews[view].title);
}

} // namespace

MainWindow::MainWindow(std::vector<std::filesystem::path> suiteRoots, QWidget* parent)
    : QMainWindow(parent), suiteRoots_(std::move(suiteRoots)) {
    initResources();
    projectData_ = new ProjectData(this);
    if (suiteRoots_.empty()) {
        suiteRoots_.push_back(shippedProblemsDir());
    }
    setWindowIcon(QIcon(QStringLiteral(":/mkb/icons/mkb-workbench.svg")));
    setObjectName(QStringLiteral("mainWindow"));
    buildViews();
    connectAnalysisViews();
    buildMenus();
    projectLabel_ = new QLabel(this);
    projectLabel_->setObjectName(QStringLiteral("projectLabel"));
    statusBar()->addPermanentWidget(projectLabel_);
    resize(1200, 760);
    showView(View::Problems);
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildViews() {
    viewList_ = new QListWidget(this);
    viewList_->setObjectName(QStringLiteral("viewSwitcher"));
    viewStack_ = new QStackedWidget(this);
    for (int view = 0; view < kViewCount; ++view) {
        auto* item = new QListWidgetItem(QIcon(QString::fromLatin1(kViews[view].icon)), viewTitle(view), viewList_);
        item->setToolTip(tr("%1 (Ctrl+%2)").arg(viewTitle(view)).arg(view + 1));
        if (View(view) == View::Problems) {
            problemsView_ = new ProblemsView(viewStack_);
            viewStack_->addWidget(problemsView_);
        } else if (View(view) == View::Overview) {
            overviewView_ = new OverviewView(viewStack_);
            viewStack_->addWidget(overviewView_);
        } else if (View(view) == View::Transfers) {
            inspectorView_ = new InspectorView(viewStack_);
            viewStack_->addWidget(inspectorView_);
        } else if (View(view) == View::Comparisons) {
            comparisonsView_ = new ComparisonsView(viewStack_);
            viewStack_->addWidget(comparisonsView_);
        } else if (View(view) == View::Charts) {
            chartsView_ = new ChartsView(projectData_, viewStack_);
            viewStack_->addWidget(chartsView_);
        } else {
            viewStack_->addWidget(
                new PendingView(viewTitle(view), QCoreApplication::translate("MainWindow", kViews[view].pending)));
        }
    }
    viewList_->setIconSize(QSize(20, 20));
    viewList_->setSpacing(3);
    viewList_->setFixedWidth(viewList_->sizeHintForColumn(0) + 2 * viewList_->frameWidth() + 24);

    auto* central = new QWidget(this);
    auto* layout = new QHBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(viewList_);
    layout->addWidget(viewStack_, 1);
    setCentralWidget(central);

    connect(viewList_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0) {
            showView(View(row));
        }
    });
}

void MainWindow::connectAnalysisViews() {
    overviewView_->setProjectData(projectData_);
    comparisonsView_->setProjectData(projectData_);
    connect(overviewView_, &OverviewView::comparisonsRequested, this,
            [this](const QString& model, const QString& direction) {
                comparisonsView_->filterTo(model, direction);
                showView(View::Comparisons);
            });
    connect(chartsView_, &ChartsView::filterRequested, this,
            [this](const QString& model, const QString& direction, const QString& family, const QString& problem) {
                comparisonsView_->filterTo(model, direction);
                comparisonsView_->searchField()->setText(problem.isEmpty() ? family : problem);
                showView(View::Comparisons);
            });
    connect(comparisonsView_, &ComparisonsView::comparisonActivated, this,
            [this](const analysis::Comparison& comparison) {
                inspectorView_->setSettings(projectData_->settings());
                inspectorView_->showComparison(comparison);
                showView(View::Transfers);
            });
    connect(inspectorView_, &InspectorView::errorOccurred, this,
            [this](const QString& message) { statusBar()->showMessage(message, 8000); });
    connect(inspectorView_, &InspectorView::annotationsChanged, this,
            [this] { statusBar()->showMessage(tr("Annotations saved"), 3000); });
    connect(projectData_, &ProjectData::loadFailed, this, [this](const QString& reason) {
        statusBar()->showMessage(tr("Could not load the project's trials: %1").arg(reason), 10000);
    });
}

void MainWindow::buildMenus() {
    QMenu* fileMenu = menuBar()->addMenu(tr("&File"));
    QAction* newProject = fileMenu->addAction(tr("&New Project…"), this, &MainWindow::chooseAndCreateProject);
    newProject->setShortcut(QKeySequence::New);
    QAction* openProjectAction = fileMenu->addAction(tr("&Open Project…"), this, &MainWindow::chooseAndOpenProject);
    openProjectAction->setShortcut(QKeySequence::Open);
    recentMenu_ = fileMenu->addMenu(tr("Open &Recent"));
    recentMenu_->setObjectName(QStringLiteral("recentProjectsMenu"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentProjectsMenu);
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
    for (int view = 0; view < kViewCount; ++view) {
        QAction* action = viewMenu->addAction(QIcon(QString::fromLatin1(kViews[view].icon)), viewTitle(view));
        action->setCheckable(true);
        action->setData(view);
        action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + view)));
        action->setShortcutContext(Qt::WindowShortcut);
        viewActions_->addAction(action);
        connect(action, &QAction::triggered, this, [this, view] { showView(View(view)); });
    }

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
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

Status MainWindow::loadProject(const QString& path, OpenMode mode) {
    if (path.isEmpty()) {
        return makeError("no project file was named; choose a project file to open");
    }
    auto opened = Store::open(std::filesystem::path(path.toStdString()), mode);
    if (!opened) {
        emit projectOpenFailed(path, QString::fromStdString(opened.error().message));
        return opened.error();
    }
    store_ = std::move(opened.value());
    projectPath_ = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    {
        QSettings settings;
        RecentProjects(settings).add(projectPath_);
    }
    rebuildRecentProjectsMenu();
    refreshProblems();
    inspectorView_->setStore(store_.get());
    comparisonsView_->setProjectKey(projectPath_);
    projectData_->setStorePath(projectPath_);
    updateTitle();
    emit projectOpened(projectPath_);
    return Ok{};
}

bool MainWindow::openProject(const QString& path, OpenMode mode) {
    QString candidate = path;
    while (true) {
        const Status status = loadProject(candidate, mode);
        if (status) {
            return true;
        }
        QMessageBox box(QMessageBox::Warning, tr("Cannot Open Project"),
                        tr("The project file\n%1\ncould not be opened.").arg(QDir::toNativeSeparators(candidate)),
                        QMessageBox::NoButton, this);
        box.setObjectName(QStringLiteral("projectOpenFailedBox"));
        box.setInformativeText(
            tr("%1\n\nThe file has not been changed.").arg(QString::fromStdString(status.error().message)));
        QPushButton* another = box.addButton(tr("Open Another Project…"), QMessageBox::AcceptRole);
        box.addButton(store_ ? tr("Keep Current Project") : tr("Quit"), QMessageBox::RejectRole);
        box.setDefaultButton(another);
        box.exec();
        if (box.clickedButton() != another) {
            return store_ != nullptr;
        }
        candidate =
            QFileDialog::getOpenFileName(this, tr("Open Project"), QFileInfo(candidate).absolutePath(), kProjectFilter);
        if (candidate.isEmpty()) {
            return store_ != nullptr;
        }
        mode = OpenMode::MustExist;
    }
}

void MainWindow::chooseAndOpenProject() {
    const QString start = projectPath_.isEmpty() ? QString::fromStdString(userDataDir().string())
                                                 : QFileInfo(projectPath_).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Project"), start, kProjectFilter);
    if (!path.isEmpty()) {
        openProject(path, OpenMode::MustExist);
    }
}

void MainWindow::chooseAndCreateProject() {
    const QString start = QString::fromStdString(userDataDir().string());
    const QString path = QFileDialog::getSaveFileName(this, tr("New Project"),
                                                      start + QStringLiteral("/project.sqlite"), kProjectFilter);
    if (path.isEmpty()) {
        return;
    }
    // QFileDialog already asked before replacing; a store is still never overwritten: an existing workbench
    // project simply opens, anything else is refused by Store::open.
    openProject(path, OpenMode::CreateIfMissing);
}

void MainWindow::refreshProblems() {
    ProblemsListing listing = loadProblemsListing(suiteRoots_, store_.get());
    const size_t problemCount = listing.rows.size();
    problemsView_->setListing(std::move(listing));
    statusBar()->showMessage(tr("%n problem(s) listed", nullptr, int(problemCount)), 5000);
}

void MainWindow::updateTitle() {
    if (projectPath_.isEmpty()) {
        setWindowTitle(tr("MetaKernelBench Workbench"));
        setWindowFilePath(QString());
        projectLabel_->setText(tr("No project open"));
        return;
    }
    const QFileInfo info(projectPath_);
    setWindowTitle(
        tr("%1 (%2) — MetaKernelBench Workbench").arg(info.fileName(), QDir::toNativeSeparators(info.absolutePath())));
    setWindowFilePath(projectPath_);
    projectLabel_->setText(tr("Project: %1").arg(QDir::toNativeSeparators(projectPath_)));
}

void MainWindow::showView(View view) {
    const int index = int(view);
    if (index < 0 || index >= kViewCount) {
        return;
    }
    viewStack_->setCurrentIndex(index);
    if (viewList_->currentRow() != index) {
        const QSignalBlocker blocker(viewList_);
        viewList_->setCurrentRow(index);
    }
    viewActions_->actions().at(index)->setChecked(true);
}

MainWindow::View MainWindow::currentView() const {
    return View(viewStack_->currentIndex());
}

void MainWindow::saveLayout() const {
    QSettings settings;
    settings.beginGroup(kLayoutGroup);
    settings.setValue(QStringLiteral("layoutVersion"), kLayoutVersion);
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("state"), saveState(kLayoutVersion));
    settings.setValue(QStringLiteral("view"), int(currentView()));
    settings.setValue(QStringLiteral("problemsLayout"), problemsView_->saveLayout());
    settings.endGroup();
}

bool MainWindow::restoreLayout() {
    QSettings settings;
    settings.beginGroup(kLayoutGroup);
    if (settings.value(QStringLiteral("layoutVersion")).toInt() != kLayoutVersion) {
        return false;
    }
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("state")).toByteArray(), kLayoutVersion);
    const int view = settings.value(QStringLiteral("view"), int(View::Problems)).toInt();
    showView(view >= 0 && view < kViewCount ? View(view) : View::Problems);
    problemsView_->restoreLayout(settings.value(QStringLiteral("problemsLayout")).toByteArray());
    return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (savesLayoutOnClose_) {
        saveLayout();
    }
    QMainWindow::closeEvent(event);
}

} // namespace mkb::gui
