// The main window: opening projects (with clear failure dialogs), the view switcher, menus, layout persistence,
// and the background work (problem listing, imports) with its progress.
#include "gui/shell/main_window.h"

#include "core/util/paths.h"
#include "gui/charts/chart.h"
#include "gui/charts/charts_view.h"
#include "gui/common/diff_view.h"
#include "gui/common/markdown_pane.h"
#include "gui/common/resources.h"
#include "gui/common/table_layout.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/inspector/inspector_view.h"
#include "gui/overview/overview_view.h"
#include "gui/problems/problem_grading.h"
#include "gui/problems/problems_listing.h"
#include "gui/problems/problems_view.h"
#include "gui/project/import_session.h"
#include "gui/project/project_data.h"
#include "gui/runs/runs_view.h"
#include "gui/shell/drop_target.h"
#include "gui/shell/page_layout.h"
#include "gui/shell/palette_menu.h"
#include "gui/shell/recent_projects.h"
#include "gui/welcome/example_project.h"
#include "gui/welcome/welcome_page.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDeadlineTimer>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QThread>

#include <algorithm>
#include <string>

namespace mkb::gui {
namespace {

const QString kLayoutGroup = QStringLiteral("mainWindow");
const QString kProjectFilter = QStringLiteral("Workbench projects (*.sqlite *.db);;All files (*)");

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
    import_ = new ImportSession(this);
    connect(import_, &ImportSession::progress, this, &MainWindow::showImportProgress);
    connect(import_, &ImportSession::finished, this, &MainWindow::takeImportOutcome);
    auto* dropTarget = new DropTarget(this);
    connect(dropTarget, &DropTarget::pathDropped, this, &MainWindow::openDroppedPath);
    buildViews();
    connectAnalysisViews();
    buildMenus();
    buildWelcome();
    projectLabel_ = new QLabel(this);
    projectLabel_->setObjectName(QStringLiteral("projectLabel"));
    statusBar()->addPermanentWidget(projectLabel_);
    // With no saved layout: 80% of the screen's available area, centred (restoreLayout replaces it).
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
        const QRect available = screen->availableGeometry();
        const QSize size(available.width() * 4 / 5, available.height() * 4 / 5);
        resize(size);
        move(available.center() - QPoint(size.width() / 2, size.height() / 2));
    } else {
        resize(1200, 760);
    }
    showView(View::Problems);
    updateTitle();
}

MainWindow::~MainWindow() {
    // An import stops after its current trial (importing again completes it); the jobs' runners wait for them.
    import_->cancel();
}

MainWindow::ViewSlot MainWindow::makeView(View view) {
    ViewSlot slot;
    switch (view) {
    case View::Overview:
        overviewView_ = new OverviewView(viewStack_);
        slot.page = overviewView_;
        slot.searchTarget = [this]() -> QWidget* { return overviewView_->table(); };
        slot.saveHeader = [this] { return tableHeaderState(overviewView_->table()); };
        slot.restoreHeader = [this](const QByteArray& state) { restoreTableHeader(overviewView_->table(), state); };
        break;
    case View::Transfers:
        inspectorView_ = new InspectorView(viewStack_);
        slot.page = inspectorView_;
        slot.searchTarget = [this]() -> QWidget* { return inspectorView_->sourceSkillPane(); };
        break;
    case View::Comparisons:
        comparisonsView_ = new ComparisonsView(viewStack_);
        slot.page = comparisonsView_;
        slot.searchTarget = [this]() -> QWidget* { return comparisonsView_->searchField(); };
        slot.saveHeader = [this] { return tableHeaderState(comparisonsView_->table()); };
        slot.restoreHeader = [this](const QByteArray& state) { restoreTableHeader(comparisonsView_->table(), state); };
        break;
    case View::Charts:
        chartsView_ = new ChartsView(projectData_, viewStack_);
        slot.page = chartsView_;
        slot.searchTarget = [this]() -> QWidget* { return chartsView_; };
        break;
    case View::Runs:
        runsView_ = new RunsView(viewStack_);
        slot.page = runsView_;
        slot.searchTarget = [this]() -> QWidget* { return runsView_->trialsTable(); };
        slot.saveLayout = [this] { return runsView_->saveLayout(); };
        slot.restoreLayout = [this](const QByteArray& state) { runsView_->restoreLayout(state); };
        break;
    case View::Problems:
        problemsView_ = new ProblemsView(viewStack_);
        slot.page = problemsView_;
        slot.searchTarget = [this]() -> QWidget* { return problemsView_->filterEdit(); };
        slot.saveLayout = [this] { return problemsView_->saveLayout(); };
        slot.restoreLayout = [this](const QByteArray& state) { problemsView_->restoreLayout(state); };
        break;
    }
    if (!slot.saveLayout && describe(view).layoutKey[0] != '\0') {
        // A view that keeps no layout of its own: its splitters and tabs.
        slot.saveLayout = [page = slot.page] { return pageLayoutState(page); };
        slot.restoreLayout = [page = slot.page](const QByteArray& state) { restorePageLayoutState(page, state); };
    }
    return slot;
}

void MainWindow::buildViews() {
    viewList_ = new QListWidget(this);
    viewList_->setObjectName(QStringLiteral("viewSwitcher"));
    viewStack_ = new QStackedWidget(this);
    for (int index = 0; index < kViewCount; ++index) {
        const View view = View(index);
        auto* item = new QListWidgetItem(QIcon(QString::fromLatin1(describe(view).icon)), viewTitle(view), viewList_);
        item->setToolTip(tr("%1 (Ctrl+%2): %3").arg(viewTitle(view)).arg(index + 1).arg(viewPurpose(view)));
        views_[size_t(index)] = makeView(view);
        viewStack_->addWidget(views_[size_t(index)].page);
    }
    viewList_->setIconSize(QSize(20, 20));
    viewList_->setSpacing(3);
    viewList_->setFixedWidth(viewList_->sizeHintForColumn(0) + 2 * viewList_->frameWidth() + 24);

    auto* central = new QWidget(this);
    auto* layout = new QHBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(viewList_);
    layout->addWidget(viewStack_, 1);
    pages_ = new QStackedWidget(this);
    pages_->addWidget(central);
    setCentralWidget(pages_);

    connect(viewList_, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0) {
            showView(View(row));
        }
    });
}

void MainWindow::connectAnalysisViews() {
    overviewView_->setProjectData(projectData_);
    comparisonsView_->setProjectData(projectData_);
    inspectorView_->setProjectData(projectData_);
    connect(overviewView_, &OverviewView::comparisonsRequested, this,
            [this](const QString& model, const QString& direction) {
                // The overview's boundary goes along: the rows clicked were that boundary's.
                comparisonsView_->filterTo(model, direction, overviewView_->boundaryFilter()->currentData().toString());
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
    connect(comparisonsView_, &ComparisonsView::transitionActivated, this, [this](const io::KbxTransition& transition) {
        inspectorView_->showTransition(transition);
        showView(View::Transfers);
    });
    connect(inspectorView_, &InspectorView::errorOccurred, this,
            [this](const QString& message) { statusBar()->showMessage(message, 8000); });
    connect(inspectorView_, &InspectorView::annotationsChanged, this,
            [this] { statusBar()->showMessage(tr("Annotations saved"), 3000); });
    connect(projectData_, &ProjectData::loaded, this,
            [this] { problemsView_->setLastGradings(lastGradings(projectData_->trials())); });
    connect(runsView_, &RunsView::runEnded, this, [this] {
        projectData_->reload();
        refreshProblems();
    });
    connect(runsView_, &RunsView::reattached, this, [this](qint64 pid) {
        statusBar()->showMessage(tr("A run is still going in this project (pid %1): the Runs view follows it").arg(pid),
                                 10000);
    });
    connect(projectData_, &ProjectData::loadFailed, this, [this](const QString& reason) {
        statusBar()->showMessage(tr("Could not load the project's trials: %1").arg(reason), 10000);
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
    inspectorView_->clear();
    comparisonsView_->setProjectKey(projectPath_);
    projectData_->setStorePath(projectPath_);
    runsView_->setStorePath(projectPath_);
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
    // The catalog is read from disk and the stored problems from the project: a job does both, with its own
    // Store (a Store is single-threaded); only the newest listing is shown. It only reads, after loadProject's writer
    // opened (and migrated) the file: a reader skips the page-by-page check, which would compete with the overview's
    // load for the CPU.
    const std::vector<std::filesystem::path> roots = suiteRoots_;
    const std::filesystem::path project = projectPath_.toStdString();
    listingJobs_.start(
        [roots, project](const JobControl&) {
            std::unique_ptr<Store> store;
            std::string storeError;
            if (!project.empty()) {
                auto opened = Store::open(project, OpenMode::ReadExisting);
                if (opened) {
                    store = std::move(opened.value());
                } else {
                    storeError = opened.error().message;
                }
            }
            ProblemsListing listing = loadProblemsListing(roots, store.get());
            if (!storeError.empty()) {
                listing.storeError = storeError;
            }
            return listing;
        },
        [this](ProblemsListing& listing) {
            const size_t problemCount = listing.rows.size();
            problemsView_->setListing(std::move(listing));
            problemsView_->setLastGradings(lastGradings(projectData_->trials()));
            statusBar()->showMessage(tr("%n problem(s) listed", nullptr, int(problemCount)), 5000);
            emit problemsListed();
        });
}

bool MainWindow::isBusy() const {
    return listingJobs_.isJobRunning() || import_->isRunning() || projectData_->isLoading() ||
           inspectorView_->isReadingDetail();
}

bool MainWindow::waitUntilIdle(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while (isBusy() && !deadline.hasExpired()) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    return !isBusy() && projectData_->waitUntilIdle(int(std::max<qint64>(1, deadline.remainingTime())));
}

bool MainWindow::importResultsFolder(const QString& folder) {
    if (!store_) {
        statusBar()->showMessage(tr("Open a project before importing: the results go into its store"), 10000);
        emit importFinished(false, tr("no project is open"));
        return false;
    }
    if (import_->isRunning()) {
        statusBar()->showMessage(tr("An import is already running; wait for it to finish or cancel it"), 10000);
        return false;
    }
    importProgress_ =
        new QProgressDialog(tr("Importing %1 …").arg(QDir::toNativeSeparators(folder)), tr("Cancel"), 0, 0, this);
    importProgress_->setObjectName(QStringLiteral("importProgress"));
    importProgress_->setWindowTitle(tr("Importing Results"));
    importProgress_->setMinimumDuration(300);
    importProgress_->setAutoClose(false);
    importProgress_->setAutoReset(false);
    importProgress_->setWindowModality(Qt::WindowModal);
    // Each trial is its own transaction: a cancel stops between two, and importing again completes the rest.
    connect(importProgress_, &QProgressDialog::canceled, this, [this] {
        import_->cancel();
        statusBar()->showMessage(tr("Cancelling the import after the current trial…"));
    });
    import_->start(projectPath_, folder);
    return true;
}

void MainWindow::showImportProgress(qint64 done, qint64 total, const QString& where) {
    if (importProgress_ && !import_->isCancelling()) {
        importProgress_->setMaximum(int(std::max<qint64>(total, 1)));
        importProgress_->setLabelText(where.isEmpty()
                                          ? tr("Imported %1 of %2 trial(s)").arg(done).arg(total)
                                          : tr("Importing trial %1 of %2\n%3").arg(done + 1).arg(total).arg(where));
        // Last: a modal dialog's setValue processes events, so the import's outcome may arrive (and close it) there.
        importProgress_->setValue(int(total == 0 ? 1 : done));
    }
    emit importProgress(done, total, where);
}

void MainWindow::takeImportOutcome(const ImportOutcome& outcome) {
    if (importProgress_) {
        importProgress_->deleteLater();
        importProgress_ = nullptr;
    }
    const QString shown = QDir::toNativeSeparators(import_->folder());
    const QString message = outcome.ok          ? tr("Imported %1: %2").arg(shown, outcome.summary)
                            : outcome.cancelled ? tr("Import of %1 %2").arg(shown, outcome.summary)
                                                : tr("Could not import %1: %2").arg(shown, outcome.summary);
    statusBar()->showMessage(message, 15000);
    if (outcome.ok || outcome.changed) {
        projectData_->reload();
        refreshProblems();
    }
    emit importFinished(outcome.ok, outcome.summary);
}

bool MainWindow::openDroppedPath(const QString& path) {
    const QFileInfo info(path);
    if (info.isDir()) {
        return importResultsFolder(info.absoluteFilePath());
    }
    if (info.isFile()) {
        return openProject(info.absoluteFilePath(), OpenMode::MustExist);
    }
    return false;
}

void MainWindow::choosePalette(PaletteChoice choice) {
    paletteMenu_->choose(choice);
}

void MainWindow::restorePalette() {
    paletteMenu_->restore();
}

void MainWindow::focusCurrentSearch() {
    QWidget* field = views_[size_t(currentView())].searchTarget();
    if (field) {
        field->setFocus(Qt::ShortcutFocusReason);
        if (auto* edit = qobject_cast<QLineEdit*>(field)) {
            edit->selectAll();
        }
    }
}

void MainWindow::stepChart(int delta) {
    showView(View::Charts);
    const std::vector<Chart*>& charts = chartsView_->charts();
    if (charts.empty()) {
        return;
    }
    const auto current = std::find(charts.begin(), charts.end(), chartsView_->currentChart());
    const int index = current == charts.end() ? 0 : int(current - charts.begin());
    const int count = int(charts.size());
    chartsView_->setCurrentChart(((index + delta) % count + count) % count);
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

void MainWindow::buildWelcome() {
    welcomePage_ = new WelcomePage(pages_);
    pages_->addWidget(welcomePage_);
    connect(welcomePage_, &WelcomePage::openExampleRequested, this, [this] { openExampleProject(); });
    connect(welcomePage_, &WelcomePage::openKbxExampleRequested, this,
            [this] { openExampleProject(ExampleProject::KbxCorpusH200); });
    connect(welcomePage_, &WelcomePage::gradeKernelRequested, this, [this] { showView(View::Problems); });
    connect(welcomePage_, &WelcomePage::startRunRequested, this, [this] { showView(View::Runs); });
    connect(welcomePage_, &WelcomePage::importResultsRequested, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Import a MetaKernelBench Results Folder"));
        if (!folder.isEmpty() && importResultsFolder(folder)) {
            showView(View::Overview);
        }
    });
    connect(welcomePage_, &WelcomePage::recentProjectRequested, this,
            [this](const QString& path) { openProject(path, OpenMode::MustExist); });
    connect(projectData_, &ProjectData::loaded, this, &MainWindow::updateWelcome);
}

void MainWindow::updateWelcome() {
    {
        QSettings settings;
        QStringList recent = RecentProjects(settings).paths();
        recent.removeAll(projectPath_);
        welcomePage_->setRecentProjects(recent);
    }
    const bool empty = projectData_->trials().empty() && !projectData_->isLoading();
    if (empty && showsWelcome_) {
        pages_->setCurrentWidget(welcomePage_);
    } else if (!empty && isWelcomeShown()) {
        pages_->setCurrentIndex(0);
        showView(View::Overview);
    }
}

bool MainWindow::isWelcomeShown() const {
    return pages_->currentWidget() == welcomePage_;
}

bool MainWindow::openExampleProject(ExampleProject which) {
    const Result<QString> example = userExampleProject(which);
    if (!example) {
        QMessageBox::warning(this, tr("Example Project"), QString::fromStdString(example.error().message));
        return false;
    }
    return openProject(*example, OpenMode::MustExist);
}

void MainWindow::showView(View view) {
    const int index = int(view);
    if (index < 0 || index >= kViewCount) {
        return;
    }
    pages_->setCurrentIndex(0);
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
    for (int index = 0; index < kViewCount; ++index) {
        const ViewDescription& description = describe(View(index));
        const ViewSlot& slot = views_[size_t(index)];
        if (slot.saveLayout) {
            settings.setValue(QLatin1String(description.layoutKey), slot.saveLayout());
        }
        if (slot.saveHeader) {
            settings.setValue(QLatin1String(description.headerKey), slot.saveHeader());
        }
    }
    const auto& charts = chartsView_->charts();
    const auto current = std::find(charts.begin(), charts.end(), chartsView_->currentChart());
    settings.setValue(QStringLiteral("chart"), current == charts.end() ? 0 : int(current - charts.begin()));
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
    for (int index = 0; index < kViewCount; ++index) {
        const ViewDescription& description = describe(View(index));
        const ViewSlot& slot = views_[size_t(index)];
        if (slot.restoreLayout) {
            slot.restoreLayout(settings.value(QLatin1String(description.layoutKey)).toByteArray());
        }
        if (slot.restoreHeader) {
            slot.restoreHeader(settings.value(QLatin1String(description.headerKey)).toByteArray());
        }
    }
    const int chart = settings.value(QStringLiteral("chart"), 0).toInt();
    if (chart >= 0 && chart < int(chartsView_->charts().size())) {
        chartsView_->setCurrentChart(chart);
    }
    return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (savesLayoutOnClose_) {
        saveLayout();
    }
    QMainWindow::closeEvent(event);
}

} // namespace mkb::gui
