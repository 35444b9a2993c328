// Small hand-built attempts, comparisons and trials for the analysis golden tests.
#pragma once

#include "core/analysis/attempt.h"
#include "core/analysis/comparison.h"
#include "core/records/trial.h"

#include <memory>
#include <string>
#include <utility>

namespace mkbtest {

using mkb::analysis::Attempt;
using mkb::analysis::Comparison;

/// A graded attempt that passed (imported, compliant, correct) with the given speedup over eager.
inline Attempt passing(double speedup) {
    Attempt attempt;
    attempt.graded = true;
    attempt.passed = true;
    attempt.correct = true;
    attempt.imported = true;
    attempt.compliant = true;
    attempt.speedup = speedup;
    attempt.wroteSkill = true;
    return attempt;
}

/// A graded attempt that failed correctness (it imported and complied).
inline Attempt failing() {
    Attempt attempt;
    attempt.graded = true;
    attempt.imported = true;
    attempt.compliant = true;
    attempt.wroteSkill = true;
    return attempt;
}

/// A skill arm recorded as skipped because its source wrote no skill.
inline Attempt skippedSkill() {
    Attempt attempt;
    attempt.skipped = true;
    return attempt;
}

struct CellPlace {
    std::string sourceDsl = "triton";
    std::string targetDsl = "cuda";
    std::string family = "attention";
    int problem = 1;
    int replicate = 1;
    std::string model = "m";
};

inline Attempt placed(Attempt attempt, const CellPlace& place, const std::string& arm, const std::string& dsl) {
    attempt.model = place.model;
    attempt.problemNumber = place.problem;
    attempt.family = place.family;
    attempt.replicate = place.replicate;
    attempt.arm = arm;
    attempt.dsl = dsl;
    return attempt;
}

/// A resolved comparison of the three given attempts at the given place.
inline Comparison cell(Attempt source, Attempt base, Attempt skill, const CellPlace& place = {}) {
    Comparison comparison;
    comparison.model = place.model;
    comparison.problemNumber = place.problem;
    comparison.family = place.family;
    comparison.replicate = place.replicate;
    comparison.sourceDsl = place.sourceDsl;
    comparison.targetDsl = place.targetDsl;
    comparison.direction = place.sourceDsl + "2" + place.targetDsl;
    comparison.source =
        std::make_shared<const Attempt>(placed(std::move(source), place, "solo_" + place.sourceDsl, place.sourceDsl));
    comparison.base =
        std::make_shared<const Attempt>(placed(std::move(base), place, "solo_" + place.targetDsl, place.targetDsl));
    comparison.skill = std::make_shared<const Attempt>(
        placed(std::move(skill), place, comparison.direction + "_skill", place.targetDsl));
    return comparison;
}

/// The same comparison with its skill arm missing (never run or errored): unresolved.
inline Comparison unresolvedCell(Attempt source, Attempt base, const CellPlace& place = {}) {
    Comparison comparison = cell(std::move(source), std::move(base), failing(), place);
    comparison.skill.reset();
    return comparison;
}

/// A finished trial with a final verdict; solo arms also wrote a skill.
inline mkb::TrialRecord finishedTrial(std::int64_t id, int problem, int replicate, const std::string& arm,
                                      const std::string& dsl, bool passed, double speedup) {
    mkb::TrialRecord trial;
    trial.id = id;
    trial.model = "m";
    trial.problemNumber = problem;
    trial.problemSlug = "problem_" + std::to_string(problem);
    trial.family = "attention";
    trial.replicate = replicate;
    trial.arm = arm;
    trial.dsl = dsl;
    trial.status = mkb::TrialStatus::Finished;
    mkb::Verdict verdict;
    verdict.imported = true;
    verdict.compliant = true;
    verdict.correct = passed;
    verdict.passed = passed;
    verdict.speedupVsEager = passed ? speedup : 0;
    trial.finalVerdict = verdict;
    if (arm.rfind("solo_", 0) == 0) {
        trial.skillText = "# Skill\nEvidence-backed notes.\n";
    }
    return trial;
}

/// A skill-arm trial recorded as skipped.
inline mkb::TrialRecord skippedTrial(std::int64_t id, int problem, int replicate, const std::string& arm,
                                     const std::string& dsl) {
    mkb::TrialRecord trial = finishedTrial(id, problem, replicate, arm, dsl, false, 0);
    trial.status = mkb::TrialStatus::Skipped;
    trial.skipped = true;
    trial.finalVerdict.reset();
    return trial;
}

} // namespace mkbtest

/// Compares doubles to 1e-9 absolute; for optionals, first demands a value.
#define MKB_NEAR(actual, expected)                                                                                     \
    do {                                                                                                               \
        const double mkbActual = (actual);                                                                             \
        const double mkbExpected = (expected);                                                                         \
        QVERIFY2(std::abs(mkbActual - mkbExpected) < 1e-9, qPrintable(QStringLiteral("%1 = %2, expected %3")           \
                                                                          .arg(QLatin1String(#actual))                 \
                                                                          .arg(mkbActual, 0, 'g', 17)                  \
                                                                          .arg(mkbExpected, 0, 'g', 17)));             \
    } while (false)

#define MKB_NEAR_OPT(optional, expected)                                                                               \
    do {                                                                                                               \
        QVERIFY2((optional).has_value(), #optional " has no value");                                                   \
        MKB_NEAR(*(optional), expected);                                                                               \
    } while (false)
