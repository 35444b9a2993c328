// η² of a 0/1 outcome under a grouping: how much of the spread a family, a KernelBench-X category or a model accounts
// for.
#include "core/analysis/variance.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace mkb::analysis {
namespace {

/// Values grouped by a label, each label held once: labels[groupOf[i]] is the group of values[i].
struct GroupedValues {
    std::vector<double> values;
    std::vector<std::size_t> groupOf;
    std::vector<std::string_view> labels;
    std::unordered_map<std::string_view, std::size_t> indexOf;

    void add(double value, std::string_view label) {
        auto [found, inserted] = indexOf.try_emplace(label, labels.size());
        if (inserted) {
            labels.push_back(label);
        }
        values.push_back(value);
        groupOf.push_back(found->second);
    }
};

/// The one definition of η²; groups are summed in label order so the result does not depend on input order.
std::optional<double> etaSquaredOf(const GroupedValues& grouped) {
    const std::vector<double>& values = grouped.values;
    if (values.empty()) {
        return std::nullopt;
    }
    double total = 0;
    std::vector<std::pair<double, std::size_t>> sums(grouped.labels.size()); // group → (sum, count)
    for (std::size_t i = 0; i < values.size(); ++i) {
        total += values[i];
        auto& [sum, count] = sums[grouped.groupOf[i]];
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
    std::vector<std::size_t> order(sums.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::sort(order.begin(), order.end(),
              [&](std::size_t left, std::size_t right) { return grouped.labels[left] < grouped.labels[right]; });
    double betweenSquares = 0;
    for (std::size_t group : order) {
        const auto& [sum, count] = sums[group];
        const double groupMean = sum / static_cast<double>(count);
        betweenSquares += static_cast<double>(count) * (groupMean - grandMean) * (groupMean - grandMean);
    }
    return betweenSquares / totalSquares;
}

} // namespace

std::optional<double> etaSquared(const std::vector<double>& values, const std::vector<std::string>& groups) {
    if (values.empty() || values.size() != groups.size()) {
        return std::nullopt;
    }
    GroupedValues grouped;
    grouped.values.reserve(values.size());
    grouped.groupOf.reserve(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        grouped.add(values[i], groups[i]);
    }
    return etaSquaredOf(grouped);
}

CorrectnessVariance correctnessVariance(const AttemptSet& attempts) {
    // Labels are views into the attempts: no string is copied per attempt.
    GroupedValues byFamily;
    GroupedValues byCategory;
    GroupedValues byModel;
    for (GroupedValues* grouped : {&byFamily, &byCategory, &byModel}) {
        grouped->values.reserve(attempts.size());
        grouped->groupOf.reserve(attempts.size());
    }
    for (const Attempt& attempt : attempts) {
        if (!attempt.graded) {
            continue;
        }
        const double correct = attempt.correct ? 1.0 : 0.0;
        byFamily.add(correct, attempt.family);
        byCategory.add(correct, attempt.category); // "" is the uncategorised group
        byModel.add(correct, attempt.model);
    }
    return CorrectnessVariance{byFamily.values.size(), etaSquaredOf(byFamily), etaSquaredOf(byCategory),
                               etaSquaredOf(byModel)};
}

} // namespace mkb::analysis
