// Small statistics shared by the metrics: means, geometric means, shares and five-number distributions.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace mkb::analysis {

/// min, quartiles, median, max, mean and count of a sample; every statistic is nullopt for an empty sample.
/// Quartiles interpolate linearly between order statistics (position p·(n−1), NumPy's default).
struct Distribution {
    std::size_t count = 0;
    std::optional<double> min;
    std::optional<double> q1;
    std::optional<double> median;
    std::optional<double> q3;
    std::optional<double> max;
    std::optional<double> mean;
};

std::optional<double> mean(const std::vector<double>& values);
/// exp(mean(log v)); nullopt when empty or when any value is not positive.
std::optional<double> geometricMean(const std::vector<double>& values);
/// part / whole, nullopt when whole is 0.
std::optional<double> share(std::size_t part, std::size_t whole);
/// Linear-interpolation quantile q ∈ [0,1] of a sample; nullopt when empty.
std::optional<double> quantile(std::vector<double> values, double q);
Distribution distributionOf(std::vector<double> values);

} // namespace mkb::analysis
