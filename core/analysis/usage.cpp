// Sums and means of usage per arm, null-propagating like MetaKernelBench's results.json.
#include "core/analysis/usage.h"

#include "core/analysis/stats.h"

#include <set>
#include <tuple>

namespace mkb::analysis {

bool carriesUsage(const Usage& usage) {
    return usage.inputTokens || usage.cacheTokens || usage.outputTokens || usage.costUsd || usage.agentSeconds;
}

namespace {

template <typename T>
std::optional<T> nullPropagatingSum(const std::vector<const Usage*>& usages, std::optional<T> Usage::*field) {
    if (usages.empty()) {
        return std::nullopt;
    }
    T total{};
    for (const Usage* usage : usages) {
        if (!(usage->*field)) {
            return std::nullopt;
        }
        total += *(usage->*field);
    }
    return total;
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
    result.inputTokens = nullPropagatingSum(counted, &Usage::inputTokens);
    result.cacheTokens = nullPropagatingSum(counted, &Usage::cacheTokens);
    result.outputTokens = nullPropagatingSum(counted, &Usage::outputTokens);
    result.costUsd = nullPropagatingSum(counted, &Usage::costUsd);
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
