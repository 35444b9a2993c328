// Token, cost and time usage per arm (DESIGN §8): counts, sums that turn null when any counted record lacks a number.
#pragma once

#include "core/analysis/attempt_set.h"
#include "core/analysis/comparison.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// Usage of one arm. Like MetaKernelBench, only attempts that carry a usage record (any field known) are counted;
/// each sum is nullopt when any counted attempt lacks that number (or none was counted) or when it overflows (then
/// `overflowed` names it), and agentSeconds is the mean over the counted attempts that know it.
struct ArmUsage {
    std::size_t attempts = 0; // attempts of the arm, with or without usage
    std::size_t trials = 0;   // attempts counted: those carrying a usage record
    std::optional<std::int64_t> inputTokens;
    std::optional<std::int64_t> cacheTokens;
    std::optional<std::int64_t> outputTokens;
    std::optional<double> costUsd;
    std::optional<double> meanAgentSeconds;
    // Sums too large for their type (tokens past 2^63 − 1, cost past the largest double), by results.json key
    // ("n_input_tokens", "cost_usd", ...). Their sums are nullopt: a total is never shown wrapped or as "unknown".
    std::vector<std::string> overflowed;
};

/// True when any field of the usage is known.
bool carriesUsage(const Usage& usage);

/// Usage per arm name over the attempts given, each counted once.
std::map<std::string, ArmUsage> usageByArm(const AttemptSet& attempts);

/// Usage per arm name over the distinct attempts of the comparisons (a solo serves as source in one direction and base
/// in the other but counts once), resolved or not.
std::map<std::string, ArmUsage> usageByArm(const std::vector<Comparison>& comparisons);

} // namespace mkb::analysis
