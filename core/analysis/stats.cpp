// Means, geometric means, shares and distributions over plain vectors; empty input gives nullopt, never NaN.
#include "core/analysis/stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace mkb::analysis {

std::optional<double> mean(const std::vector<double>& values) {
    if (values.empty()) {
        return std::nullopt;
    }
    // Summed in long double, so values near the largest double (an absurd agent time) do not overflow on the way.
    const long double total = std::accumulate(values.begin(), values.end(), 0.0L);
    return static_cast<double>(total / static_cast<long double>(values.size()));
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

namespace {

__extension__ typedef unsigned __int128 Wide; // GCC and Clang's 128-bit product, for below()

/// SplitMix64: a small generator with a fixed, documented sequence on every platform (the standard library's
/// distributions are not specified bit for bit, and a report must be reproducible anywhere).
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, bound) without modulo bias (bound > 0): the high word of draw × bound, redrawn in the rare
    /// case its low word falls below 2^64 mod bound (Lemire's method; a division only then, not per draw: the
    /// overview's ΔGM intervals draw resamples × cells indices and spent most of it dividing).
    std::size_t below(std::size_t bound) {
        const std::uint64_t limit = std::uint64_t(bound);
        Wide product = Wide(next()) * limit;
        std::uint64_t low = std::uint64_t(product);
        if (low < limit) {
            const std::uint64_t threshold = (0 - limit) % limit;
            while (low < threshold) {
                product = Wide(next()) * limit;
                low = std::uint64_t(product);
            }
        }
        return std::size_t(product >> 64);
    }

private:
    std::uint64_t state_;
};

/// FNV-1a over the items' count and their values' bit patterns, item by item.
std::uint64_t seedFrom(const std::vector<std::vector<double>>& items) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    const auto mix = [&hash](std::uint64_t word) {
        for (int byte = 0; byte < 8; ++byte) {
            hash ^= (word >> (8 * byte)) & 0xffU;
            hash *= 0x100000001b3ULL;
        }
    };
    mix(items.size());
    for (const std::vector<double>& item : items) {
        for (double value : item) {
            mix(std::bit_cast<std::uint64_t>(value));
        }
    }
    return hash;
}

/// The one resampler of the percentile bootstraps: for each statistic k, the means of items[·][k] over `resamples`
/// resamples of the items (with replacement; a draw keeps an item whole), each column sorted ascending. The items
/// are at least one, each holding `statistics` values, in the sorted order the seed was taken in. A draw only counts
/// which distinct item it hit, and the sums are taken from the counts: the ladder's cells take a few dozen distinct
/// values, so a resample of 30,000 cells costs 30,000 increments rather than 30,000 × statistics additions.
std::vector<std::vector<double>> sortedResampledMeans(const std::vector<std::vector<double>>& items,
                                                      std::size_t statistics, int resamples, std::uint64_t seed) {
    std::vector<const std::vector<double>*> distinct;
    std::vector<std::uint32_t> distinctOf; // item position -> its distinct item
    distinctOf.reserve(items.size());
    for (const std::vector<double>& item : items) {
        if (distinct.empty() || *distinct.back() != item) {
            distinct.push_back(&item);
        }
        distinctOf.push_back(std::uint32_t(distinct.size() - 1));
    }
    SplitMix64 generator(seed);
    std::vector<std::vector<double>> means(statistics);
    for (std::vector<double>& column : means) {
        column.reserve(std::size_t(resamples));
    }
    const std::size_t n = items.size();
    std::vector<std::size_t> hits(distinct.size());
    for (int resample = 0; resample < resamples; ++resample) {
        std::fill(hits.begin(), hits.end(), 0);
        for (std::size_t draw = 0; draw < n; ++draw) {
            ++hits[distinctOf[generator.below(n)]];
        }
        for (std::size_t k = 0; k < statistics; ++k) {
            double sum = 0;
            for (std::size_t d = 0; d < distinct.size(); ++d) {
                sum += double(hits[d]) * (*distinct[d])[k];
            }
            means[k].push_back(sum / double(n));
        }
    }
    for (std::vector<double>& column : means) {
        std::sort(column.begin(), column.end());
    }
    return means;
}

Interval percentileInterval(const std::vector<double>& sorted, double confidence) {
    const double tail = (1 - std::clamp(confidence, 0.0, 1.0)) / 2;
    return Interval{sortedQuantile(sorted, tail), sortedQuantile(sorted, 1 - tail)};
}

} // namespace

std::optional<Interval> geometricMeanBootstrapCi(std::vector<double> values, int resamples, double confidence) {
    if (values.size() < 2 || resamples < 1) {
        return std::nullopt;
    }
    for (double value : values) {
        if (!(value > 0) || !std::isfinite(value)) {
            return std::nullopt;
        }
    }
    std::sort(values.begin(), values.end());
    std::vector<std::vector<double>> items;
    items.reserve(values.size());
    for (double value : values) {
        items.push_back({value});
    }
    const std::uint64_t seed = seedFrom(items); // from the values themselves; the draws average their logarithms
    for (std::vector<double>& item : items) {
        item[0] = std::log(item[0]);
    }
    std::vector<double> means = std::move(sortedResampledMeans(items, 1, resamples, seed)[0]);
    for (double& logMean : means) {
        logMean = std::exp(logMean); // exp keeps the order: these are the sorted resampled geometric means
    }
    return percentileInterval(means, confidence);
}

std::vector<std::optional<Interval>> meanBootstrapCis(std::vector<std::vector<double>> items, std::size_t statistics,
                                                      int resamples, double confidence) {
    std::vector<std::optional<Interval>> result(statistics);
    if (items.size() < 2 || resamples < 1) {
        return result;
    }
    for (const std::vector<double>& item : items) {
        if (item.size() != statistics ||
            !std::all_of(item.begin(), item.end(), [](double value) { return std::isfinite(value); })) {
            return result;
        }
    }
    std::sort(items.begin(), items.end());
    const std::vector<std::vector<double>> means = sortedResampledMeans(items, statistics, resamples, seedFrom(items));
    for (std::size_t k = 0; k < statistics; ++k) {
        result[k] = percentileInterval(means[k], confidence);
    }
    return result;
}

} // namespace mkb::analysis
