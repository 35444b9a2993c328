// lastGradings: one pass over the trials keeping the newest per (problem, DSL, model).
#include "gui/problems/problem_grading.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace mkb::gui {
namespace {

/// Newer: a later finish time (a running trial, with none, counts as newest), then a larger id.
bool isNewer(const LastGrading& candidate, const LastGrading& current) {
    const bool candidateRunning = candidate.finishedAt.empty();
    const bool currentRunning = current.finishedAt.empty();
    if (candidateRunning != currentRunning) {
        return candidateRunning;
    }
    if (candidate.finishedAt != current.finishedAt) {
        return candidate.finishedAt > current.finishedAt;
    }
    return candidate.trialId > current.trialId;
}

LastGrading gradingOf(const TrialRecord& trial) {
    LastGrading grading;
    grading.dsl = trial.dsl;
    grading.model = trial.model;
    grading.arm = trial.arm;
    grading.coordinate = trial.coordinate;
    grading.trialId = trial.id;
    grading.status = trial.status;
    grading.finishedAt = trial.status == TrialStatus::Running ? std::string() : trial.finishedAt;
    if (trial.finalVerdict) {
        grading.passed = trial.finalVerdict->passed;
        grading.speedup = trial.finalVerdict->speedupVsEager;
        grading.stage = trial.finalVerdict->stage;
    }
    return grading;
}

} // namespace

std::map<ProblemKey, std::vector<LastGrading>> lastGradings(const std::vector<TrialRecord>& trials) {
    std::map<std::tuple<std::string, int, std::string, std::string, std::string>, LastGrading> newest;
    for (const TrialRecord& trial : trials) {
        if (trial.archived) {
            continue;
        }
        LastGrading grading = gradingOf(trial);
        const auto key = std::make_tuple(trial.suite, trial.problemNumber, trial.problemSlug, trial.dsl, trial.model);
        const auto found = newest.find(key);
        if (found == newest.end()) {
            newest.emplace(key, std::move(grading));
        } else if (isNewer(grading, found->second)) {
            found->second = std::move(grading);
        }
    }
    std::map<ProblemKey, std::vector<LastGrading>> byProblem;
    for (auto& [key, grading] : newest) { // map order: DSL, then model, within a problem
        byProblem[{std::get<0>(key), std::get<1>(key), std::get<2>(key)}].push_back(std::move(grading));
    }
    return byProblem;
}

std::vector<const LastGrading*> newestPerDsl(const std::vector<LastGrading>& gradings) {
    std::vector<const LastGrading*> newest;
    for (const LastGrading& grading : gradings) {
        if (!newest.empty() && newest.back()->dsl == grading.dsl) {
            if (isNewer(grading, *newest.back())) {
                newest.back() = &grading;
            }
        } else {
            newest.push_back(&grading);
        }
    }
    return newest;
}

std::string describeGrading(const LastGrading& grading) {
    switch (grading.status) {
    case TrialStatus::Running:
        return "running";
    case TrialStatus::Skipped:
        return "skipped";
    case TrialStatus::InfrastructureError:
        return "infrastructure error";
    case TrialStatus::Interrupted:
        return "interrupted";
    case TrialStatus::Finished:
        break;
    }
    if (!grading.passed) {
        return "no verdict";
    }
    if (*grading.passed) {
        char text[48];
        std::snprintf(text, sizeof text, "passed %.2f\u00d7", grading.speedup.value_or(0));
        return text;
    }
    return grading.stage.empty() || grading.stage == "done" ? "failed" : "failed (" + grading.stage + ")";
}

} // namespace mkb::gui
