// Repair pairs: consecutive submissions of one attempt where a failing kernel became correct, as a JSONL dataset.
#pragma once

#include "core/analysis/settings.h"
#include "core/records/trial.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <optional>
#include <string>
#include <vector>

namespace mkb {

struct RepairPair {
    std::string model;
    std::string problem; // "NN_slug"
    std::string family;
    std::string dsl;
    std::string arm;
    std::string coordinate; // "p07_r1_solo_triton"
    int beforeIndex = 0;
    int afterIndex = 0;
    std::string beforeSource;
    std::string afterSource;
    Verdict failure;             // the failing submission's verdict (error, mismatch, stage, full JSON)
    double changedLineShare = 0; // analysis::lineDiffStats of the fixing edit
    std::string fixKind;         // "local" or "structural" (analysis::fixingEdits)
};

/// Every fixing edit (analysis::fixingEdits) of the trials, with both sources and the failure's verdict taken from
/// the submissions given (which must carry full verdicts for the trials that have a fix). In trial order, then
/// submission order.
std::vector<RepairPair> repairPairs(const std::vector<TrialRecord>& trials,
                                    const std::vector<SubmissionRecord>& submissions,
                                    const analysis::AnalysisSettings& settings = {});

/// Loads the trials (of one model when given) and submissions once, and reads full verdicts only for the trials that
/// hold a repair.
Result<std::vector<RepairPair>> repairPairsFromStore(Store& store, const std::optional<std::string>& model = {},
                                                     const analysis::AnalysisSettings& settings = {});

/// One JSON object on one line (no trailing newline): {model, problem, family, dsl, arm, coordinate, before_index,
/// after_index, before_source, after_source, failure_report {stage, error, mismatch, verdict}, fix_changed_line_share,
/// fix_kind}.
std::string repairPairJsonLine(const RepairPair& pair);

} // namespace mkb
