// Turning a problem's MKB_META literal (as JSON) into ProblemMeta, with every wrong key or value named.
#pragma once

#include "core/records/problem.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// The keys MKB_META may hold.
const std::vector<std::string>& knownMetaKeys();

/// The precision variants MKB_META["precision"] may name (KernelBench-X's: fp32, fp16, bf16, int8, w8a8, w4a16).
const std::vector<std::string>& precisionVariants();

/// The KernelBench-X categories MKB_META["category"] may name, in alphabetical order.
const std::vector<std::string>& kernelBenchXCategories();

/// How a problem's category reads in tables: its name, or "uncategorised" when MKB_META names none.
std::string categoryOrUncategorised(const std::string& category);

/// The KernelBench-X category a problem file's MKB_META names, read from its text without running it; "" when the
/// file has no MKB_META, names no category or names one that is not allowed (the catalog reports those).
std::string categoryFromSource(std::string_view source);

/// Fills `meta` from the MKB_META value; returns one "line N: ..." text per problem (empty when all is well).
/// `line` is the line of the MKB_META assignment, used in the messages.
std::vector<std::string> readProblemMeta(const nlohmann::json& value, int line, ProblemMeta& meta);

} // namespace mkb
