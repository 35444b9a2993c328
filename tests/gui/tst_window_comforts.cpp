// Tests of the window's everyday comforts offscreen: dropping a store opens it, dropping a MetaKernelBench results
// folder imports it in the background (with progress to the total, and a cancel between trials), palettes are applied
// and remembered, every view's table header, splitters and tabs are saved with the layout, every view answers its
// keyboard shortcuts with none bound twice, and the problems view shows the project's last gradings once loaded.
#include "support/results_folder.h"
#include "tst_project_data_fixture.h"

#include "gui/charts/charts_view.h"
#include "gui/common/diff_view.h"
#include "gui/common/markdown_pane.h"
#include "gui/common/palettes.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/inspector/inspector_view.h"
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
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QProgressDialog>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextEdit>
#include <QUrl>

#include <fstream>

using namespace mkb;
using namespace mkb::gui;

namespace {

using mkbtest::recordJson;
using mkbtest::writeText;

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

/// Adds count more trials of 01_mha_prefill to a results folder from makeResultsFolder (r2, r3, ... of one variant),
/// so that an import of it runs long enough to be cancelled part way.
void addTrials(const QString& results, int count) {
    const std::filesystem::path problem =
        std::filesystem::path(results.toStdString()) / "glm-5" / "problems" / "01_mha_prefill";
    for (int repeat = 2; repeat < count + 2; ++repeat) {
        writeText(problem / ("abc123_p01_r" + std::to_string(repeat) + "_solo_cutedsl") / "record.json",
                  recordJson(1.0, 1.0 + repeat / 1000.0));
    }
}

int storedTrialCount(const QString& store) {
    auto opened = Store::open(store.toStdString(), OpenMode::ReadExisting);
    if (!opened) {
        return -1;
    }
    TrialFilter all;
    all.includeArchived = true;
    auto trials = (*opened)->loadTrials(all);
    return trials ? int(trials->size()) : -1;
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
        QVERIFY(finished.front().at(1).toString().contains("3 new trial(s)"));
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
        QVERIFY(finished.front().at(1).toString().contains("0 new trial(s), 0 replaced, 3 unchanged"));
        finished.clear();
        QVERIFY(window.importResultsFolder(dir_.filePath("nowhere")));
        QVERIFY(finished.wait(30000));
        QVERIFY(!finished.front().at(0).toBool());
    }

    void theImportDialogCountsTrialsUpToTheTotal() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(dir_.filePath("progress.sqlite"), OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        struct Seen {
            qint64 done, total;
            QString where;
            int maximum, value;
        };
        std::vector<Seen> seen;
        connect(&window, &MainWindow::importProgress, this, [&](qint64 done, qint64 total, const QString& where) {
            QProgressDialog* dialog = window.importProgressDialog();
            seen.push_back({done, total, where, dialog ? dialog->maximum() : -1, dialog ? dialog->value() : -1});
        });
        QSignalSpy finished(&window, &MainWindow::importFinished);
        QVERIFY(window.importResultsFolder(makeResultsFolder(dir_.filePath("progress-checkout"))));
        QVERIFY(window.importProgressDialog());
        QVERIFY(window.importProgressDialog()->findChild<QPushButton*>()); // the dialog can cancel
        QVERIFY(finished.wait(30000) || !finished.isEmpty());
        QVERIFY2(finished.front().at(0).toBool(), qPrintable(finished.front().at(1).toString()));
        // Updates may be merged, but they only go forward, and the last one is the whole folder, shown full.
        QVERIFY(!seen.empty());
        for (size_t index = 1; index < seen.size(); ++index) {
            QVERIFY(seen[index].done > seen[index - 1].done);
        }
        QCOMPARE(seen.back().done, qint64(3));
        QCOMPARE(seen.back().total, qint64(3));
        QCOMPARE(seen.back().where, QString());
        QCOMPARE(seen.back().maximum, 3);
        QCOMPARE(seen.back().value, 3);
        QVERIFY(!window.importProgressDialog());
    }

    void cancellingAnImportStopsBetweenTrialsAndImportingAgainCompletesIt() {
        // Enough trials that the import is still running when Cancel is pressed on its first progress; each trial is
        // its own transaction, so whatever trial it is on when the cancel lands is stored whole and nothing after it.
        const QString checkout = dir_.filePath("cancel-checkout");
        const QString results = makeResultsFolder(checkout);
        constexpr int kTrials = 400;
        addTrials(results, kTrials - 3);
        const QString store = dir_.filePath("cancel.sqlite");
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(store, OpenMode::CreateIfMissing));
        QVERIFY(window.waitUntilIdle());
        QSignalSpy progress(&window, &MainWindow::importProgress);
        QSignalSpy finished(&window, &MainWindow::importFinished);
        QVERIFY(window.importResultsFolder(results));

        // The dialog names the trial being imported, of all of them.
        QVERIFY(QTest::qWaitFor([&] { return !progress.isEmpty() || !finished.isEmpty(); }, 60000));
        QVERIFY2(finished.isEmpty(), "the import ended before its first progress was shown; give it more trials");
        QCOMPARE(progress.front().at(1).toLongLong(), qint64(kTrials));
        QVERIFY(progress.front().at(0).toLongLong() < kTrials);
        const QString where = progress.front().at(2).toString();
        QVERIFY2(where.contains("01_mha_prefill"), qPrintable(where));
        QProgressDialog* dialog = window.importProgressDialog();
        QVERIFY(dialog);
        QCOMPARE(dialog->maximum(), kTrials);
        QVERIFY2(dialog->labelText().contains(QString(" of %1").arg(kTrials)) &&
                     dialog->labelText().contains("01_mha_prefill"),
                 qPrintable(dialog->labelText()));

        // Cancel, as the user does: the import stops after the trial it is on, and the store holds exactly the
        // trials the summary counts (at least the one under way when the progress was shown, never all of them).
        QPushButton* cancel = dialog->findChild<QPushButton*>();
        QVERIFY(cancel);
        cancel->click();
        QVERIFY(finished.wait(60000) || !finished.isEmpty());
        QVERIFY(!finished.front().at(0).toBool());
        const QString summary = finished.front().at(1).toString();
        const QRegularExpressionMatch cancelled =
            QRegularExpression(QString("^cancelled after (\\d+) of %1 trial\\(s\\)").arg(kTrials)).match(summary);
        QVERIFY2(cancelled.hasMatch(), qPrintable(summary));
        const int handled = cancelled.captured(1).toInt();
        QVERIFY2(handled >= 1 && handled < kTrials, qPrintable(summary));
        QCOMPARE(storedTrialCount(store), handled);
        QVERIFY(window.waitUntilIdle());
        QCOMPARE(int(window.projectData()->trials().size()), handled);

        // Importing again completes it: the trials stored before the cancel are unchanged, the rest are new.
        finished.clear();
        QVERIFY(window.importResultsFolder(results));
        QVERIFY(finished.wait(120000) || !finished.isEmpty());
        QVERIFY2(finished.front().at(0).toBool(), qPrintable(finished.front().at(1).toString()));
        QVERIFY2(finished.front().at(1).toString().contains(
                     QString("%1 new trial(s), 0 replaced, %2 unchanged").arg(kTrials - handled).arg(handled)),
                 qPrintable(finished.front().at(1).toString()));
        QCOMPARE(storedTrialCount(store), kTrials);
        QVERIFY(window.waitUntilIdle());
        QCOMPARE(int(window.projectData()->trials().size()), kTrials);
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

    void splittersTabsAndTheChartShownAreSavedWithTheLayout() {
        // The inspector's skill panes sit in a splitter of their own; its tabs switch the diff and the skills.
        auto skillSplitOf = [](MainWindow& window) {
            return qobject_cast<QSplitter*>(window.inspectorView()->sourceSkillPane()->parentWidget());
        };
        auto tabsOf = [](MainWindow& window) { return window.inspectorView()->findChild<QTabWidget*>(); };
        auto showTransfers = [](MainWindow& window) {
            window.show();
            window.showView(MainWindow::View::Transfers);
            return QTest::qWaitForWindowExposed(&window);
        };
        QList<int> defaultSizes;
        {
            MainWindow window;
            window.resize(1100, 700);
            QVERIFY(showTransfers(window));
            QVERIFY(skillSplitOf(window));
            QVERIFY(tabsOf(window) && tabsOf(window)->count() > 1);
            QCOMPARE(tabsOf(window)->currentIndex(), 0); // the skills, side by side
            defaultSizes = skillSplitOf(window)->sizes();
            QCOMPARE(defaultSizes.size(), 2);
            const int total = defaultSizes[0] + defaultSizes[1];
            QVERIFY(defaultSizes[0] < defaultSizes[1]); // the attempt's skill gets more room, unless told otherwise
            skillSplitOf(window)->setSizes({total * 3 / 5, total - total * 3 / 5});
            QVERIFY(skillSplitOf(window)->sizes()[0] > skillSplitOf(window)->sizes()[1]);
            tabsOf(window)->setCurrentIndex(tabsOf(window)->count() - 1);
            window.chartsView()->setCurrentChart(2);
            window.saveLayout();
        }
        auto skillSizesShown = [&](MainWindow& window) {
            tabsOf(window)->setCurrentIndex(0);
            QApplication::processEvents();
            return skillSplitOf(window)->sizes();
        };
        {
            MainWindow window;
            window.setSavesLayoutOnClose(false);
            QVERIFY(window.restoreLayout());
            QVERIFY(showTransfers(window));
            QCOMPARE(tabsOf(window)->currentIndex(), tabsOf(window)->count() - 1);
            QCOMPARE(window.chartsView()->currentChart(), window.chartsView()->charts().at(2));
            const QList<int> sizes = skillSizesShown(window);
            QVERIFY2(sizes.size() == 2 && sizes[0] > sizes[1],
                     qPrintable(QString("%1 : %2").arg(sizes.value(0)).arg(sizes.value(1))));
        }
        // A saved view layout that is not this view's (seven splitters, one tab) is left alone, not misapplied.
        QSettings().setValue("mainWindow/inspectorLayout", QByteArray("\0\0\0\x07\0\0\0\x01", 8));
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        window.resize(1100, 700);
        QVERIFY(window.restoreLayout());
        QVERIFY(showTransfers(window));
        QCOMPARE(tabsOf(window)->currentIndex(), 0);
        const QList<int> sizes = skillSizesShown(window);
        QVERIFY2(sizes == defaultSizes, qPrintable(QString("%1 : %2").arg(sizes.value(0)).arg(sizes.value(1))));
    }

    void everyViewAnswersItsShortcutsAndNoneIsAmbiguous() {
        MainWindow window;
        window.setSavesLayoutOnClose(false);
        QVERIFY(window.loadProject(fixtureStore_));
        QVERIFY(window.waitUntilIdle());
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        auto hasFocusWithin = [](QWidget* widget) {
            QWidget* focus = QApplication::focusWidget();
            return focus && (focus == widget || widget->isAncestorOf(focus));
        };
        // Ctrl+1..6 shows each view; Ctrl+F then puts the focus where that view is searched or browsed.
        const std::pair<MainWindow::View, QWidget*> views[] = {
            {MainWindow::View::Overview, window.overviewView()->table()},
            {MainWindow::View::Transfers, window.inspectorView()->sourceSkillPane()},
            {MainWindow::View::Comparisons, window.comparisonsView()->searchField()},
            {MainWindow::View::Charts, window.chartsView()},
            {MainWindow::View::Runs, window.runsView()->trialsTable()},
            {MainWindow::View::Problems, window.problemsView()->filterEdit()},
        };
        for (const auto& [view, searched] : views) {
            QTest::keyClick(&window, Qt::Key(Qt::Key_1 + int(view)), Qt::ControlModifier);
            QVERIFY(window.currentView() == view);
            QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
            QVERIFY2(hasFocusWithin(searched), qPrintable(QString("view %1").arg(int(view))));

            // Every shortcut live in this view (the window's actions, the visible buttons) is bound once: Qt fires
            // none of two that share a key.
            QMultiMap<QString, QString> live;
            for (QAction* action : window.findChildren<QAction*>()) {
                const bool windowWide = action->shortcutContext() == Qt::WindowShortcut ||
                                        action->shortcutContext() == Qt::ApplicationShortcut;
                if (!windowWide || !action->isEnabled()) {
                    continue;
                }
                for (const QKeySequence& key : action->shortcuts()) {
                    live.insert(key.toString(), action->text());
                }
            }
            for (QAbstractButton* button : window.findChildren<QAbstractButton*>()) {
                if (!button->shortcut().isEmpty() && button->isVisible() && button->isEnabled()) {
                    live.insert(button->shortcut().toString(), button->text());
                }
            }
            for (const QString& key : live.uniqueKeys()) {
                QVERIFY2(live.count(key) == 1, qPrintable(QString("view %1: %2 is bound to %3")
                                                              .arg(int(view))
                                                              .arg(key, QStringList(live.values(key)).join(", "))));
            }
        }
        // The view shortcuts are listed where the user looks for them.
        QVERIFY(window.runsView()->startButton()->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_R));

        // Comparisons: Enter opens the row in the inspector; there F8 steps to the next change and Ctrl+T tags the
        // claim selected in the source skill.
        QTest::keyClick(&window, Qt::Key_3, Qt::ControlModifier);
        QTableView* table = window.comparisonsView()->table();
        InspectorView* inspector = window.inspectorView();
        bool opened = false;
        for (int row = 0; row < table->model()->rowCount() && !opened; ++row) {
            QTest::keyClick(&window, Qt::Key_3, Qt::ControlModifier);
            table->setFocus();
            table->setCurrentIndex(table->model()->index(row, 0));
            QTest::keyClick(table, Qt::Key_Return);
            QVERIFY(window.currentView() == MainWindow::View::Transfers);
            QTRY_VERIFY(!inspector->isReadingDetail()); // the skills arrive from a job
            opened = inspector->sourceSkillPane()->editor()->toPlainText().contains("one program per row") &&
                     !inspector->diffView()->diff().changeStarts.empty();
        }
        QVERIFY(opened);
        QTest::keyClick(&window, Qt::Key_F8);
        QCOMPARE(inspector->diffView()->currentRow(), inspector->diffView()->diff().changeStarts.front());
        const int annotations = inspector->annotationList()->count();
        const QString text = inspector->sourceSkillPane()->editor()->toPlainText();
        const int start = int(text.indexOf("Use one program per row."));
        QVERIFY(start >= 0);
        inspector->sourceSkillPane()->selectRange(start, start + int(QString("Use one program per row.").size()));
        QTest::keyClick(&window, Qt::Key_T, Qt::ControlModifier);
        QCOMPARE(inspector->annotationList()->count(), annotations + 1);
        QVERIFY(inspector->annotationList()->item(annotations)->text().contains("one program per row"));
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
