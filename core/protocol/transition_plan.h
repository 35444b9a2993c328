// The planner of before/after re-timings (DESIGN §5.5): which consecutive submission pairs of a trial need a paired
// re-timing, which are current, and why the rest cannot be timed. Pure: plain structs in, a plain plan out.
#pragma once

#include "core/protocol/retime_plan.h"
#include "core/records/retiming.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// One submission of a pair as the planner sees it.
struct TransitionRound {
    int index = 0;         // the submission's index (1-based)
    bool hasCode = false;  // the submission stored a kernel source
    bool imported = false; // its own verdict says it loaded and ran (KernelBench-X's call_ok for a corpus round)
    bool correct = false;  // its own verdict says it was correct
    std::optional<double> speedup;  // its own verdict's speedup over eager when it passed
    std::optional<double> medianMs; // its own verdict's median time, when timed
    std::string kernel;             // the kernel.py that is timed ("" when it cannot be made)
    std::string kernelSha256;       // sha256Hex(kernel), "" without one
    std::string kernelProblem;      // why no kernel.py could be made from the stored code, "" when one was
};

/// Two consecutive submissions of one live trial.
struct TransitionPair {
    std::optional<std::int64_t> trialId;
    std::string model;
    std::string suite;
    int problemNumber = 0;
    std::string problemSlug;
    std::string problemName; // "math/103_scaled_add", for messages; "" when the problem is not in the selection
    std::string category;    // KernelBench-X's category from the problem's MKB_META, "" when unknown
    int replicate = 1;
    std::string arm;
    std::string dsl;
    std::string kind; // the transition kind the after submission's verdict names ("speedup_increase", …), "" if none
    TransitionRound before;
    TransitionRound after;

    /// "kbx-geak p103 r1 solo_triton 1->2".
    std::string name() const;
};

struct TransitionPlanEntry {
    TransitionPair pair;
    RetimeStatus status = RetimeStatus::Missing;
    std::string reason; // one line: why
    std::optional<std::int64_t> liveRetimingId;
    bool retime = false;
};

struct TransitionPlan {
    std::vector<TransitionPlanEntry> entries; // in the order of the pairs given
    int count(RetimeStatus status) const;
    int toRetime() const;
};

/// Why a pair cannot be timed, or "" when it can: only pairs whose both submissions ran at all are timed (a round
/// without code, or one its own verdict says never loaded, or whose code gives no kernel.py, is not; a round that
/// ran but was wrong is tried, and the grader's correctness draw says whether it runs correctly here). Its problem
/// must be in the selection.
std::string transitionBlocks(const TransitionPair& pair);

/// Why a stored re-timing no longer matches the pair (device, grader, or either kernel's SHA-256), "" when current.
std::string transitionStaleness(const TransitionRetimingRecord& record, const TransitionPair& pair,
                                const RetimePlanRequest& request);

/// Plans each pair against the live pair re-timings (those of other pairs are ignored). A pair that is blocked is
/// not re-timed, whatever is stored; one that can be timed is missing, stale or current as for cells.
TransitionPlan makeTransitionPlan(const std::vector<TransitionPair>& pairs,
                                  const std::vector<TransitionRetimingRecord>& live, const RetimePlanRequest& request);

/// Whether a stored record belongs to the pair (same trial identity and submission indices).
bool samePair(const TransitionRetimingRecord& record, const TransitionPair& pair);

} // namespace mkb
