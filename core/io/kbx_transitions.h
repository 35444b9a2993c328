// KernelBench-X's transitions as the store holds them: every step of an imported refinement that KernelBench-X gave
// a kind ("reached_by"), with both rounds' own verdicts, our regradings of them and the pair's paired re-timing.
#pragma once

#include "core/analysis/kbx_events.h"
#include "core/io/kbx_categories.h"
#include "core/records/verdict.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb::io {

/// One consecutive submission pair of a live trial whose after submission has a non-empty reached_by.
struct KbxTransition {
    /// Task, category, kinds, submission indices (round k is index k + 1), the claimed after/before ratio (their
    /// speedups over eager), the paired ratio with its 95% CI, and why it was not timed, as kbx-events computes them.
    analysis::TransitionEvent event;
    std::int64_t trialId = 0;
    std::string model;
    std::int64_t beforeSubmissionId = 0;
    std::int64_t afterSubmissionId = 0;
    Verdict theirsBefore; // the submissions' own verdicts (KernelBench-X's for an imported corpus, boundary "kbx")
    Verdict theirsAfter;
    std::map<std::string, Verdict> oursBefore; // boundary ("mkb", "strict") -> our newest regrading's verdict
    std::map<std::string, Verdict> oursAfter;
    std::string beforeKernel; // the rounds' own code, as stored
    std::string afterKernel;
};

/// Every transition of the live trials (model, when given), by trial id then after index, of every kind.
Result<std::vector<KbxTransition>> loadKbxTransitions(Store& store, const std::optional<std::string>& model,
                                                      const CategoryOf& categoryOf);

/// The kinds of the transition that led to a submission ("reached_by" of its verdict JSON), "" when none.
std::string reachedBy(const Verdict& verdict);

/// The comma-separated kinds one by one, trimmed, in the order written, each once.
std::vector<std::string> transitionKinds(const std::string& kinds);

/// A submission's name: "round_K" for an imported corpus's round (K = index − 1), "submission N" otherwise.
std::string submissionName(const Verdict& verdict, int index);

/// How a transition stands: its standing under each performance kind (analysis::kindStanding; one word when all
/// agree, "kind standing; …" when they differ), "no speed claim" without one; then, when not timed, why.
std::string standingText(const analysis::TransitionEvent& event);

/// Why it was not timed: the reason's class and the grader's error ("" when timed).
std::string notTimedText(const analysis::TransitionEvent& event);

} // namespace mkb::io
