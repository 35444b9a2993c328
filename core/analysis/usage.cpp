// Sums and means of usage per arm, null-propagating like MetaKernelBench's results.json.
#include "core/analysis/usage.h"

#include "core/analysis/stats.h"

#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <type_traits>

namespace mkb::analysis {

bool carriesUsage(const Usage& usage) {
    return usage.inputTokens || usage.cacheTokens || usage.outputTokens || usage.costUsd || usage.agentSeconds;
}

namespace {

/// Sums without wrapping: integers are added with an overflow check, doubles in long double, so a total past the
/// field's range sets `overflowed` (and is nullopt), never a wrapped or infinite number. nullopt too when no usage
/// was counted or a counted one lacks the field.
template <typename T>
std::optional<T> nullPropagatingSum(const std::vector<const Usage*>& usages, std::optional<T> Usage::*field,
                                    bool& overflowed) {
    overflowed = false;
    if (usages.empty()) {
        return std::nullopt;
    }
    std::conditional_t<std::is_integral_v<T>, T, long double> total{};
    for (const Usage* usage : usages) {
        if (!(usage->*field)) {
            return std::nullopt;
        }
        if constexpr (std::is_integral_v<T>) {
            if (__builtin_add_overflow(total, *(usage->*field), &total)) {
                overflowed = true;
                return std::nullopt;
            }
        } else {
            total += *(usage->*field);
        }
    }
    if constexpr (!std::is_integral_v<T>) {
        if (!(std::fabs(total) <= static_cast<long double>(std::numeric_limits<T>::max()))) {
            overflowed = true;
            return std::nullopt;
        }
    }
    return static_cast<T>(total);
}

ArmUsage armUsage(const std::vector<const Attempt*>& attempts) {
    ArmUsage result;
    result.attempts = attempts.size();
    std::vector<const Usage*> counted;
    std::vector<double> agentSeconds;
    for (const Attempt* attempt : attempts) {
        if (!carriesUsage(attempt->usage)) {
            continue;
        }
        counted.push_back(&attempt->usage);
        if (attempt->usage.agentSeconds) {
            agentSeconds.push_back(*attempt->usage.agentSeconds);
        }
    }
    result.trials = counted.size();
    const auto sum = [&](auto field, const char* key) {
        bool overflowed = false;
        auto total = nullPropagatingSum(counted, field, overflowed);
        if (overflowed) {
            result.overflowed.emplace_back(key);
        }
        return total;
    };
    result.inputTokens = sum(&Usage::inputTokens, "n_input_tokens");
    result.cacheTokens = sum(&Usage::cacheTokens, "n_cache_tokens");
    result.outputTokens = sum(&Usage::outputTokens, "n_output_tokens");
    result.costUsd = sum(&Usage::costUsd, "cost_usd");
    result.meanAgentSeconds = mean(agentSeconds);
    return result;
}

std::map<std::string, ArmUsage> usageOf(const std::vector<const Attempt*>& attempts) {
    std::map<std::string, std::vector<const Attempt*>> byArm;
    for (const Attempt* attempt : attempts) {
        byArm[attempt->arm].push_back(attempt);
    }
    std::map<std::string, ArmUsage> result;
    for (const auto& [arm, members] : byArm) {
        result.emplace(arm, armUsage(members));
    }
    return result;
}

} // namespace

std::map<std::string, ArmUsage> usageByArm(const AttemptSet& attempts) {
    std::vector<const Attempt*> pointers;
    for (const Attempt& attempt : attempts) {
        pointers.push_back(&attempt);
    }
    return usageOf(pointers);
}

std::map<std::string, ArmUsage> usageByArm(const std::vector<Comparison>& comparisons) {
    // The coordinate identifies a trial even when fixtures leave trial ids at 0.
    std::set<std::tuple<std::string, int, int, std::string>> seen;
    std::vector<const Attempt*> distinct;
    for (const Comparison& comparison : comparisons) {
        for (const std::shared_ptr<const Attempt>* arm : {&comparison.source, &comparison.base, &comparison.skill}) {
            if (*arm && seen.insert({(*arm)->model, (*arm)->problemNumber, (*arm)->replicate, (*arm)->arm}).second) {
                distinct.push_back(&**arm);
            }
        }
    }
    return usageOf(distinct);
}

} // namespace mkb::analysis
