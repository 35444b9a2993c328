// The workbench's main window: one project (store) per window, the view switcher over the table of views, menus,
// recent projects, the saved layout, and the background work (problem listing, imports) with its progress.
#pragma once

#include "core/store/store.h"
#include "core/util/result.h"
#include "gui/common/job_runner.h"
#include "gui/common/palettes.h"
#include "gui/shell/views.h"
#include "gui/welcome/example_project.h"

#include <QMainWindow>
#include <QString>
#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

class QActionGroup;
class QProgressDialog;
class QLabel;
class QListWidget;
class QMenu;
class QSettings;
class QStackedWidget;

namespace mkb::gui {

class ChartsView;
class ComparisonsView;
struct ImportOutcome;
class ImportSession;
class InspectorView;
class OverviewView;
class PaletteMenu;
class ProblemsView;
class ProjectData;
class RunsView;
class WelcomePage;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// The views, in switcher order (gui/shell/views.h); Ctrl+1..6 select them.
    using View = gui::View;
    static constexpr int kViewCount = gui::kViewCount;
    /// Bump when the saved layout's meaning changes: an older saved layout is then ignored.
    static constexpr int kLayoutVersion = 2; // 2: every view's table header, splitters and tabs; the chart shown

    /// suiteRoots: the problem suites listed beside the project's own problems (default: the shipped suite).
    explicit MainWindow(std::vector<std::filesystem::path> suiteRoots = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens the project without any dialog. On failure the current project (if any) stays open and the file is
    /// left as it was.
    Status loadProject(const QString& path, OpenMode mode = OpenMode::MustExist);
    /// Opens the project; when that fails, tells the user which file and why, and offers to open another.
    /// Returns whether a project is open afterwards (the new one, or the one that was open before).
    bool openProject(const QString& path, OpenMode mode = OpenMode::MustExist);

    Store* store() const { return store_.get(); }
    QString projectPath() const { return projectPath_; }

    void showView(View view);
    View currentView() const;
    ProblemsView* problemsView() const { return problemsView_; }
    /// The open project's trials and comparisons, reloaded off the GUI thread; shared by every analysis view.
    ProjectData* projectData() const { return projectData_; }
    OverviewView* overviewView() const { return overviewView_; }
    ComparisonsView* comparisonsView() const { return comparisonsView_; }
    InspectorView* inspectorView() const { return inspectorView_; }
    ChartsView* chartsView() const { return chartsView_; }
    RunsView* runsView() const { return runsView_; }
    QMenu* recentProjectsMenu() const { return recentMenu_; }
    /// The page shown instead of the views while the open project has no trials (gui/welcome/welcome_page.h).
    WelcomePage* welcomePage() const { return welcomePage_; }
    bool isWelcomeShown() const;
    /// Whether an empty project opens on the welcome page (on by default; off when a start view was asked for).
    void setShowsWelcome(bool shows) { showsWelcome_ = shows; }
    /// Copies the shipped example project into the user's data folder (once) and opens it.
    bool openExampleProject(ExampleProject example = ExampleProject::ReferenceCpusim);

    /// Saves geometry, dock/toolbar state, the current view and chart, and the views' own layouts (table headers,
    /// splitters, tabs) with kLayoutVersion.
    void saveLayout() const;
    /// Restores what saveLayout wrote; ignores (and returns false for) a layout of another version.
    bool restoreLayout();
    /// Whether closing the window saves its layout (off for screenshots and tests).
    void setSavesLayoutOnClose(bool saves) { savesLayoutOnClose_ = saves; }

    /// Applies a palette to the application, ticks it in the View menu and remembers it.
    void choosePalette(PaletteChoice choice);
    /// Applies the remembered palette (the system one when none was chosen).
    void restorePalette();

    /// Imports a MetaKernelBench results folder into the open project in the background, with a progress dialog
    /// (trials imported of all, the trial being imported) whose Cancel stops between two trials; the views reload
    /// when it is done. Returns false (and says why) when no project is open or one is running.
    bool importResultsFolder(const QString& folder);
    /// The running import's progress dialog (null when no import runs).
    QProgressDialog* importProgressDialog() const { return importProgress_; }
    /// Opens a dropped path: a directory is imported as a results folder, a file opened as a project.
    bool openDroppedPath(const QString& path);

    /// Whether background work (project data, problem listing, import) is under way.
    bool isBusy() const;
    /// Test and tool helper: spins the event loop until no background work runs or timeoutMs passed.
    bool waitUntilIdle(int timeoutMs = 30000);

signals:
    void projectOpened(const QString& path);
    /// Emitted before the user is told, so tests and logs see every failure.
    void projectOpenFailed(const QString& path, const QString& reason);
    /// The problems listing (catalog and stored problems) was read and shown.
    void problemsListed();
    /// An import finished: the one-line summary, and whether it succeeded.
    /// ok is false for a failed or cancelled import.
    void importFinished(bool ok, const QString& summary);
    /// The import's progress as the dialog shows it: trial folders handled, all of them, the trial being imported
    /// ("" once all are handled). Consecutive updates may be merged; the last one has done == total.
    void importProgress(qint64 done, qint64 total, const QString& where);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    /// A view's page and what the window does with it: Find in View focuses searchTarget, the saved layout stores
    /// saveLayout() under the view's layoutKey (views.h), and its table header under headerKey.
    struct ViewSlot {
        QWidget* page = nullptr;
        std::function<QWidget*()> searchTarget;
        std::function<QByteArray()> saveLayout;
        std::function<void(const QByteArray&)> restoreLayout;
        std::function<QByteArray()> saveHeader;
        std::function<void(const QByteArray&)> restoreHeader;
    };
    ViewSlot makeView(View view);
    void buildViews();
    void buildMenus();
    void rebuildRecentProjectsMenu();
    void chooseAndOpenProject();
    void chooseAndCreateProject();
    void refreshProblems();
    void connectAnalysisViews();
    void updateTitle();
    void focusCurrentSearch();
    void stepChart(int delta);
    void showImportProgress(qint64 done, qint64 total, const QString& where);
    void takeImportOutcome(const ImportOutcome& outcome);
    void buildWelcome();
    /// Shows the welcome page when the loaded project has no trials, the views when it has some.
    void updateWelcome();

    std::vector<std::filesystem::path> suiteRoots_;
    std::unique_ptr<Store> store_;
    QString projectPath_;
    bool savesLayoutOnClose_ = true;
    JobRunner listingJobs_{this}; // only the newest problems listing is shown

    QListWidget* viewList_ = nullptr;
    QStackedWidget* viewStack_ = nullptr;
    QActionGroup* viewActions_ = nullptr;
    std::array<ViewSlot, kViewCount> views_;
    ProblemsView* problemsView_ = nullptr;
    ProjectData* projectData_ = nullptr;
    OverviewView* overviewView_ = nullptr;
    ComparisonsView* comparisonsView_ = nullptr;
    InspectorView* inspectorView_ = nullptr;
    ChartsView* chartsView_ = nullptr;
    RunsView* runsView_ = nullptr;
    PaletteMenu* paletteMenu_ = nullptr;
    ImportSession* import_ = nullptr;
    QProgressDialog* importProgress_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QLabel* projectLabel_ = nullptr;
    QStackedWidget* pages_ = nullptr; // the views (0) or the welcome page (1)
    WelcomePage* welcomePage_ = nullptr;
    bool showsWelcome_ = true;
};

} // namespace mkb::gui
