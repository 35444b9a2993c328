// A small imported KernelBench-X corpus for the workbench's transition tests: two tasks in two categories, one
// speedup_increase step (regraded under mkb, re-timed: after/before 0.8 [0.75, 0.85]) and one exe_fail_to_pass step.
#pragma once

#include "core/io/kbx_corpus_import.h"
#include "core/records/regrading.h"
#include "core/records/retiming.h"
#include "core/store/store.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <string>

namespace kbxgui {

inline std::string side(const std::string& ok, const std::string& speedup, const std::string& error) {
    return R"({"call_ok": true, "exe_ok": )" + ok + R"(, "perf_ok": )" + ok +
           R"(, "dtype": "", "runtime_ms": null, "gbs": null, "tflops": null, "speedup": )" + speedup +
           R"(, "maintainability": "N/A", "error": ")" + error + R"("})";
}

inline std::string line(const std::string& task, const std::string& kind, const std::string& before,
                        const std::string& after, const std::string& beforeCode, const std::string& afterCode) {
    return R"({"task_id": ")" + task + R"(", "from_round": "round_0", "to_round": "round_1", "kind": ")" + kind +
           R"(", "before": )" + before + R"(, "after": )" + after + R"(, "before_code": ")" + beforeCode +
           R"(", "after_code": ")" + afterCode + R"("})";
}

inline mkb::Verdict ours(bool correct, const std::string& error) {
    mkb::Verdict verdict;
    verdict.imported = true;
    verdict.correct = correct;
    verdict.passed = correct;
    verdict.speedupVsEager = correct ? 0.9 : 0;
    verdict.stage = correct ? "done" : "correctness";
    verdict.error = error;
    verdict.boundary = "mkb";
    return verdict;
}

/// Writes the corpus, imports it into dir/kbx.sqlite, files both problems with their categories, our regradings of
/// the Math/exp rounds (before correct, after "mismatch at [0]") and the pair's re-timing. Returns the store path.
inline std::string buildStore(const QTemporaryDir& dir) {
    namespace fs = std::filesystem;
    const fs::path root(dir.path().toStdString());
    const fs::path corpus = root / "corpus.jsonl";
    std::ofstream(corpus) << line("Math/exp.py", "speedup_increase", side("true", "1.0", ""), side("true", "1.25", ""),
                                  "def exp(x): return x  # BEFORE_EXP", "def exp(x): return x.exp()  # AFTER_EXP")
                          << "\n"
                          << line("Fusion/add_relu.py", "exe_fail_to_pass", side("false", "null", "boom"),
                                  side("true", "0.9", ""), "def add_relu(x): return x  # BEFORE_FUSION",
                                  "def add_relu(x): return (x + 1).relu()  # AFTER_FUSION")
                          << "\n";
    const fs::path path = root / "kbx.sqlite";
    auto store = mkb::Store::open(path);
    if (!store) {
        qFatal("cannot open the fixture store: %s", store.error().message.c_str());
    }
    auto summary = mkb::importKbxCorpus(**store, corpus);
    if (!summary || summary->rounds != 4) {
        qFatal("the fixture corpus did not import");
    }
    auto trials = (*store)->loadTrials({}, mkb::TrialDetail::Full);
    for (const mkb::TrialRecord& trial : *trials) {
        mkb::Problem problem;
        problem.suite = "kernelbenchx";
        problem.number = trial.problemNumber;
        problem.slug = trial.problemSlug;
        problem.family = trial.family;
        problem.source =
            std::string("MKB_META = {\"category\": \"") + (trial.problemSlug == "exp" ? "Math" : "Fusion") + "\"}\n";
        problem.fingerprint = std::string(64, trial.problemSlug == "exp" ? 'a' : 'b');
        problem.meta.category = trial.problemSlug == "exp" ? "Math" : "Fusion";
        if (!(*store)->upsertProblem(problem)) {
            qFatal("cannot file a fixture problem");
        }
        if (trial.problemSlug != "exp") {
            continue;
        }
        auto rounds = (*store)->submissions(trial.id);
        for (const mkb::SubmissionRecord& round : *rounds) {
            mkb::RegradingRecord regrading;
            regrading.submissionId = round.id;
            regrading.graderFingerprint = "grader+mkb";
            regrading.problemFingerprint = problem.fingerprint;
            regrading.kernelSha256 = std::string(64, char('0' + round.index));
            regrading.kernelSource = round.kernelSource;
            regrading.verdict = round.index == 1 ? ours(true, "") : ours(false, "mismatch at [0]");
            if (!(*store)->insertRegrading(regrading)) {
                qFatal("cannot file a fixture regrading");
            }
        }
        mkb::TransitionRetimingRecord retiming;
        retiming.trialId = trial.id;
        retiming.model = trial.model;
        retiming.suite = trial.suite;
        retiming.problemNumber = trial.problemNumber;
        retiming.replicate = trial.replicate;
        retiming.arm = trial.arm;
        retiming.beforeIndex = 1;
        retiming.afterIndex = 2;
        retiming.result.ok = true;
        retiming.result.device = "cpu";
        retiming.result.deviceName = "cpu";
        retiming.result.graderFingerprint = "grader";
        retiming.result.rounds = 10;
        retiming.result.pairs = {{"before", "after", 0.8, 0.75, 0.85, 10}};
        if (auto filed = (*store)->insertTransitionRetiming(retiming); !filed) {
            qFatal("cannot file the fixture re-timing: %s", filed.error().message.c_str());
        }
    }
    return path.string();
}

} // namespace kbxgui
