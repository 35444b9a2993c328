// The main window: opening projects (with clear failure dialogs), the view switcher, menus, layout persistence,
// palettes, drag and drop, and the background work (problem listing, imports) with its progress.
#include "gui/shell/main_window.h"

#include "core/io/mkb_results_import.h"
#include "core/util/paths.h"
#include "gui/charts/chart.h"
#include "gui/charts/charts_view.h"
#include "gui/common/background.h"
#include "gui/common/resources.h"
#include "gui/common/splitter_state.h"
#include "gui/common/table_layout.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/inspector/inspector_view.h"
#include "gui/overview/overview_view.h"
#include "gui/problems/problem_grading.h"
#include "gui/problems/problems_listing.h"
#include "gui/problems/problems_view.h"
#include "gui/project/project_data.h"
#include "gui/runs/runs_view.h"
#include "gui/shell/recent_projects.h"
#include "gui/welcome/example_project.h"
#include "gui/welcome/welcome_page.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDataStream>
#include <QDeadlineTimer>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>

#include "gui/common/diff_view.h"
#include "gui/common/markdown_pane.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

namespace mkb::gui {
namespace {

const QString kLayoutGroup = QStringLiteral("mainWindow");
const QString kProjectFilter = QStringLiteral("Workbench projects (*.sqlite *.db);;All files (*)");

struct ViewDescription {
    const char* icon; // resource path
    const char* title;
    const char* purpose; // what the view shows (its switcher tooltip)
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
    {":/mkb/icons/view-problems.svg", QT_TRANSLATE_NOOP("MainWindow", "Problems"),
     QT_TRANSLATE_NOOP("MainWindow", "The problems with their reference source, family, tags, solution status and "
                                     "the project's last grading results.")},
};

QString viewTitle(int view) {
    return QCoreApplication::translate("MainWindow", kViews[view].title);
}

const QString kPaletteKey = QStringLiteral("appearance/palette");

/// The splitter positions and current tabs of a view that keeps no layout of its own, in the order the view made
/// them (its splitter and tab counts come first, so a view built differently since is told apart).
QByteArray pageLayoutState(const QWidget* page) {
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    const QList<QSplitter*> splitters = page->findChildren<QSplitter*>();
    const QList<QTabWidget*> tabs = page->findChildren<QTabWidget*>();
    out << quint32(splitters.size()) << quint32(tabs.size());
    for (const QSplitter* splitter : splitters) {
        out << splitterProportions(splitter);
    }
    for (const QTabWidget* tab : tabs) {
        out << qint32(tab->currentIndex());
    }
    return state;
}

/// Restores what pageLayoutState saved; leaves the view as it is (and returns false) when the saved state is not
/// one of this view's: another count of splitters or tabs, or unreadable.
bool restorePageLayoutState(QWidget* page, const QByteArray& state) {
    QDataStream in(state);
    quint32 splitterCount = 0;
    quint32 tabCount = 0;
    in >> splitterCount >> tabCount;
    const QList<QSplitter*> splitters = page->findChildren<QSplitter*>();
    const QList<QTabWidget*> tabs = page->findChildren<QTabWidget*>();
    if (in.status() != QDataStream::Ok || splitterCount != quint32(splitters.size()) ||
        tabCount != quint32(tabs.size())) {
        return false;
    }
    std::vector<QByteArray> splitterStates(splitterCount);
    std::vector<qint32> tabIndexes(tabCount);
    for (QByteArray& splitterState : splitterStates) {
        in >> splitterState;
    }
    for (qint32& index : tabIndexes) {
        in >> index;
    }
    if (in.status() != QDataStream::Ok) {
        return false;
    }
    for (qsizetype i = 0; i < splitters.size(); ++i) {
        restoreSplitterProportions(splitters[i], splitterStates[size_t(i)]);
    }
    for (qsizetype i = 0; i < tabs.size(); ++i) {
        if (tabIndexes[size_t(i)] >= 0 && tabIndexes[size_t(i)] < tabs[i]->count()) {
            tabs[i]->setCurrentIndex(tabIndexes[size_t(i)]);
        }
    }
    return true;
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
    setAcceptDrops(true);
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

/// What the import's worker tells the GUI thread: the latest progress (a newer one replaces one not yet shown, so
/// a large import posts few events) and the user's cancel.
struct MainWindow::ImportState {
    std::mutex mutex;
    std::size_t done = 0;
    std::size_t total = 0;
    std::string where;
    bool shownPending = false;
    std::atomic<bool> cancel{false};
};

MainWindow::~MainWindow() {
    if (importState_) {
        importState_->cancel = true; // an import stops after its current trial; importing again completes it
    }
    waitForWorkers(this);
}

void MainWindow::buildViews() {
    viewList_ = new QListWidget(this);
    viewList_->setObjectName(QStringLiteral("viewSwitcher"));
    viewStack_ = new QStackedWidget(this);
    for (int view = 0; view < kViewCount; ++view) {
        auto* item = new QListWidgetItem(QIcon(QString::fromLatin1(kViews[view].icon)), viewTitle(view), viewList_);
        item->setToolTip(tr("%1 (Ctrl+%2): %3")
                             .arg(viewTitle(view))
                             .arg(view + 1)
                             .arg(QCoreApplication::translate("MainWindow", kViews[view].purpose)));
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
        } else if (View(view) == View::Runs) {
            runsView_ = new RunsView(viewStack_);
            viewStack_->addWidget(runsView_);
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
    for (int view = 0; view < kViewCount; ++view) {
        QAction* action = viewMenu->addAction(QIcon(QString::fromLatin1(kViews[view].icon)), viewTitle(view));
        action->setCheckable(true);
        action->setData(view);
        action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + view)));
        action->setShortcutContext(Qt::WindowShortcut);
        viewActions_->addAction(action);
        connect(action, &QAction::triggered, this, [this, view] { showView(View(view)); });
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
    QMenu* paletteMenu = viewMenu->addMenu(tr("&Palette"));
    paletteMenu->setObjectName(QStringLiteral("paletteMenu"));
    paletteActions_ = new QActionGroup(this);
    paletteActions_->setExclusive(true);
    const std::pair<PaletteChoice, QString> palettes[] = {{PaletteChoice::System, tr("&System")},
                                                          {PaletteChoice::Light, tr("&Light")},
                                                          {PaletteChoice::Dark, tr("&Dark")}};
    for (const auto& [choice, label] : palettes) {
        QAction* action = paletteMenu->addAction(label);
        action->setCheckable(true);
        action->setData(paletteName(choice));
        action->setChecked(choice == currentPalette());
        paletteActions_->addAction(action);
        connect(action, &QAction::triggered, this, [this, choice = choice] { choosePalette(choice); });
    }

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    QAction* shortcuts = helpMenu->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
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
    // The catalog is read from disk and the stored problems from the project: a worker does both, with its own
    // Store (a Store is single-threaded); only the newest listing is shown.
    const int ticket = ++listingTicket_;
    listing_ = true;
    const std::vector<std::filesystem::path> roots = suiteRoots_;
    const std::filesystem::path project = projectPath_.toStdString();
    runInBackground<ProblemsListing>(
        this,
        [roots, project] {
            std::unique_ptr<Store> store;
            std::string storeError;
            if (!project.empty()) {
                auto opened = Store::open(project, OpenMode::MustExist);
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
        [this, ticket](ProblemsListing& listing) {
            if (ticket != listingTicket_) {
                return; // a newer listing is on its way
            }
            listing_ = false;
            const size_t problemCount = listing.rows.size();
            problemsView_->setListing(std::move(listing));
            problemsView_->setLastGradings(lastGradings(projectData_->trials()));
            statusBar()->showMessage(tr("%n problem(s) listed", nullptr, int(problemCount)), 5000);
            emit problemsListed();
        });
}

bool MainWindow::isBusy() const {
    return listing_ || importing_ || projectData_->isLoading();
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
    if (importing_) {
        statusBar()->showMessage(tr("An import is already running; wait for it to finish or cancel it"), 10000);
        return false;
    }
    importing_ = true;
    auto state = std::make_shared<ImportState>();
    importState_ = state;
    importProgress_ =
        new QProgressDialog(tr("Importing %1 …").arg(QDir::toNativeSeparators(folder)), tr("Cancel"), 0, 0, this);
    importProgress_->setObjectName(QStringLiteral("importProgress"));
    importProgress_->setWindowTitle(tr("Importing Results"));
    importProgress_->setMinimumDuration(300);
    importProgress_->setAutoClose(false);
    importProgress_->setAutoReset(false);
    importProgress_->setWindowModality(Qt::WindowModal);
    // Each trial is its own transaction: a cancel stops between two, and importing again completes the rest.
    connect(importProgress_, &QProgressDialog::canceled, this, [this, state] {
        state->cancel = true;
        statusBar()->showMessage(tr("Cancelling the import after the current trial…"));
    });
    const std::filesystem::path project = projectPath_.toStdString();
    const std::filesystem::path source = folder.toStdString();
    struct Outcome {
        bool ok = false;
        bool cancelled = false;
        bool changed = false; // the store holds something new: the views reload
        QString summary;
    };
    auto progress = [this, state](std::size_t done, std::size_t total, std::string_view where) {
        std::lock_guard<std::mutex> lock(state->mutex);
        state->done = done;
        state->total = total;
        state->where.assign(where);
        if (!state->shownPending) {
            state->shownPending = true;
            QMetaObject::invokeMethod(
                this, [this, state] { showImportProgress(*state); }, Qt::QueuedConnection);
        }
        return !state->cancel.load();
    };
    runInBackground<Outcome>(
        this,
        [project, source, progress] {
            Outcome outcome;
            auto store = Store::open(project, OpenMode::MustExist);
            if (!store) {
                outcome.summary = QString::fromStdString(store.error().message);
                return outcome;
            }
            ImportOptions options;
            options.progress = progress;
            auto imported = importMetaKernelBenchResults(**store, source, options);
            if (!imported) {
                outcome.summary = QString::fromStdString(imported.error().message);
                return outcome;
            }
            outcome.ok = !imported->cancelled;
            outcome.cancelled = imported->cancelled;
            outcome.changed = imported->trialsImported + imported->trialsReplaced + imported->models > 0;
            const QString counts =
                QCoreApplication::translate("MainWindow", "%1 model(s): %2 trial(s) imported, %3 unchanged, %4 "
                                                          "replaced, %5 submission(s); %6 issue(s)")
                    .arg(imported->models)
                    .arg(imported->trialsImported)
                    .arg(imported->trialsUnchanged)
                    .arg(imported->trialsReplaced)
                    .arg(imported->submissionsImported)
                    .arg(imported->issues.size());
            const int handled = imported->trialsImported + imported->trialsUnchanged + imported->trialsReplaced;
            outcome.summary =
                imported->cancelled
                    ? QCoreApplication::translate("MainWindow", "cancelled after %1 of %2 trial(s) (%3); importing "
                                                                "the folder again completes it")
                          .arg(handled)
                          .arg(imported->trialsTotal)
                          .arg(counts)
                    : counts;
            if (!imported->issues.empty()) {
                outcome.summary += QStringLiteral(" — %1: %2")
                                       .arg(QString::fromStdString(imported->issues.front().path.filename().string()),
                                            QString::fromStdString(imported->issues.front().message));
            }
            return outcome;
        },
        [this, folder](Outcome& outcome) {
            importing_ = false;
            importState_.reset();
            if (importProgress_) {
                importProgress_->deleteLater();
                importProgress_ = nullptr;
            }
            const QString shown = QDir::toNativeSeparators(folder);
            const QString message = outcome.ok          ? tr("Imported %1: %2").arg(shown, outcome.summary)
                                    : outcome.cancelled ? tr("Import of %1 %2").arg(shown, outcome.summary)
                                                        : tr("Could not import %1: %2").arg(shown, outcome.summary);
            statusBar()->showMessage(message, 15000);
            if (outcome.ok || outcome.changed) {
                projectData_->reload();
                refreshProblems();
            }
            emit importFinished(outcome.ok, outcome.summary);
        });
    return true;
}

void MainWindow::showImportProgress(ImportState& state) {
    std::size_t done = 0;
    std::size_t total = 0;
    QString where;
    {
        std::lock_guard<std::mutex> lock(state.mutex);
        state.shownPending = false;
        done = state.done;
        total = state.total;
        where = QString::fromStdString(state.where);
    }
    if (importProgress_ && !state.cancel) {
        importProgress_->setMaximum(int(std::max<std::size_t>(total, 1)));
        importProgress_->setValue(int(total == 0 ? 1 : done));
        importProgress_->setLabelText(where.isEmpty()
                                          ? tr("Imported %1 of %2 trial(s)").arg(done).arg(total)
                                          : tr("Importing trial %1 of %2\n%3").arg(done + 1).arg(total).arg(where));
    }
    emit importProgress(qint64(done), qint64(total), where);
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

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile() && QFileInfo::exists(urls.front().toLocalFile())) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() != 1 || !urls.front().isLocalFile()) {
        return;
    }
    event->acceptProposedAction();
    const QString path = urls.front().toLocalFile();
    // After the drop returns: opening may show a dialog, which must not run inside the drag's event.
    QTimer::singleShot(0, this, [this, path] { openDroppedPath(path); });
}

void MainWindow::choosePalette(PaletteChoice choice) {
    applyPalette(choice);
    for (QAction* action : paletteActions_->actions()) {
        action->setChecked(action->data().toString() == paletteName(choice));
    }
    QSettings().setValue(kPaletteKey, paletteName(choice));
}

void MainWindow::restorePalette() {
    const auto remembered = paletteNamed(QSettings().value(kPaletteKey, paletteName(PaletteChoice::System)).toString());
    const PaletteChoice choice = remembered.value_or(PaletteChoice::System);
    if (choice != PaletteChoice::System || currentPalette() != PaletteChoice::System) {
        applyPalette(choice);
    }
    for (QAction* action : paletteActions_->actions()) {
        action->setChecked(action->data().toString() == paletteName(choice));
    }
}

void MainWindow::focusCurrentSearch() {
    QWidget* field = nullptr;
    switch (currentView()) {
    case View::Problems:
        field = problemsView_->filterEdit();
        break;
    case View::Comparisons:
        field = comparisonsView_->searchField();
        break;
    case View::Transfers:
        field = inspectorView_->sourceSkillPane();
        break;
    case View::Overview:
        field = overviewView_->table();
        break;
    case View::Charts:
        field = chartsView_;
        break;
    case View::Runs:
        field = runsView_->trialsTable();
        break;
    }
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

void MainWindow::showShortcuts() {
    QDialog dialog(this);
    dialog.setObjectName(QStringLiteral("shortcutsDialog"));
    dialog.setWindowTitle(tr("Keyboard Shortcuts"));
    auto* table = new QTableWidget(&dialog);
    table->setColumnCount(2);
    table->setHorizontalHeaderLabels({tr("Action"), tr("Shortcut")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    QList<QPair<QString, QString>> rows;
    for (QAction* action : findChildren<QAction*>()) {
        if (!action->shortcut().isEmpty() && !action->text().isEmpty()) {
            rows.append(
                {action->text().remove(QLatin1Char('&')), action->shortcut().toString(QKeySequence::NativeText)});
        }
    }
    rows.append({tr("Start / cancel / resume a run (Runs)"), QStringLiteral("Ctrl+R / Ctrl+. / Ctrl+Shift+R")});
    rows.append({tr("Open the comparison in the inspector (Comparisons)"), tr("Enter")});
    rows.append({tr("Copy selected rows as TSV (any table)"), QKeySequence(QKeySequence::Copy).toString()});
    rows.append({tr("Export the chart (Charts)"), QStringLiteral("Ctrl+E")});
    table->setRowCount(int(rows.size()));
    for (int row = 0; row < rows.size(); ++row) {
        table->setItem(row, 0, new QTableWidgetItem(rows[row].first));
        table->setItem(row, 1, new QTableWidgetItem(rows[row].second));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(table);
    layout->addWidget(buttons);
    dialog.resize(560, 480);
    dialog.exec();
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
    connect(welcomePage_, &WelcomePage::openExampleRequested, this, &MainWindow::openExampleProject);
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

bool MainWindow::openExampleProject() {
    const Result<QString> example = userExampleProject();
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
    settings.setValue(QStringLiteral("problemsLayout"), problemsView_->saveLayout());
    settings.setValue(QStringLiteral("runsLayout"), runsView_->saveLayout());
    settings.setValue(QStringLiteral("overviewHeader"), tableHeaderState(overviewView_->table()));
    settings.setValue(QStringLiteral("comparisonsHeader"), tableHeaderState(comparisonsView_->table()));
    settings.setValue(QStringLiteral("overviewLayout"), pageLayoutState(overviewView_));
    settings.setValue(QStringLiteral("inspectorLayout"), pageLayoutState(inspectorView_));
    settings.setValue(QStringLiteral("chartsLayout"), pageLayoutState(chartsView_));
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
    problemsView_->restoreLayout(settings.value(QStringLiteral("problemsLayout")).toByteArray());
    runsView_->restoreLayout(settings.value(QStringLiteral("runsLayout")).toByteArray());
    restoreTableHeader(overviewView_->table(), settings.value(QStringLiteral("overviewHeader")).toByteArray());
    restoreTableHeader(comparisonsView_->table(), settings.value(QStringLiteral("comparisonsHeader")).toByteArray());
    restorePageLayoutState(overviewView_, settings.value(QStringLiteral("overviewLayout")).toByteArray());
    restorePageLayoutState(inspectorView_, settings.value(QStringLiteral("inspectorLayout")).toByteArray());
    restorePageLayoutState(chartsView_, settings.value(QStringLiteral("chartsLayout")).toByteArray());
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
