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

/// A two-sided confidence interval [low, high].
struct Interval {
    double low = 0;
    double high = 0;
};

/// Whether a summary computes its bootstrap intervals, its costly part, or leaves them unset for a caller that computes
/// them later (the workbench's overview, whose numbers show before their intervals): transferSummary's ΔGM interval,
/// groupMetrics' S and lift intervals, directionMatrix's both.
enum class SummaryInterval { Computed, Deferred };

/// Resamples of the percentile bootstraps below, and their confidence level (the grader's, mkbgrader/parent/stats.py).
inline constexpr int kBootstrapResamples = 1000;
inline constexpr double kBootstrapConfidence = 0.95;

/// Percentile-bootstrap interval of the geometric mean of positive values: each resample draws values.size() values
/// with replacement, and the interval is the (1−c)/2 and (1+c)/2 quantiles (linear, as quantile()) of the resampled
/// geometric means. Deterministic: the values are sorted and the resampling generator is seeded from their bits, so
/// the same values in any order give the same interval. nullopt with fewer than two values (one value carries no
/// spread: its interval would collapse to a point that claims a certainty it lacks) or when any value is not
/// positive and finite.
std::optional<Interval> geometricMeanBootstrapCi(std::vector<double> values, int resamples = kBootstrapResamples,
                                                 double confidence = kBootstrapConfidence);

/// Percentile-bootstrap intervals of the means of several statistics measured on the same items (items[i][k] is
/// statistic k of item i, e.g. a cell's base and skill attainment): each resample draws items.size() items with
/// replacement and keeps every item's statistics together, so a paired difference stays paired. The same resampler
/// as geometricMeanBootstrapCi: the items are sorted and the generator seeded from their bits, so the same items in
/// any order give the same intervals. Returns one interval per statistic (statistics of them); each is nullopt with
/// fewer than two items, or when an item does not hold statistics finite values.
std::vector<std::optional<Interval>> meanBootstrapCis(std::vector<std::vector<double>> items, std::size_t statistics,
                                                      int resamples = kBootstrapResamples,
                                                      double confidence = kBootstrapConfidence);

} // namespace mkb::analysis
