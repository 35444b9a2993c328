// KernelBench-X's paper findings computed from the data, each with its n and a 95% interval, beside the paper's
// number: η² of correctness by category and by method, the refinement trade-off per round, rescued against correct
// from the start, the share of correct kernels slower than eager, and where the data cannot support a finding, what
// it would need.
#pragma once

#include "core/analysis/attempt_set.h"
#include "core/analysis/stats.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

enum class FindingUnit { Share, Speedup, EtaSquared };

/// One finding as the data gives it.
struct PaperFinding {
    std::string finding; // "correct rate, round 0"
    FindingUnit unit = FindingUnit::Share;
    std::optional<double> value;      // unset when the data cannot give it (note says why)
    std::size_t n = 0;                // what it is computed over (attempts, kernels), as `basis` names
    std::string basis;                // "attempts with a round 0", "correct, timed kernels", ...
    std::optional<Interval> interval; // 95% percentile bootstrap, seeded; unset with fewer than two items
    std::string paper;                // the paper's number, "52.3% (first round)"; "" when it gives none
    std::string note;                 // what the data would need, or how it differs from the paper's basis
};

/// The findings over the attempts, in the paper's order. Rounds are submission indices counted from 0 (a corpus's
/// round_0 is submission 1). Speedups are geometric means over the kernels that passed; the slower-than-eager share
/// is over the final verdicts that were correct and timed.
std::vector<PaperFinding> kbxPaperFindings(const AttemptSet& attempts);

/// η² of the 0/1 values grouped by groups, with a seeded percentile-bootstrap interval over the items (1000
/// resamples, resampling items with their group); unset when fewer than two items or every value equal.
struct EtaSquaredEstimate {
    std::optional<double> value;
    std::optional<Interval> interval;
};
EtaSquaredEstimate etaSquaredWithInterval(const std::vector<double>& values, const std::vector<std::string>& groups);

} // namespace mkb::analysis
