// The before/after re-timing loop (DESIGN §5.5): collects the consecutive submission pairs of the selected trials,
// plans them, writes both kernels to a private folder, asks the grader to time them together with eager ("before",
// "after") and stores each result.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/protocol/retimer.h"
#include "core/protocol/transition_plan.h"
#include "core/store/store.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// What happened to one pair that was to be re-timed.
struct TransitionOutcome {
    const TransitionPlanEntry* entry = nullptr;
    std::optional<RetimingResult> result; // set when the grader answered (ok or not); stored when set
    std::string error;                    // one line when no result came (infrastructure, store)
};

struct TransitionRetimeSummary {
    TransitionPlan plan;
    int retimed = 0;      // stored results with ok = true
    int kernelFailed = 0; // stored results with ok = false (a kernel did not run correctly under our grader)
    int errors = 0;       // no result; the pair stays missing or stale for the next run
    int left = 0;         // pairs to re-time that were not started (cancel or time limit)
    bool cancelled = false;
    bool timeLimited = false;
    double seconds = 0;
};

/// Whether a transition kind ("regression_exe,regression_perf") names one of kinds ("regression_*" matches by
/// prefix); an empty list matches every kind.
bool transitionKindMatches(const std::string& kind, const std::vector<std::string>& kinds);

/// The consecutive submission pairs (indices 1, 2, … in order; the final fresh evaluation, index 0, is not one) of
/// the live trials in job.scope whose problem is selected, kept when the after submission's kind matches
/// job.transitionKinds. A round imported from KernelBench-X's corpus is adapted to a kernel.py with solve()
/// (corpusRoundKernel); our own submissions are timed as stored.
Result<std::vector<TransitionPair>> transitionPairsFromStore(Store& store, const RetimeJob& job);

/// Plans the pairs against the store's live pair re-timings for this device and grader.
Result<TransitionPlan> planTransitionRetimes(Store& store, const RetimeJob& job, const std::string& graderFingerprint);

/// Plans, then re-times each pair the plan marks (one request per pair, kernels "before" then "after"), storing each
/// result as it comes. Stops between pairs on cancel or after job.timeLimitS; the rest are left for the next run.
Result<TransitionRetimeSummary> runTransitionRetimes(Store& store, GraderProcess& grader, const RetimeJob& job,
                                                     const std::function<void(const TransitionPlan&)>& onPlan,
                                                     const std::function<void(const TransitionOutcome&)>& onOutcome,
                                                     const std::atomic<bool>* cancel);

/// One line for a pair's result: "after/before 1.0031 [0.9982, 1.0080] n=140 converged" (R > 1: the after kernel is
/// faster); the error when the re-timing failed.
std::string transitionResultLine(const RetimingResult& result);

} // namespace mkb
