// Benchmark: the workbench on a synthetic 100,000-trial store: opening the project until the overview shows, and
// filtering the comparisons browser keystroke by keystroke (text search, then the family filter), each timed against
// a naive baseline in the same run (per-trial queries on the GUI thread; a filter formatting every cell per row).
//
// usage: bench_gui_scale [--trials N] [--store PATH] [--keep]  (--keep keeps the store and reuses a kept one)
//        bench_gui_scale --write-fixture PATH [--trials N]: only writes a small synthetic project with problems,
//        kernels (submissions) and skills, for screenshots and demos, then exits.
// The store is generated data: every model is named "synthetic-model-<k>" so it can never pass for real results.
#include "core/analysis/comparison.h"
#include "core/io/attempt_loader.h"
#include "core/store/store.h"
#include "core/util/sha256.h"
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/overview/overview_model.h"
#include "gui/overview/overview_view.h"
#include "gui/problems/problem_grading.h"
#include "gui/project/project_data.h"
#include "gui/shell/main_window.h"

#include <sqlite3.h>

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr int kModels = 5;
constexpr int kProblems = 36;
const char* const kFamilies[6] = {"attention", "gemm", "reduction", "elementwise", "convolution", "normalization"};

std::string problemSource(int problem, const std::string& family) {
    return "\"\"\"Synthetic " + family + " problem " + std::to_string(problem) +
           " (generated for the GUI benchmark and screenshots).\"\"\"\n"
           "import torch\n\nMKB_META = {\"tags\": [\"synthetic\", \"" +
           family +
           "\"]}\n\n"
           "def make_inputs(device=\"cuda\"):\n    return [torch.randn(1024, 1024, device=device)]\n\n"
           "def reference(x):\n    return torch.softmax(x * " +
           std::to_string(problem) + ".0, dim=-1)\n";
}

std::string kernelSource(int problem, const std::string& dsl, int variant, bool broken) {
    std::string text = "import torch\n";
    text += dsl == "triton" ? "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                              "def row_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
                              "    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)\n"
                              "    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=-float(\"inf\"))\n"
                              "    x = x - tl.max(x, axis=0)\n    e = tl.exp(x)\n"
                              "    tl.store(y_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=cols < n)\n"
                            : "from torch.utils.cpp_extension import load_inline\n\n"
                              "CUDA_SRC = r\"\"\"\n__global__ void row_kernel(const float* x, float* y, int n) {\n"
                              "    int row = blockIdx.x;\n    float m = -INFINITY;\n"
                              "    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, x[row * n + i]);\n"
                              "}\n\"\"\"\n";
    text += "\n\ndef solve(x):\n    # synthetic kernel for problem " + std::to_string(problem) + ", variant " +
            std::to_string(variant % 4) + "\n    y = torch.empty_like(x)\n";
    if (broken) {
        text += "    y = y.t()  # wrong layout: fails the correctness check\n";
    }
    if (variant % 2 == 0) {
        text += "    block = 1024\n";
    }
    text += "    return y\n";
    return text;
}

/// Writes models × replicates × problems × 4 arms until target trials, in one transaction; skills on most solos.
/// rich adds what the inspector and the problems view show: the problems' sources and two submissions per attempt.
mkb::Status buildSyntheticStore(mkb::Store& store, int target, bool rich = false) {
    std::mt19937_64 random(20261129);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::lognormal_distribution<double> speedupDraw(0.0, 0.8);
    int written = 0;
    return store.transaction([&]() -> mkb::Status {
        if (rich) {
            for (int problem = 1; problem <= kProblems; ++problem) {
                mkb::Problem stored;
                stored.suite = "synthetic";
                stored.number = problem;
                stored.family = kFamilies[(problem - 1) % 6];
                stored.slug = "synthetic_" + stored.family + "_" + std::to_string(problem);
                stored.title = "Synthetic " + stored.family + " problem " + std::to_string(problem);
                stored.source = problemSource(problem, stored.family);
                stored.fingerprint = mkb::sha256Hex(stored.source);
                stored.meta.tags = {"synthetic", stored.family};
                stored.path = "synthetic/" + stored.family + "/" + stored.slug + ".py";
                if (auto id = store.upsertProblem(stored); !id) {
                    return id.error();
                }
            }
        }
        for (int replicate = 1; written < target; ++replicate) {
            for (int model = 1; model <= kModels && written < target; ++model) {
                for (int problem = 1; problem <= kProblems && written < target; ++problem) {
                    const std::string family = kFamilies[(problem - 1) % 6];
                    bool wroteSkill[2] = {false, false}; // solo_triton, solo_cuda
                    for (const std::string arm :
                         {"solo_triton", "solo_cuda", "triton2cuda_skill", "cuda2triton_skill"}) {
                        if (written >= target) {
                            break;
                        }
                        const bool isSkill = arm.find("_skill") != std::string::npos;
                        const std::string dsl = arm == "solo_triton" || arm == "cuda2triton_skill" ? "triton" : "cuda";
                        mkb::TrialRecord trial;
                        trial.model = "synthetic-model-" + std::to_string(model);
                        trial.suite = "synthetic";
                        trial.problemNumber = problem;
                        trial.problemSlug = "synthetic_" + family + "_" + std::to_string(problem);
                        trial.family = family;
                        trial.replicate = replicate;
                        trial.arm = arm;
                        trial.dsl = dsl;
                        char coordinate[96];
                        std::snprintf(coordinate, sizeof coordinate, "p%02d_r%d_%s", problem, replicate, arm.c_str());
                        trial.coordinate = coordinate;
                        trial.status = mkb::TrialStatus::Finished;
                        trial.startedAt = "2026-11-29T00:00:00Z";
                        mkb::TrialOutcome outcome;
                        outcome.finishedAt = "2026-11-29T00:10:00Z";
                        const int sourceSolo = dsl == "cuda" ? 0 : 1;
                        if (isSkill && !wroteSkill[sourceSolo]) {
                            trial.status = mkb::TrialStatus::Skipped;
                            trial.skipped = true;
                            outcome.status = mkb::TrialStatus::Skipped;
                            outcome.skipped = true;
                        } else {
                            const double passRate = 0.25 + 0.08 * model + (isSkill ? 0.05 : 0.0) - 0.03 * (problem % 6);
                            mkb::Verdict verdict;
                            verdict.passed = uniform(random) < passRate;
                            verdict.imported = true;
                            verdict.compliant = true;
                            verdict.correct = verdict.passed;
                            verdict.speedupVsEager = verdict.passed ? speedupDraw(random) : 0.0;
                            verdict.stage = verdict.passed ? "done" : "correctness";
                            verdict.json = "{\"synthetic\": true}";
                            outcome.verdict = verdict;
                            if (uniform(random) < 0.85) {
                                outcome.skillText =
                                    "# Synthetic " + dsl + " skill for " + family +
                                    "\n\n"
                                    "- Keep one row per program; the row fits in registers up to 8192 columns.\n"
                                    "- Subtract the row maximum before exponentiating; it costs one extra pass.\n"
                                    "- Fusing the scale into the load was worth " +
                                    std::to_string(10 + problem % 30) +
                                    "% in the timing draws.\n"
                                    "- A split reduction across programs did not pay off below 4096 columns.\n";
                                if (!isSkill) {
                                    wroteSkill[arm == "solo_triton" ? 0 : 1] = true;
                                }
                            }
                        }
                        auto id = store.insertFinishedTrial(trial, outcome);
                        if (!id) {
                            return id.error();
                        }
                        ++written;
                        if (rich && outcome.verdict) {
                            const bool passed = outcome.verdict->passed;
                            for (int index : {1, 0}) { // a first try that fails, then the final fresh evaluation
                                mkb::SubmissionRecord submission;
                                submission.trialId = *id;
                                submission.index = index;
                                const bool broken = index == 1 || !passed;
                                submission.kernelSource =
                                    kernelSource(problem, dsl, replicate + model + (isSkill ? 1 : 0), broken);
                                submission.verdict = *outcome.verdict;
                                submission.verdict.passed = !broken;
                                submission.verdict.correct = !broken;
                                submission.verdict.speedupVsEager = broken ? 0.0 : outcome.verdict->speedupVsEager;
                                submission.verdict.stage = broken ? "correctness" : "done";
                                submission.verdict.mismatch = broken ? "max abs diff 3.2e-01 at [0, 1]" : "";
                                submission.evalSeconds = 4.0 + problem % 7;
                                submission.createdAt = "2026-11-29T00:05:00Z";
                                if (auto added = store.addSubmission(submission); !added) {
                                    return added.error();
                                }
                            }
                        }
                    }
                }
            }
        }
        return mkb::Ok{};
    });
}

/// The naive way to open a project: every trial read with its own query, on the GUI thread.
std::vector<mkb::TrialRecord> naiveLoadTrials(mkb::Store& store) {
    std::vector<std::int64_t> ids;
    sqlite3_stmt* statement = nullptr;
    sqlite3_prepare_v2(store.handle(), "SELECT id FROM trials WHERE archived = 0 ORDER BY id", -1, &statement, nullptr);
    while (sqlite3_step(statement) == SQLITE_ROW) {
        ids.push_back(sqlite3_column_int64(statement, 0));
    }
    sqlite3_finalize(statement);
    std::vector<mkb::TrialRecord> trials;
    trials.reserve(ids.size());
    for (std::int64_t id : ids) {
        if (auto trial = store.loadTrial(id)) {
            trials.push_back(std::move(trial.value()));
        }
    }
    return trials;
}

/// The naive filter: every keystroke formats every column of every row through data().
class NaiveFilter : public QSortFilterProxyModel {
public:
    QString text;
    QString family;

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
        const QAbstractItemModel* model = sourceModel();
        if (!family.isEmpty() &&
            model->data(model->index(row, mkb::gui::ComparisonsModel::FamilyColumn, parent)).toString() != family) {
            return false;
        }
        if (text.isEmpty()) {
            return true;
        }
        for (int column = 0; column < model->columnCount(parent); ++column) {
            if (model->data(model->index(row, column, parent)).toString().contains(text, Qt::CaseInsensitive)) {
                return true;
            }
        }
        return false;
    }
};

struct KeystrokeTimes {
    std::vector<double> ms;
    double median() const {
        std::vector<double> sorted = ms;
        std::sort(sorted.begin(), sorted.end());
        return sorted.empty() ? 0 : sorted[sorted.size() / 2];
    }
    double max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
};

double msSince(const QElapsedTimer& timer) {
    return double(timer.nsecsElapsed()) / 1e6;
}

void settle() {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
}

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    int trials = 100000;
    fs::path storePath = fs::temp_directory_path() / "mkb-bench-gui-scale.sqlite";
    bool keep = false;
    std::string fixturePath;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--write-fixture" && i + 1 < argc) {
            fixturePath = argv[++i];
        } else if (arg == "--trials" && i + 1 < argc) {
            trials = std::max(4, std::atoi(argv[++i]));
        } else if (arg == "--store" && i + 1 < argc) {
            storePath = argv[++i];
        } else if (arg == "--keep") {
            keep = true;
        } else {
            std::fprintf(stderr, "usage: bench_gui_scale [--trials N] [--store PATH] [--keep] | --write-fixture PATH "
                                 "[--trials N]\n");
            return 2;
        }
    }
    if (!fixturePath.empty()) {
        auto store = mkb::Store::open(fixturePath, mkb::OpenMode::CreateIfMissing);
        if (!store) {
            std::fprintf(stderr, "bench_gui_scale: %s\n", store.error().message.c_str());
            return 1;
        }
        if (mkb::Status status = buildSyntheticStore(**store, trials, true); !status) {
            std::fprintf(stderr, "bench_gui_scale: %s\n", status.error().message.c_str());
            return 1;
        }
        std::printf("wrote a synthetic project of %d trials to %s\n", trials, fixturePath.c_str());
        return 0;
    }
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("MetaKernelBenchBench"));
    QCoreApplication::setApplicationName(QStringLiteral("bench-gui-scale"));

    // The store: reused when it already holds the requested number of trials (building it takes a while).
    QElapsedTimer timer;
    timer.start();
    bool built = false;
    bool reusable = false;
    if (keep && fs::exists(storePath)) {
        auto existing = mkb::Store::open(storePath, mkb::OpenMode::MustExist);
        reusable = existing && (*existing)->info() && (*existing)->info()->liveTrials == trials;
    }
    {
        if (!reusable) {
            fs::remove(storePath);
            fs::remove(storePath.string() + "-wal");
            fs::remove(storePath.string() + "-shm");
            auto store = mkb::Store::open(storePath, mkb::OpenMode::CreateIfMissing);
            if (!store) {
                std::fprintf(stderr, "bench_gui_scale: %s\n", store.error().message.c_str());
                return 1;
            }
            if (mkb::Status status = buildSyntheticStore(**store, trials); !status) {
                std::fprintf(stderr, "bench_gui_scale: %s\n", status.error().message.c_str());
                return 1;
            }
            built = true;
        }
    }
    std::printf("synthetic store: %d trials at %s (%s in %.0f ms)\n", trials, storePath.c_str(),
                built ? "built" : "reused", msSince(timer));

    // 1. Open the project and show the overview, as the window does it.
    mkb::gui::MainWindow window;
    window.setSavesLayoutOnClose(false);
    window.resize(1280, 800);
    window.showView(mkb::gui::MainWindow::View::Overview);
    window.show();
    settle();
    // The overview shows at the load's first stage (comparisons, overview rows, family bars and direction matrix as
    // point estimates, before the trials are in); its bootstrap intervals (ΔGM, S, lift) fill in from a worker of
    // their own.
    double overviewShown = -1;
    double intervalsShown = -1;
    QObject::connect(window.projectData(), &mkb::gui::ProjectData::summaryLoaded, &window, [&] {
        if (overviewShown < 0) {
            window.overviewView()->repaint(); // the view refreshed on the same signal, connected before this
            overviewShown = msSince(timer);
        }
    });
    QObject::connect(window.projectData(), &mkb::gui::ProjectData::overviewIntervalsLoaded, &window, [&] {
        if (intervalsShown < 0) {
            window.overviewView()->repaint();
            intervalsShown = msSince(timer);
        }
    });
    timer.restart();
    if (mkb::Status opened = window.loadProject(QString::fromStdString(storePath.string())); !opened) {
        std::fprintf(stderr, "bench_gui_scale: %s\n", opened.error().message.c_str());
        return 1;
    }
    const double openReturned = msSince(timer);
    window.projectData()->waitUntilIdle(600000);
    const double dataLoaded = msSince(timer);
    settle();
    const int overviewRows = window.overviewView()->model()->rowCount();
    window.waitUntilIdle(600000);
    const double allIdle = msSince(timer);
    const std::size_t comparisonCount = window.projectData()->comparisons().size();

    // Where the time goes: each step of a load on its own, as ProjectData runs them.
    double breakdownOpen = 0, breakdownSummary = 0, breakdownOverview = 0, breakdownIntervals = 0, breakdownLoad = 0,
           breakdownGradings = 0, breakdownViews = 0;
    {
        timer.restart();
        auto store = mkb::Store::open(storePath, mkb::OpenMode::ReadExisting);
        breakdownOpen = msSince(timer);
        timer.restart();
        auto summary = mkb::io::loadAttempts(**store, mkb::io::AttemptLoadOptions{});
        breakdownSummary = msSince(timer);
        timer.restart();
        // As ProjectData's first stage makes them: point estimates, every interval left to the intervals job.
        (void)mkb::gui::overviewRows(summary->comparisons, {}, mkb::gui::OverviewIntervals::Deferred);
        (void)mkb::gui::familyBars(summary->comparisons, {}, mkb::gui::OverviewIntervals::Deferred);
        (void)mkb::gui::overviewMatrix(summary->comparisons, {}, mkb::gui::OverviewIntervals::Deferred);
        breakdownOverview = msSince(timer);
        timer.restart();
        (void)mkb::gui::overviewIntervals(summary->comparisons, {});
        breakdownIntervals = msSince(timer);
        timer.restart();
        auto loaded = (*store)->loadTrials({}, mkb::TrialDetail::Lean);
        breakdownLoad = msSince(timer);
        timer.restart();
        const auto gradings = mkb::gui::lastGradings(*loaded);
        breakdownGradings = msSince(timer);
        timer.restart();
        window.projectData()->setTrials(std::move(loaded.value())); // builds comparisons; every view refreshes
        breakdownViews = msSince(timer);
        window.projectData()->waitUntilIdle(600000); // its intervals (not timed: a worker computes them)
    }

    // Naive: per-trial queries on the GUI thread, then the same analysis and overview rows.
    timer.restart();
    double naiveOverview = 0;
    int naiveRows = 0;
    {
        auto store = mkb::Store::open(storePath, mkb::OpenMode::MustExist);
        const std::vector<mkb::TrialRecord> naive = naiveLoadTrials(**store);
        mkb::gui::OverviewModel model;
        model.setRows(mkb::gui::overviewRows(mkb::analysis::buildComparisons(naive), {}));
        naiveRows = model.rowCount();
        naiveOverview = msSince(timer);
    }
    std::printf("\nopen project → overview (%zu comparisons, %d overview rows; naive %d rows)\n", comparisonCount,
                overviewRows, naiveRows);
    std::printf("  loadProject returned       %8.0f ms (GUI thread blocked only this long)\n", openReturned);
    std::printf("  overview shown             %8.0f ms (first stage: comparisons and overview rows, worker thread)\n",
                overviewShown);
    std::printf("  intervals in               %8.0f ms (the overview's bootstrap intervals: ΔGM, S, lift; a worker)\n",
                intervalsShown);
    std::printf("  trials in, views filled    %8.0f ms (second stage: the trials for problems, inspector, browser)\n",
                dataLoaded);
    std::printf("  every view idle            %8.0f ms\n", allIdle);
    std::printf("  naive (per-trial queries)  %8.0f ms   ratio naive/ours (overview shown) %.1fx\n", naiveOverview,
                naiveOverview / std::max(1.0, overviewShown));
    std::printf(
        "  breakdown: Store::open %.0f ms, attempts + comparisons %.0f ms, overview rows, bars and matrix %.0f ms, "
        "intervals "
        "%.0f ms | lean trials %.0f ms, lastGradings %.0f ms, setTrials and views refreshing %.0f ms\n",
        breakdownOpen, breakdownSummary, breakdownOverview, breakdownIntervals, breakdownLoad, breakdownGradings,
        breakdownViews);

    // 2. Filtering the comparisons browser: type a problem name, then pick a family, then clear.
    mkb::gui::ComparisonsView* view = window.comparisonsView();
    window.showView(mkb::gui::MainWindow::View::Comparisons);
    settle();
    const QString typed = QStringLiteral("synthetic_gemm_20");
    const QString family = QStringLiteral("gemm");
    KeystrokeTimes ours;
    for (int length = 1; length <= typed.size(); ++length) {
        timer.restart();
        view->searchField()->setText(typed.left(length));
        view->table()->viewport()->repaint();
        ours.ms.push_back(msSince(timer));
    }
    const int oursMatches = view->filter()->rowCount();
    QComboBox* familyCombo = view->filterCombo(mkb::gui::ComparisonsModel::FamilyColumn);
    timer.restart();
    familyCombo->setCurrentIndex(familyCombo->findData(family));
    view->table()->viewport()->repaint();
    const double oursFamily = msSince(timer);
    timer.restart();
    view->searchField()->clear();
    view->table()->viewport()->repaint();
    const double oursClear = msSince(timer);
    const int oursFamilyRows = view->filter()->rowCount();

    NaiveFilter naive;
    naive.setSourceModel(view->model());
    QTableView naiveTable;
    naiveTable.setModel(&naive);
    naiveTable.resize(1200, 600);
    naiveTable.show();
    settle();
    KeystrokeTimes naiveTimes;
    for (int length = 1; length <= typed.size(); ++length) {
        timer.restart();
        naive.text = typed.left(length);
        naive.invalidate();
        naiveTable.viewport()->repaint();
        naiveTimes.ms.push_back(msSince(timer));
    }
    const int naiveMatches = naive.rowCount();
    timer.restart();
    naive.family = family;
    naive.invalidate();
    naiveTable.viewport()->repaint();
    const double naiveFamily = msSince(timer);
    timer.restart();
    naive.text.clear();
    naive.invalidate();
    naiveTable.viewport()->repaint();
    const double naiveClear = msSince(timer);

    std::printf("\ncomparisons browser filtering (%d rows; typing \"%s\": %d matches, naive %d; family %s: %d rows)\n",
                view->model()->rowCount(), qPrintable(typed), oursMatches, naiveMatches, qPrintable(family),
                oursFamilyRows);
    std::printf("  per keystroke   ours: first %6.1f ms, median %6.1f ms, max %6.1f ms\n", ours.ms.front(),
                ours.median(), ours.max());
    std::printf("                 naive: first %6.1f ms, median %6.1f ms, max %6.1f ms   ratio (median) %.1fx\n",
                naiveTimes.ms.front(), naiveTimes.median(), naiveTimes.max(),
                naiveTimes.median() / std::max(0.01, ours.median()));
    std::printf("  family filter   ours %6.1f ms, naive %6.1f ms   ratio %.1fx\n", oursFamily, naiveFamily,
                naiveFamily / std::max(0.01, oursFamily));
    std::printf("  clear search    ours %6.1f ms, naive %6.1f ms   ratio %.1fx\n", oursClear, naiveClear,
                naiveClear / std::max(0.01, oursClear));
    std::printf("\ntargets: overview in about a second (%s), filtering under 100 ms per keystroke (%s)\n",
                overviewShown <= 1500 ? "met" : "missed",
                std::max({ours.max(), oursFamily, oursClear}) < 100 ? "met" : "missed");
    window.close();
    if (keep) {
        std::printf("(store kept at %s: --keep reuses it next time)\n", storePath.c_str());
    } else {
        fs::remove(storePath);
        fs::remove(storePath.string() + "-wal");
        fs::remove(storePath.string() + "-shm");
    }
    return 0;
}
