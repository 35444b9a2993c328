// A small transfer-study store written through the Store API for the overview, comparisons and inspector suites:
// two models, two directions (triton2cuda, cuda2triton), two problems in two families, with skills and submissions.
#pragma once

#include "core/store/store.h"

#include <QString>
#include <QTest>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace mkbguitest {

/// How one arm of the fixture ended: failed (speedup 0), passed with a speedup, or skipped.
struct ArmResult {
    bool passed = false;
    double speedup = 0;
    bool skipped = false;
    std::string skill; // the SKILL.md the attempt wrote ("" = none)
    std::string kernel;
};

inline ArmResult pass(double speedup, std::string skill = {}, std::string kernel = {}) {
    return ArmResult{true, speedup, false, std::move(skill), std::move(kernel)};
}
inline ArmResult fail(std::string skill = {}, std::string kernel = {}) {
    return ArmResult{false, 0, false, std::move(skill), std::move(kernel)};
}

inline mkb::Verdict verdictOf(const ArmResult& result) {
    mkb::Verdict verdict;
    verdict.imported = true;
    verdict.compliant = true;
    verdict.correct = result.passed;
    verdict.passed = result.passed;
    verdict.speedupVsEager = result.passed ? result.speedup : 0;
    verdict.stage = result.passed ? "done" : "correctness";
    verdict.error = result.passed ? "" : "output mismatch";
    verdict.kernelMedianMs = result.passed ? 1.0 / result.speedup : 2.0;
    verdict.eagerMedianMs = 1.0;
    verdict.correctDraws = result.passed ? 5 : 2;
    verdict.totalDraws = 5;
    return verdict;
}

/// Writes one finished trial (and, when it has a kernel, two submissions: a failing one and the final one).
/// Returns the trial id, or 0 after failing the test.
inline std::int64_t writeArm(mkb::Store& store, const std::string& model, int problem, const std::string& slug,
                             const std::string& family, const std::string& arm, const std::string& dsl,
                             const ArmResult& result, std::optional<std::int64_t> sourceTrialId = {}) {
    mkb::TrialRecord trial;
    trial.model = model;
    trial.suite = "problems";
    trial.problemNumber = problem;
    trial.problemSlug = slug;
    trial.family = family;
    trial.replicate = 1;
    trial.arm = arm;
    trial.dsl = dsl;
    char code[96];
    std::snprintf(code, sizeof code, "p%02d_r1_%s", problem, arm.c_str());
    trial.coordinate = code;
    trial.problemFingerprint = "pf";
    trial.graderFingerprint = "gf";
    trial.sourceTrialId = sourceTrialId;
    trial.status = result.skipped ? mkb::TrialStatus::Skipped : mkb::TrialStatus::Finished;
    trial.skipped = result.skipped;
    mkb::TrialOutcome outcome;
    outcome.status = trial.status;
    outcome.skipped = result.skipped;
    if (!result.skipped) {
        outcome.verdict = verdictOf(result);
    }
    if (!result.skill.empty()) {
        outcome.skillText = result.skill;
    }
    auto id = store.insertFinishedTrial(trial, outcome);
    if (!id) {
        QTest::qFail(id.error().message.c_str(), __FILE__, __LINE__);
        return 0;
    }
    if (!result.kernel.empty()) {
        mkb::SubmissionRecord first;
        first.trialId = *id;
        first.index = 1;
        first.kernelSource = "# first try\n" + result.kernel;
        first.verdict = verdictOf(fail());
        first.verdict.error = "first try mismatch";
        mkb::SubmissionRecord final;
        final.trialId = *id;
        final.index = 2;
        final.kernelSource = result.kernel;
        final.verdict = verdictOf(result);
        if (!store.addSubmission(first) || !store.addSubmission(final)) {
            QTest::qFail("could not add submissions", __FILE__, __LINE__);
        }
    }
    return *id;
}

/// The ids the fixture wrote, by "<model>/<problem>/<arm>".
using FixtureIds = std::map<std::string, std::int64_t>;

inline const char* kSourceSkill = "# Triton softmax skill\n\nUse one program per row.\nKeep the max in registers.\n";
inline const char* kTargetSkill = "# CUDA softmax skill\n\nUse one block per row.\n";
/// A skill with multi-byte UTF-8 before its claim: annotations store byte offsets, the panes QString positions.
inline const char* kUnicodeSkill = "# beta cuda — Δ tiles\nUse warp shuffles.\n";
inline const char* kBaseKernel = "import torch\n\ndef kernel(x):\n    y = x.softmax(-1)\n    return y\n";
inline const char* kSkillKernel =
    "import torch\n\ndef kernel(x):\n    m = x.max(-1)\n    y = x.softmax(-1)\n    return y\n";

/// Model "alpha": p1 softmax (reduction): triton2cuda helped (base fails, skill passes 2x), cuda2triton harmed.
///                p2 gelu (activation): triton2cuda neutral (both 1.5x), cuda2triton skipped (cuda wrote no skill).
/// Model "beta":  p1 softmax: triton2cuda helped (1.0 → 3.0 same tier? no: tiers 3 → 4), cuda2triton neutral.
inline FixtureIds writeTransferFixture(const std::filesystem::path& path) {
    FixtureIds ids;
    auto opened = mkb::Store::open(path, mkb::OpenMode::CreateIfMissing);
    if (!opened) {
        QTest::qFail(opened.error().message.c_str(), __FILE__, __LINE__);
        return ids;
    }
    mkb::Store& store = **opened;
    auto put = [&](const std::string& model, int problem, const std::string& slug, const std::string& family,
                   const std::string& arm, const std::string& dsl, const ArmResult& result,
                   std::optional<std::int64_t> source = {}) {
        const std::int64_t id = writeArm(store, model, problem, slug, family, arm, dsl, result, source);
        ids[model + "/" + std::to_string(problem) + "/" + arm] = id;
        return id;
    };
    // alpha, p1
    const auto aT1 = put("alpha", 1, "softmax", "reduction", "solo_triton", "triton", pass(1.2, kSourceSkill, "# t\n"));
    const auto aC1 = put("alpha", 1, "softmax", "reduction", "solo_cuda", "cuda", fail(kTargetSkill, kBaseKernel));
    put("alpha", 1, "softmax", "reduction", "triton2cuda_skill", "cuda", pass(2.0, kTargetSkill, kSkillKernel), aT1);
    put("alpha", 1, "softmax", "reduction", "cuda2triton_skill", "triton", fail({}, "# harmed\n"), aC1);
    // alpha, p2
    const auto aT2 = put("alpha", 2, "gelu", "activation", "solo_triton", "triton", pass(1.5, "# gelu skill\n"));
    const auto aC2 = put("alpha", 2, "gelu", "activation", "solo_cuda", "cuda", pass(1.5));
    put("alpha", 2, "gelu", "activation", "triton2cuda_skill", "cuda", pass(1.5), aT2);
    ArmResult skipped;
    skipped.skipped = true;
    put("alpha", 2, "gelu", "activation", "cuda2triton_skill", "triton", skipped, aC2);
    // beta, p1
    const auto bT1 = put("beta", 1, "softmax", "reduction", "solo_triton", "triton", pass(1.1, "# beta skill\n"));
    const auto bC1 = put("beta", 1, "softmax", "reduction", "solo_cuda", "cuda", pass(1.0, kUnicodeSkill));
    put("beta", 1, "softmax", "reduction", "triton2cuda_skill", "cuda", pass(3.0), bT1);
    put("beta", 1, "softmax", "reduction", "cuda2triton_skill", "triton", pass(1.1), bC1);
    return ids;
}

} // namespace mkbguitest
