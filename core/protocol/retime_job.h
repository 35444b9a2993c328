// One `mkb retime` over a store path: the store opened read-only for a dry run, the device named from this host's
// latest stored probe, the grader started and stopped around the re-timing of the job's cells.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/protocol/retimer.h"
#include "core/protocol/transition_retimer.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace mkb {

class Store;

/// The name of the device from this host's latest stored probe of it (e.g. "NVIDIA H200"), "" when never probed.
std::string storedDeviceName(Store& store, const std::string& device);

/// What the caller hears while a store is re-timed.
struct RetimeCallbacks {
    std::function<void()> graderStarted;             // the grader runs (e.g. install a Ctrl+C handler now)
    std::function<void(const RetimePlan&)> planned;  // before anything is timed
    std::function<void(const RetimeOutcome&)> timed; // each cell when it is done
};

/// Where a re-timing of a store stopped when it could not finish.
enum class RetimeStage { OpeningStore, StartingGrader, Retiming };

struct RetimeStoreRun {
    std::optional<RetimeSummary> summary; // set when the re-timing finished (or was cancelled between cells)
    RetimeStage failedAt = RetimeStage::Retiming;
    std::string error; // one line when summary is unset: what failed, where, what to do
};

/// What the caller hears while a store's before/after pairs are re-timed.
struct TransitionRetimeCallbacks {
    std::function<void()> graderStarted;
    std::function<void(const TransitionPlan&)> planned;
    std::function<void(const TransitionOutcome&)> timed;
};

struct TransitionStoreRun {
    std::optional<TransitionRetimeSummary> summary; // set when the re-timing finished (or stopped between pairs)
    RetimeStage failedAt = RetimeStage::Retiming;
    std::string error;
};

/// Re-times the before/after pairs of job's trials in the store at storePath (see runTransitionRetimes), opening
/// the store and running the grader as retimeStore does.
TransitionStoreRun retimeStoreTransitions(const std::filesystem::path& storePath, const GraderLaunch& launch,
                                          RetimeJob job, const TransitionRetimeCallbacks& callbacks,
                                          const std::atomic<bool>* cancel);

/// Re-times job's cells in the store at storePath (see runRetimes): opens it (read-only when job.dryRun), fills
/// job.deviceName from the store when the job has none, starts a grader with launch and stops it at the end.
RetimeStoreRun retimeStore(const std::filesystem::path& storePath, const GraderLaunch& launch, RetimeJob job,
                           const RetimeCallbacks& callbacks, const std::atomic<bool>* cancel);

} // namespace mkb
