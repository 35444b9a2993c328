// Share of variance in correctness explained by a grouping (η², DESIGN §8): KernelBench-X category and family, each
// against model.
#pragma once

#include "core/analysis/attempt_set.h"

#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// η² = between-group sum of squares / total sum of squares of values grouped by groups[i]; nullopt when there are no
/// values or the total sum of squares is 0 (every value equal). values and groups must have the same length.
std::optional<double> etaSquared(const std::vector<double>& values, const std::vector<std::string>& groups);

struct CorrectnessVariance {
    std::size_t attempts = 0;         // graded attempts
    std::optional<double> byFamily;   // η² of the 0/1 correctness grouped by problem family
    std::optional<double> byCategory; // ... by KernelBench-X category (uncategorised problems form one group)
    std::optional<double> byModel;    // ... by model
};

CorrectnessVariance correctnessVariance(const AttemptSet& attempts);

} // namespace mkb::analysis
