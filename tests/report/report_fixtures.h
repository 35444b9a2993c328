// A small hand-built store for the report, export and repair-pair suites; every expected number is derived in the
// comment above the fixture.
#pragma once

#include "core/store/store.h"

#include <QtTest>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace mkbtest {

/// What one arm of the fixture did.
struct ArmPlan {
    bool passed = false;
    double speedup = 0;
    bool wroteSkill = true;
    bool skipped = false;
    bool withUsage = true;
    bool withCost = true;
};

inline std::int64_t addTrial(mkb::Store& store, const std::string& model, int problem, const std::string& slug,
                             const std::string& family, const std::string& arm, const ArmPlan& plan) {
    mkb::TrialRecord trial;
    trial.model = model;
    trial.suite = "fixture";
    trial.problemNumber = problem;
    trial.problemSlug = slug;
    trial.family = family;
    trial.replicate = 1;
    trial.arm = arm;
    trial.dsl = arm == "solo_triton" || arm == "cuda2triton_skill" ? "triton" : "cuda";
    trial.coordinate = "p0" + std::to_string(problem) + "_r1_" + arm;
    trial.startedAt = "2026-11-29T00:00:00Z";
    mkb::TrialOutcome outcome;
    outcome.finishedAt = "2026-11-29T00:10:00Z";
    if (plan.skipped) {
        trial.status = mkb::TrialStatus::Skipped;
        trial.skipped = true;
        outcome.status = mkb::TrialStatus::Skipped;
        outcome.skipped = true;
        outcome.error = "source wrote no SKILL.md";
    } else {
        trial.status = mkb::TrialStatus::Finished;
        mkb::Verdict verdict;
        verdict.imported = true;
        verdict.compliant = true;
        verdict.correct = plan.passed;
        verdict.passed = plan.passed;
        verdict.speedupVsEager = plan.speedup;
        verdict.stage = plan.passed ? "done" : "correctness";
        verdict.error = plan.passed ? "" : "output mismatch";
        verdict.json = R"({"stage": "final"})";
        outcome.verdict = verdict;
        if (plan.wroteSkill) {
            outcome.skillText = "# Skill\nTile by 64.\n";
        }
    }
    if (plan.withUsage) {
        outcome.usage.inputTokens = 100;
        outcome.usage.cacheTokens = 10;
        outcome.usage.outputTokens = 50;
        if (plan.withCost) {
            outcome.usage.costUsd = 0.5;
        }
        outcome.usage.agentSeconds = 60;
    }
    trial.usage = outcome.usage;
    auto id = store.insertFinishedTrial(trial, outcome);
    if (!id) {
        qFatal("fixture trial: %s", id.error().message.c_str());
    }
    return *id;
}

inline void addSubmission(mkb::Store& store, std::int64_t trialId, int index, const std::string& source, bool correct,
                          double speedup = 1.0) {
    mkb::SubmissionRecord submission;
    submission.trialId = trialId;
    submission.index = index;
    submission.kernelSource = source;
    submission.verdict.imported = true;
    submission.verdict.compliant = true;
    submission.verdict.correct = correct;
    submission.verdict.passed = correct;
    submission.verdict.speedupVsEager = correct ? speedup : 0.0;
    submission.verdict.stage = correct ? "done" : "correctness";
    submission.verdict.error = correct ? "" : "output mismatch at submission " + std::to_string(index);
    submission.verdict.mismatch = correct ? "" : "max abs diff 0.5 at [0, 3]";
    submission.verdict.json =
        correct ? R"({"stage": "done"})" : R"({"stage": "correctness", "index": )" + std::to_string(index) + "}";
    submission.createdAt = "2026-11-29T00:05:00Z";
    auto added = store.addSubmission(submission);
    if (!added) {
        qFatal("fixture submission: %s", added.error().message.c_str());
    }
}

/// Model m1, DSLs triton and cuda, replicate 1:
///   problem 1 "attn" (attention): solo_triton passes 2.0, solo_cuda passes 1.0 (usage without cost),
///     triton2cuda_skill passes 4.0, cuda2triton_skill fails;
///   problem 2 "mm" (gemm): solo_triton fails and writes no skill, solo_cuda passes 0.5,
///     triton2cuda_skill skipped, cuda2triton_skill passes 1.5 (no usage record).
/// Comparisons (base, skill outcome; tiers with thresholds 0,0.5,1,2,4):
///   P1 cuda2triton  source 1.0 (tier 3)  base 2.0 (4)  skill fail (0)        harmed,  standing below, r = 1/2
///   P1 triton2cuda  source 2.0 (4)       base 1.0 (3)  skill 4.0 (5)         helped,  standing above, r = 4
///   P2 cuda2triton  source 0.5 (2)       base fail (0) skill 1.5 (3)         helped,  standing above, r = 1.5
///   P2 triton2cuda  source fail (0)      base 0.5 (2)  skipped -> base 0.5   neutral, standing below, r = 1
/// Overall base R@t = 3/4, 3/4, 2/4, 1/4, 0 -> S = 45; skill R@t = 3/4, 3/4, 2/4, 1/4, 1/4 -> S = 50; lift S = 5.
/// Coverage: source passed 3/4, source wrote skill 3/4. T = 2/4, H = 1/4, ΔGM = (1/2·4·1.5·1)^(1/4) − 1 = 3^(1/4) − 1.
/// Model m2: problem 1, all four arms fail (two neutral comparisons).
/// Submissions: P1 solo_triton 1 fail "x\ny\n" -> 2 correct "u\nv\n" (structural, share 1);
///   P1 triton2cuda_skill 1 fail "a\nb\nc\nd\n" -> 2 correct "a\nb\nX\nd\n" (local, share 2/8 = 0.25);
///   P2 cuda2triton_skill 1 correct, 2 fail, 3 fail (no repair).
inline void fillFixtureStore(mkb::Store& store) {
    const std::int64_t p1Triton = addTrial(store, "m1", 1, "attn", "attention", "solo_triton", {true, 2.0});
    addTrial(store, "m1", 1, "attn", "attention", "solo_cuda", {true, 1.0, true, false, true, false});
    const std::int64_t p1Skill = addTrial(store, "m1", 1, "attn", "attention", "triton2cuda_skill", {true, 4.0});
    addTrial(store, "m1", 1, "attn", "attention", "cuda2triton_skill", {false, 0.0});
    addTrial(store, "m1", 2, "mm", "gemm", "solo_triton", {false, 0.0, false});
    addTrial(store, "m1", 2, "mm", "gemm", "solo_cuda", {true, 0.5});
    addTrial(store, "m1", 2, "mm", "gemm", "triton2cuda_skill", {false, 0.0, false, true});
    const std::int64_t p2Skill =
        addTrial(store, "m1", 2, "mm", "gemm", "cuda2triton_skill", {true, 1.5, true, false, false});
    for (const std::string arm : {"solo_triton", "solo_cuda", "triton2cuda_skill", "cuda2triton_skill"}) {
        addTrial(store, "m2", 1, "attn", "attention", arm, {false, 0.0});
    }
    addSubmission(store, p1Triton, 1, "x\ny\n", false);
    addSubmission(store, p1Triton, 2, "u\nv\n", true, 2.0);
    addSubmission(store, p1Skill, 1, "a\nb\nc\nd\n", false);
    addSubmission(store, p1Skill, 2, "a\nb\nX\nd\n", true, 4.0);
    addSubmission(store, p2Skill, 1, "p\nq\n", true, 1.5);
    addSubmission(store, p2Skill, 2, "p\nr\n", false);
    addSubmission(store, p2Skill, 3, "s\n", false);
}

inline std::unique_ptr<mkb::Store> openFixtureStore(const std::filesystem::path& path) {
    auto store = mkb::Store::open(path);
    if (!store) {
        qFatal("fixture store: %s", store.error().message.c_str());
    }
    fillFixtureStore(**store);
    return std::move(*store);
}

} // namespace mkbtest
