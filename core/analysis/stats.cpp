// Means, geometric means, shares and distributions over plain vectors; empty input gives nullopt, never NaN.
#include "core/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mkb::analysis {

std::optional<double> mean(const std::vector<double>& values) {
    if (values.empty()) {
        return std::nullopt;
    }
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

std::optional<double> geometricMean(const std::vector<double>& values) {
    if (values.empty()) {
        return std::nullopt;
    }
    double logSum = 0;
    for (double value : values) {
        if (!(value > 0) || !std::isfinite(value)) {
            return std::nullopt;
        }
        logSum += std::log(value);
    }
    return std::exp(logSum / static_cast<double>(values.size()));
}

std::optional<double> share(std::size_t part, std::size_t whole) {
    if (whole == 0) {
        return std::nullopt;
    }
    return static_cast<double>(part) / static_cast<double>(whole);
}

static double sortedQuantile(const std::vector<double>& sorted, double q) {
    const double position = q * static_cast<double>(sorted.size() - 1);
    const auto lower = static_cast<std::size_t>(std::floor(position));
    const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(lower);
    return sorted[lower] + fraction * (sorted[upper] - sorted[lower]);
}

std::optional<double> quantile(std::vector<double> values, double q) {
    if (values.empty()) {
        return std::nullopt;
    }
    std::sort(values.begin(), values.end());
    return sortedQuantile(values, std::clamp(q, 0.0, 1.0));
}

Distribution distributionOf(std::vector<double> values) {
    Distribution result;
    result.count = values.size();
    if (values.empty()) {
        return result;
    }
    std::sort(values.begin(), values.end());
    result.min = values.front();
    result.q1 = sortedQuantile(values, 0.25);
    result.median = sortedQuantile(values, 0.5);
    result.q3 = sortedQuantile(values, 0.75);
    result.max = values.back();
    result.mean = mean(values);
    return result;
}

} // namespace mkb::analysis
