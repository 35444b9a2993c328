// The last grading results of each problem from the project store: per DSL and model, the latest trial's verdict.
#pragma once

#include "core/records/trial.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace mkb::gui {

/// The latest trial of one problem in one DSL by one model.
struct LastGrading {
    std::string dsl;
    std::string model;
    std::string arm;
    std::string coordinate;
    std::int64_t trialId = 0;
    TrialStatus status = TrialStatus::Running;
    std::optional<bool> passed;    // from the final verdict, when there is one
    std::optional<double> speedup; // speedup vs eager of the final verdict
    std::string stage;             // where evaluation ended ("done", "correctness", …)
    std::string finishedAt;        // ISO 8601 UTC; empty while running
};

/// (suite, problem number, slug): two suite folders may share a name and a number, never also the slug.
using ProblemKey = std::tuple<std::string, int, std::string>;

/// For every problem with live trials: one LastGrading per (DSL, model), the latest by finish time (then trial id),
/// sorted by DSL then model. Archived trials are ignored.
std::map<ProblemKey, std::vector<LastGrading>> lastGradings(const std::vector<TrialRecord>& trials);

/// Per DSL, the newest of the problem's gradings (any model), in DSL order: what the table's column shows.
std::vector<const LastGrading*> newestPerDsl(const std::vector<LastGrading>& gradings);

/// "passed 1.42×", "failed (correctness)", "running", "skipped", "infrastructure error", …
std::string describeGrading(const LastGrading& grading);

} // namespace mkb::gui
