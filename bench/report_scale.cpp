// Benchmark: builds a synthetic 100,000-trial store and times the full `mkb report` path against a naive per-query
// baseline, in process and through the CLI.
//
// The naive baseline computes one table only: the overall ladder's base R@t (one SELECT per arm of every skill cell).
// So the like-for-like ratio is naive ladder vs `mkb report --metrics ladder`; the full report (every metric set) is
// timed too, but it computes far more than the baseline, so its ratio against the baseline is printed as such.
// Each timing runs in a forked child process, so that none reuses a heap another one warmed.
//
// usage: bench_report_scale [--trials N] [--store PATH] [--keep] [--mkb PATH]
// The store is generated data: every model is named "synthetic-model-<k>" so it can never pass for real results.
#include "core/analysis/ladder.h"
#include "core/analysis/settings.h"
#include "core/report/report_model.h"
#include "core/report/report_writers.h"
#include "core/store/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kModels = 5;
constexpr int kProblems = 36;
const char* const kFamilies[6] = {"attention", "gemm", "reduction", "elementwise", "convolution", "normalization"};
const char* const kDsls[2] = {"triton", "cuda"};
const char* const kDevices[2] = {"synthetic-gpu-a", "synthetic-gpu-b"};

double millisecondsSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// CPU time of this process so far; on a shared machine wall time also counts waiting for a core.
double processCpuMs() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

/// User + system CPU time of the finished children.
double childrenCpuMs() {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
           double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

std::string kernelSource(int problem, int variant, bool broken) {
    std::string text = "import torch\n\n# synthetic kernel for problem " + std::to_string(problem) + "\n";
    text += "def kernel(x):\n    y = x * " + std::to_string(variant % 5 + 1) + "\n";
    if (broken) {
        text += "    y = y.t()  # wrong layout\n";
    }
    text += "    return y\n";
    return text;
}

/// One arm's outcome drawn from a model- and family-dependent pass rate.
struct Draw {
    bool passed = false;
    double speedup = 0;
    bool wroteSkill = false;
};

/// Writes the synthetic store: models × replicates × problems × 4 arms until `target` trials, one transaction.
mkb::Status buildSyntheticStore(mkb::Store& store, int target, int& written, int& submissionsWritten) {
    std::mt19937_64 random(20261129);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::lognormal_distribution<double> speedupDraw(0.0, 0.8);
    return store.transaction([&]() -> mkb::Status {
        for (int replicate = 1; written < target; ++replicate) {
            for (int model = 1; model <= kModels && written < target; ++model) {
                const std::string modelName = "synthetic-model-" + std::to_string(model);
                for (int problem = 1; problem <= kProblems && written < target; ++problem) {
                    const std::string family = kFamilies[(problem - 1) % 6];
                    const std::string slug = "synthetic_" + family + "_" + std::to_string(problem);
                    std::map<std::string, Draw> solos;
                    for (const std::string arm :
                         {"solo_triton", "solo_cuda", "triton2cuda_skill", "cuda2triton_skill"}) {
                        if (written >= target) {
                            break;
                        }
                        const bool isSkill = arm.find("_skill") != std::string::npos;
                        const std::string dsl = arm == "solo_triton" || arm == "cuda2triton_skill" ? "triton" : "cuda";
                        const std::string sourceDsl = dsl == "cuda" ? "triton" : "cuda";
                        mkb::TrialRecord trial;
                        trial.model = modelName;
                        trial.suite = "synthetic";
                        trial.problemNumber = problem;
                        trial.problemSlug = slug;
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
                        const bool sourceSkipped = isSkill && !solos["solo_" + sourceDsl].wroteSkill;
                        if (sourceSkipped) {
                            trial.status = mkb::TrialStatus::Skipped;
                            trial.skipped = true;
                            outcome.status = mkb::TrialStatus::Skipped;
                            outcome.skipped = true;
                            outcome.error = "source wrote no SKILL.md";
                        } else {
                            const double passRate = 0.25 + 0.08 * model + (isSkill ? 0.05 : 0.0) - 0.03 * (problem % 6);
                            Draw draw;
                            draw.passed = uniform(random) < passRate;
                            draw.speedup = draw.passed ? speedupDraw(random) : 0.0;
                            draw.wroteSkill = uniform(random) < 0.85;
                            solos[arm] = draw;
                            mkb::Verdict verdict;
                            verdict.imported = uniform(random) < 0.9 || draw.passed;
                            verdict.compliant = verdict.imported;
                            verdict.correct = draw.passed;
                            verdict.passed = draw.passed;
                            verdict.speedupVsEager = draw.speedup;
                            verdict.stage = draw.passed ? "done" : "correctness";
                            verdict.error = draw.passed ? "" : "output mismatch";
                            verdict.deviceName = kDevices[(replicate + problem) % 2];
                            verdict.json = "{\"synthetic\": true}";
                            if (problem % 3 == 0) {
                                verdict.outliersCorrect = draw.passed && uniform(random) < 0.8;
                            }
                            if (draw.passed) {
                                verdict.roofline =
                                    mkb::Roofline{1e9, 1e12, 800.0, 50.0, uniform(random), uniform(random)};
                            }
                            outcome.verdict = verdict;
                            if (draw.wroteSkill) {
                                outcome.skillText = "# Synthetic skill\nTile " + family + " by 128.\n";
                            }
                        }
                        if (written % 10 != 0) { // one record in ten lacks usage, so sums turn null honestly
                            outcome.usage.inputTokens = 20000 + written % 5000;
                            outcome.usage.cacheTokens = 4000;
                            outcome.usage.outputTokens = 3000 + written % 700;
                            outcome.usage.costUsd = 0.12;
                            outcome.usage.agentSeconds = 300.0 + written % 120;
                        }
                        trial.usage = outcome.usage;
                        auto id = store.insertFinishedTrial(trial, outcome);
                        if (!id) {
                            return id.error();
                        }
                        ++written;
                        // One attempt in five leaves a trajectory: a failing kernel, then (often) a fixed one.
                        if (!sourceSkipped && written % 5 == 0) {
                            const bool fixed = outcome.verdict && outcome.verdict->passed;
                            for (int index = 1; index <= 2; ++index) {
                                mkb::SubmissionRecord submission;
                                submission.trialId = *id;
                                submission.index = index;
                                const bool broken = index == 1 || !fixed;
                                submission.kernelSource = kernelSource(problem, replicate, broken);
                                submission.verdict.imported = true;
                                submission.verdict.compliant = true;
                                submission.verdict.correct = !broken;
                                submission.verdict.passed = !broken;
                                submission.verdict.speedupVsEager = broken ? 0.0 : outcome.verdict->speedupVsEager;
                                submission.verdict.stage = broken ? "correctness" : "done";
                                submission.verdict.mismatch = broken ? "max abs diff 3.2 at [0, 1]" : "";
                                submission.verdict.deviceName = kDevices[(replicate + problem) % 2];
                                submission.verdict.json = "{\"synthetic\": true}";
                                submission.createdAt = "2026-11-29T00:05:00Z";
                                auto added = store.addSubmission(submission);
                                if (!added) {
                                    return added.error();
                                }
                                ++submissionsWritten;
                            }
                        }
                    }
                }
            }
        }
        return mkb::Ok{};
    });
}

/// One timing taken in a child process: wall and CPU milliseconds of work, the numbers it returns, or its error.
struct Measured {
    double wallMs = 0;
    double cpuMs = 0;
    std::vector<double> values;
    std::string error;
};

/// Runs work in a forked child (a fresh heap, as a new `mkb` process has) and reads back its timing and values.
Measured measureInChild(const std::function<std::string(std::vector<double>& values)>& work) {
    Measured measured;
    int channel[2];
    if (::pipe(channel) != 0) {
        measured.error = "cannot create a pipe for the child process";
        return measured;
    }
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(channel[0]);
        const auto start = Clock::now();
        const double cpuStart = processCpuMs();
        std::vector<double> values;
        const std::string error = work(values);
        std::string reply = error.empty() ? "ok" : "error " + error;
        char number[64];
        for (double value : {millisecondsSince(start), processCpuMs() - cpuStart}) {
            std::snprintf(number, sizeof number, " %.17g", value);
            reply += error.empty() ? number : "";
        }
        for (double value : values) {
            std::snprintf(number, sizeof number, " %.17g", value);
            reply += error.empty() ? number : "";
        }
        [[maybe_unused]] const ssize_t written = ::write(channel[1], reply.data(), reply.size());
        ::close(channel[1]);
        ::_exit(0);
    }
    ::close(channel[1]);
    std::string reply;
    char buffer[4096];
    ssize_t got = 0;
    while ((got = ::read(channel[0], buffer, sizeof buffer)) > 0) {
        reply.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(channel[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (reply.rfind("ok", 0) != 0) {
        measured.error = reply.empty() ? "the child process failed" : reply.substr(6);
        return measured;
    }
    std::istringstream numbers(reply.substr(2));
    numbers >> measured.wallMs >> measured.cpuMs;
    for (double value = 0; numbers >> value;) {
        measured.values.push_back(value);
    }
    return measured;
}

/// The naive baseline: the overall ladder recomputed with one SELECT per cell arm.
struct NaiveLadder {
    std::size_t resolved = 0;
    std::vector<double> base;
    std::vector<double> skill;
};

mkb::Result<NaiveLadder> naiveOverallLadder(sqlite3* db, const std::vector<double>& thresholds) {
    sqlite3_stmt* cells = nullptr;
    sqlite3_stmt* arm = nullptr;
    const char* cellQuery = "SELECT DISTINCT model_id, suite, problem_number, replicate, arm FROM trials "
                            "WHERE archived = 0 AND arm LIKE '%\\_skill' ESCAPE '\\'";
    const char* armQuery = "SELECT t.status, COALESCE(v.passed, 0), COALESCE(v.speedup, 0) FROM trials t "
                           "LEFT JOIN final_verdicts v ON v.trial_id = t.id WHERE t.model_id = ? AND t.suite = ? "
                           "AND t.problem_number = ? AND t.replicate = ? AND t.arm = ? AND t.archived = 0 "
                           "ORDER BY t.id DESC LIMIT 1";
    if (sqlite3_prepare_v2(db, cellQuery, -1, &cells, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db, armQuery, -1, &arm, nullptr) != SQLITE_OK) {
        sqlite3_finalize(cells);
        sqlite3_finalize(arm);
        return mkb::makeError(std::string("naive baseline: cannot prepare its queries: ") + sqlite3_errmsg(db));
    }
    struct ArmRow {
        bool present = false;
        std::string status;
        bool passed = false;
        double speedup = 0;
    };
    auto fetch = [&](std::int64_t model, const std::string& suite, int problem, int replicate,
                     const std::string& name) {
        ArmRow row;
        sqlite3_bind_int64(arm, 1, model);
        sqlite3_bind_text(arm, 2, suite.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(arm, 3, problem);
        sqlite3_bind_int(arm, 4, replicate);
        sqlite3_bind_text(arm, 5, name.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(arm) == SQLITE_ROW) {
            row.present = true;
            row.status = reinterpret_cast<const char*>(sqlite3_column_text(arm, 0));
            row.passed = sqlite3_column_int(arm, 1) != 0;
            row.speedup = sqlite3_column_double(arm, 2);
        }
        sqlite3_reset(arm);
        return row;
    };
    auto attainsAt = [](const ArmRow& row, double threshold) {
        return row.passed && mkb::analysis::reaches(row.speedup, threshold);
    };
    NaiveLadder ladder;
    std::vector<std::size_t> baseHits(thresholds.size()), skillHits(thresholds.size());
    while (sqlite3_step(cells) == SQLITE_ROW) {
        const std::int64_t model = sqlite3_column_int64(cells, 0);
        const std::string suite = reinterpret_cast<const char*>(sqlite3_column_text(cells, 1));
        const int problem = sqlite3_column_int(cells, 2);
        const int replicate = sqlite3_column_int(cells, 3);
        const std::string skillArm = reinterpret_cast<const char*>(sqlite3_column_text(cells, 4));
        const std::string direction = skillArm.substr(0, skillArm.size() - 6);
        const std::size_t split = direction.find('2');
        const std::string sourceDsl = direction.substr(0, split);
        const std::string targetDsl = direction.substr(split + 1);
        const ArmRow source = fetch(model, suite, problem, replicate, "solo_" + sourceDsl);
        const ArmRow base = fetch(model, suite, problem, replicate, "solo_" + targetDsl);
        const ArmRow skill = fetch(model, suite, problem, replicate, skillArm);
        auto verdictHeld = [](const ArmRow& row) {
            return row.present && (row.status == "finished" || row.status == "skipped");
        };
        if (!verdictHeld(source) || !verdictHeld(base) || !verdictHeld(skill)) {
            continue;
        }
        const ArmRow& outcome = skill.status == "skipped" ? base : skill;
        ++ladder.resolved;
        for (std::size_t i = 0; i < thresholds.size(); ++i) {
            baseHits[i] += attainsAt(base, thresholds[i]);
            skillHits[i] += attainsAt(outcome, thresholds[i]);
        }
    }
    sqlite3_finalize(cells);
    sqlite3_finalize(arm);
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
        ladder.base.push_back(ladder.resolved ? double(baseHits[i]) / double(ladder.resolved) : 0.0);
        ladder.skill.push_back(ladder.resolved ? double(skillHits[i]) / double(ladder.resolved) : 0.0);
    }
    return ladder;
}

} // namespace

int main(int argc, char** argv) {
    int target = 100000;
    fs::path storePath = fs::temp_directory_path() / ("mkb-bench-report-" + std::to_string(::getpid()) + ".sqlite");
    bool keep = false;
    std::string cli = MKB_CLI_PATH;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--trials" && i + 1 < argc) {
            target = std::atoi(argv[++i]);
        } else if (arg == "--store" && i + 1 < argc) {
            storePath = argv[++i];
        } else if (arg == "--keep") {
            keep = true;
        } else if (arg == "--mkb" && i + 1 < argc) {
            cli = argv[++i];
        } else {
            std::cerr << "usage: bench_report_scale [--trials N] [--store PATH] [--keep] [--mkb PATH]\n";
            return 2;
        }
    }

    const bool reuse = fs::exists(storePath);
    int written = 0;
    int submissions = 0;
    {
        auto store = mkb::Store::open(storePath);
        if (!store) {
            std::cerr << "bench: " << store.error().message << '\n';
            return 4;
        }
        if (!reuse) {
            const auto start = Clock::now();
            if (mkb::Status built = buildSyntheticStore(**store, target, written, submissions); !built) {
                std::cerr << "bench: building the synthetic store failed: " << built.error().message << '\n';
                return 1;
            }
            std::printf("synthetic store: %d trials, %d submissions, %d models, %d problems written in %.0f ms (%s)\n",
                        written, submissions, kModels, kProblems, millisecondsSince(start), storePath.c_str());
        } else {
            std::printf("synthetic store: reusing %s\n", storePath.c_str());
        }
    }

    // Every timing runs in a child process of its own (fork), so none finds a heap warmed by another: each pays its
    // page faults as `mkb report` does.

    // (a) the full report path, as `mkb report --metrics all` runs it: open, read the trials row by row into attempts,
    // submissions, every metric set, Markdown.
    mkb::report::ReportOptions options;
    options.metrics = *mkb::report::parseMetricSets("all");
    const Measured full = measureInChild([&](std::vector<double>& values) -> std::string {
        auto store = mkb::Store::open(storePath, mkb::OpenMode::ReadExisting);
        if (!store) {
            return store.error().message;
        }
        auto report = mkb::report::buildReportFromStore(**store, options);
        if (!report) {
            return report.error().message;
        }
        const std::string markdown = mkb::report::toMarkdown(*report);
        values = {double(report->tables.size()), double(markdown.size())};
        return {};
    });
    if (!full.error.empty()) {
        std::cerr << "bench: " << full.error << '\n';
        return 4;
    }
    std::printf("full report: %.0f ms wall, %.0f ms cpu (%.0f tables, %.0f bytes of Markdown)\n", full.wallMs,
                full.cpuMs, full.values.at(0), full.values.at(1));

    // Where the time goes: the report with one metric set (reading included), each in its own process.
    {
        std::string breakdown;
        for (mkb::report::MetricSet set : options.metrics) {
            mkb::report::ReportOptions one = options;
            one.metrics = {set};
            const Measured part = measureInChild([&](std::vector<double>&) -> std::string {
                auto store = mkb::Store::open(storePath, mkb::OpenMode::ReadExisting);
                if (!store) {
                    return store.error().message;
                }
                auto report = mkb::report::buildReportFromStore(**store, one);
                return report ? std::string() : report.error().message;
            });
            char text[64];
            std::snprintf(text, sizeof text, "%s%s %.0f", breakdown.empty() ? "" : ", ", mkb::report::toString(set),
                          part.cpuMs);
            breakdown += text;
        }
        std::printf("CPU ms of the report with one metric set (reading included): %s\n", breakdown.c_str());
    }

    // What `mkb report` no longer does: hold the trials whole (for comparison; TrialDetail::Metrics is the leanest).
    {
        const Measured held = measureInChild([&](std::vector<double>& values) -> std::string {
            auto store = mkb::Store::open(storePath, mkb::OpenMode::ReadExisting);
            if (!store) {
                return store.error().message;
            }
            auto trials = (*store)->loadTrials({}, mkb::TrialDetail::Metrics, mkb::report::metricColumns(options));
            values = {trials ? double(trials->size()) : 0.0};
            return {};
        });
        std::printf("loading the trials whole instead (TrialDetail::Metrics, %.0f trials, no analysis): %.0f ms cpu\n",
                    held.values.empty() ? 0.0 : held.values[0], held.cpuMs);
    }

    // (a') the same path with --metrics ladder only: the like-for-like comparison with the naive baseline. It also
    // returns the base ladder the naive one must match.
    const Measured ladder = measureInChild([&](std::vector<double>& values) -> std::string {
        mkb::report::ReportOptions ladderOnly;
        ladderOnly.metrics = {mkb::report::MetricSet::Ladder};
        auto store = mkb::Store::open(storePath, mkb::OpenMode::ReadExisting);
        if (!store) {
            return store.error().message;
        }
        auto report = mkb::report::buildReportFromStore(**store, ladderOnly);
        if (!report) {
            return report.error().message;
        }
        (void)mkb::report::toMarkdown(*report);
        // Row "all / base": group, arm, resolved, then R@t for each threshold.
        for (const auto& row : report->tables.at(0).rows) {
            if (row.at(1).text == "base") {
                for (std::size_t i = 3; i < 3 + options.settings.thresholds.size(); ++i) {
                    values.push_back(row.at(i).number);
                }
            }
        }
        return {};
    });

    // (b) the naive baseline: the overall ladder from one SELECT per cell arm.
    const Measured naive = measureInChild([&](std::vector<double>& values) -> std::string {
        auto store = mkb::Store::open(storePath, mkb::OpenMode::ReadExisting);
        if (!store) {
            return store.error().message;
        }
        auto computed = naiveOverallLadder((*store)->handle(), options.settings.thresholds);
        if (!computed) {
            return computed.error().message;
        }
        values = {double(computed->resolved)};
        values.insert(values.end(), computed->base.begin(), computed->base.end());
        return {};
    });
    if (!ladder.error.empty() || !naive.error.empty()) {
        std::cerr << "bench: " << ladder.error << naive.error << '\n';
        return 1;
    }
    bool agree = ladder.values.size() + 1 == naive.values.size() && !ladder.values.empty();
    for (std::size_t i = 0; agree && i < ladder.values.size(); ++i) {
        agree = std::fabs(naive.values[i + 1] - ladder.values[i]) < 1e-12;
    }
    std::printf("naive baseline: %.0f resolved cell-replicates, base R@0 %.4f (report's ladder %s)\n",
                naive.values.empty() ? 0.0 : naive.values[0], naive.values.size() > 1 ? naive.values[1] : 0.0,
                agree ? "agrees" : "DISAGREES");

    std::printf("like for like (the naive baseline computes only the overall ladder): report --metrics ladder: %.0f ms "
                "(cpu %.0f ms), naive ladder: %.0f ms (cpu %.0f ms), ratio naive/report: wall %.2f, cpu %.2f\n",
                ladder.wallMs, ladder.cpuMs, naive.wallMs, naive.cpuMs, naive.wallMs / std::max(1e-9, ladder.wallMs),
                naive.cpuMs / std::max(1e-9, ladder.cpuMs));
    std::printf("full report (every metric set, %.0f tables; NOT like for like: the baseline computes 1 table): "
                "%.0f ms (cpu %.0f ms), naive ladder: %.0f ms (cpu %.0f ms), ratio naive/report: wall %.2f, cpu %.2f\n",
                full.values.at(0), full.wallMs, full.cpuMs, naive.wallMs, naive.cpuMs,
                naive.wallMs / std::max(1e-9, full.wallMs), naive.cpuMs / std::max(1e-9, full.cpuMs));

    // (c) the CLI itself as a subprocess.
    if (fs::exists(cli)) {
        const std::string command =
            "'" + cli + "' report --store '" + storePath.string() + "' --metrics all > /dev/null";
        const auto start = Clock::now();
        const double cpuStart = childrenCpuMs();
        const int status = std::system(command.c_str());
        std::printf("cli: mkb report --metrics all: %.0f ms wall, %.0f ms cpu (exit status %d)\n",
                    millisecondsSince(start), childrenCpuMs() - cpuStart, status);
    } else {
        std::printf("cli: %s not found; skipped\n", cli.c_str());
    }

    if (!keep && !reuse) {
        std::error_code ec;
        fs::remove(storePath, ec);
        fs::remove(storePath.string() + "-wal", ec);
        fs::remove(storePath.string() + "-shm", ec);
    }
    return agree ? 0 : 1;
}
