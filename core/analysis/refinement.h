// Refinement trajectories (DESIGN §8): compile and correct rates by submission index, rescued attempts against
// correct-from-the-start ones, and the size of each fixing edit.
#pragma once

#include "core/analysis/attempt_set.h"
#include "core/analysis/linediff.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// Among the attempts that made a submission with this index: the share that compiled (imported) and was correct.
struct IndexRates {
    int index = 0;
    std::size_t attempts = 0; // never 0 in a returned row
    double compileRate = 0;
    double correctRate = 0;
};

/// One row per submission index present in any attempt, ascending.
std::vector<IndexRates> ratesBySubmissionIndex(const AttemptSet& attempts);

/// Attempts with at least one submission split by their first submission: correct from the start, rescued (first
/// failed, a later one correct) or never correct. Speedups are of the final verdicts that passed.
struct RescueSummary {
    std::size_t withSubmissions = 0;
    std::size_t correctFromStart = 0;
    std::size_t rescued = 0;
    std::size_t neverCorrect = 0;
    std::optional<double> rescuedShare; // rescued / (first submission failed)
    Distribution fromStartSpeedups;
    Distribution rescuedSpeedups;
    std::optional<double> fromStartGeometricMean;
    std::optional<double> rescuedGeometricMean;
};

RescueSummary rescueSummary(const AttemptSet& attempts);

enum class EditKind { LocalFix, StructuralRewrite };
const char* toString(EditKind kind);

/// A pair of consecutive submissions in one attempt where a failing kernel became correct.
struct FixingEdit {
    std::int64_t trialId = 0;
    std::string model;
    int problemNumber = 0;
    std::string problemSlug;
    std::string arm;
    std::string dsl;
    int replicate = 1;
    int fromIndex = 0;
    int toIndex = 0;
    LineDiffStats diff;
    EditKind kind = EditKind::LocalFix; // structural when diff.changedShare >= settings.structuralRewriteShare
};

/// Every fixing edit, attempt by attempt, in submission order.
std::vector<FixingEdit> fixingEdits(const AttemptSet& attempts, const AnalysisSettings& settings = {});

struct FixingEditSummary {
    std::size_t edits = 0;
    std::size_t localFixes = 0;
    std::size_t structuralRewrites = 0;
    std::optional<double> localFixShare;
    Distribution changedLineShare;
};

FixingEditSummary summarizeFixingEdits(const std::vector<FixingEdit>& edits);

} // namespace mkb::analysis
