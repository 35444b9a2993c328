// The stored detail of one comparison's three trials, read in one go: what the transfer inspector shows.
#pragma once

#include "core/analysis/comparison.h"
#include "core/records/trial.h"
#include "core/records/verdict.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

class Store;

/// One arm of a comparison (source, base or skill) with what the store holds about its trial.
struct TransferArm {
    std::int64_t trialId = 0;            // 0 = the comparison has no such arm
    std::optional<Verdict> finalVerdict; // the trial's stored final verdict
    std::optional<SkillRecord> skill;    // the SKILL.md the trial wrote, if any
    std::string finalKernel;             // analysis's final-kernel rule over the submissions ("" = none, or skipped)
    std::vector<SubmissionRecord> submissions; // ascending index, the final fresh evaluation (index 0) first
    std::string error;                         // why the trial's detail could not be read ("" = it was)
};

struct TransferCase {
    TransferArm source;
    TransferArm base;
    TransferArm skill;
};

/// Reads the three arms of comparison from the store. A trial that cannot be read leaves its arm's error set and
/// the rest of the case filled.
TransferCase loadTransferCase(Store& store, const analysis::Comparison& comparison);

} // namespace mkb
