// Reads a store's trials row by row straight into the attempts and comparisons the metrics read, without holding the
// trials themselves (a TrialRecord is over a kilobyte; 100,000 of them cost more than the analysis).
#pragma once

#include "core/analysis/attempt.h"
#include "core/analysis/comparison.h"
#include "core/records/trial.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace mkb::io {

/// What the metrics read of a selection of trials.
struct LoadedAttempts {
    std::size_t trials = 0; // trials kept by the selection
    /// attemptsFromTrials of the kept trials, in trial id order (submissions attached when asked for).
    std::shared_ptr<const std::vector<analysis::Attempt>> attempts;
    /// The kept trials that fill no arm (archived, or running, errored or interrupted), whole, in trial id order.
    std::vector<TrialRecord> armless;
    /// buildComparisons over the kept trials, sharing the attempts, with each cell's live paired re-timing attached
    /// (analysis::attachRetimings) when withRetimings.
    std::vector<analysis::Comparison> comparisons;
    /// What attaching the store's live re-timings did (all zero without withRetimings).
    analysis::RetimingAttachment retimings;
};

struct AttemptLoadOptions {
    TrialFilter filter;
    MetricColumns columns;
    bool withSubmissions = false; // attach every submission (refinement trajectories, final kernels)
    bool withRetimings = true;    // attach the store's live paired re-timings to the comparisons (Store::liveRetimings)
    /// Keeps a trial in the selection; every trial when empty.
    std::function<bool(const TrialRecord&)> keep;
    /// The KernelBench-X category of a kept trial's problem, set on its attempt (or armless copy) before comparisons
    /// are built; every attempt stays uncategorised when empty. Asked once per run of consecutive kept trials of one
    /// problem (same number and slug), whose answer the others reuse.
    std::function<std::string(const TrialRecord&)> category;
};

/// Reads the trials of the store once (Store::visitTrials) and builds the attempts and comparisons from them.
Result<LoadedAttempts> loadAttempts(Store& store, const AttemptLoadOptions& options);

/// Store::visitSubmissionSummaries: every submission in trial id then index order with the verdict fields the metrics
/// read, handed to visit one at a time (one record refilled from row to row).
Status visitSubmissionSummaries(Store& store, const std::function<void(const SubmissionRecord&)>& visit);

/// Every submission of the store in one vector (visitSubmissionSummaries, held): the verdict fields the metrics read
/// (rewards, stage, error, mismatch, compliance), without the full verdict JSON (Store::submissions reads that).
Result<std::vector<SubmissionRecord>> loadSubmissionSummaries(Store& store);

} // namespace mkb::io
