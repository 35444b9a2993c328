// η² of a 0/1 outcome under a grouping: how much of the spread a family or a model accounts for.
#include "core/analysis/variance.h"

#include <map>

namespace mkb::analysis {

std::optional<double> etaSquared(const std::vector<double>& values, const std::vector<std::string>& groups) {
    if (values.empty() || values.size() != groups.size()) {
        return std::nullopt;
    }
    double total = 0;
    std::map<std::string, std::pair<double, std::size_t>> sums; // group → (sum, count)
    for (std::size_t i = 0; i < values.size(); ++i) {
        total += values[i];
        auto& [sum, count] = sums[groups[i]];
        sum += values[i];
        ++count;
    }
    const double grandMean = total / static_cast<double>(values.size());
    double totalSquares = 0;
    for (double value : values) {
        totalSquares += (value - grandMean) * (value - grandMean);
    }
    if (totalSquares <= 0) {
        return std::nullopt;
    }
    double betweenSquares = 0;
    for (const auto& [group, sumAndCount] : sums) {
        const double groupMean = sumAndCount.first / static_cast<double>(sumAndCount.second);
        betweenSquares += static_cast<double>(sumAndCount.second) * (groupMean - grandMean) * (groupMean - grandMean);
    }
    return betweenSquares / totalSquares;
}

CorrectnessVariance correctnessVariance(const std::vector<Attempt>& attempts) {
    std::vector<double> correctness;
    std::vector<std::string> families;
    std::vector<std::string> models;
    for (const Attempt& attempt : attempts) {
        if (!attempt.graded) {
            continue;
        }
        correctness.push_back(attempt.correct ? 1.0 : 0.0);
        families.push_back(attempt.family);
        models.push_back(attempt.model);
    }
    return CorrectnessVariance{correctness.size(), etaSquared(correctness, families), etaSquared(correctness, models)};
}

} // namespace mkb::analysis
