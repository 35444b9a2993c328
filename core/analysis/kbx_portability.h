// Eager portability across GPUs (KernelBench-X's golden timings beside ours, DESIGN §8): how far one task's eager
// time moves from one GPU to another at the same input size.
#pragma once

#include "core/analysis/stats.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// One eager timing of a KernelBench-X op on one GPU at one input size.
struct GoldenTiming {
    std::string gpu;     // the golden folder's name: "4090", "h800", "h200"
    std::string op;      // the golden file's name: "Lion"
    std::string task;    // "Optimizer/Lion" where the timing names it, "" otherwise
    std::string sizeKey; // the input size as canonical JSON, equal across GPUs for equal inputs
    double ms = 0;
};

/// One op at the largest input size every GPU timed.
struct PortableOp {
    std::string op;
    std::string task;
    std::string sizeKey;
    std::map<std::string, double> msByGpu;
    double maxOverMin = 1; // the slowest GPU's time over the fastest's
    std::string fastest;
    std::string slowest;
};

/// One GPU against the reference GPU over the ops both timed.
struct GpuAgainstReference {
    std::string gpu;
    std::size_t ops = 0;
    std::optional<double> ratioGeometricMean; // of this GPU's eager time / the reference's
    std::optional<Interval> ratioInterval;    // its 95% percentile bootstrap over the ops, seeded
    std::size_t fasterThanReference = 0;      // ops this GPU runs faster than the reference
};

/// Two GPUs whose timing files hold the very same numbers for some ops: every size, every ms equal.
struct IdenticalGpus {
    std::string first;
    std::string second;
    std::size_t identicalOps = 0; // ops whose timings are equal at every size
    std::size_t sharedOps = 0;    // ops both GPUs timed
};

struct PortabilitySummary {
    std::vector<std::string> gpus;                     // every GPU with a timing, the reference last
    std::vector<PortableOp> ops;                       // ops every GPU timed at a common size, by op name
    std::vector<std::string> partial;                  // ops some GPU lacks at every common size, by name
    std::vector<GpuAgainstReference> againstReference; // every GPU but the reference, in gpus order
    std::optional<double> maxOverMinGeometricMean;     // over ops
    std::optional<Interval> maxOverMinInterval;
    std::optional<std::size_t> widest;    // the index in ops of the op with the largest max/min
    std::vector<IdenticalGpus> identical; // GPU pairs with at least one identical op, in gpus order
};

/// Puts the timings of each op side by side at the largest input size all GPUs timed (largest: the last such size
/// in the reference GPU's order, which is the template's ascending order). An op is kept only when every GPU of the
/// timings has it at a common size; the others are listed as partial. reference names the GPU the others are
/// measured against ("h200"); without timings of it the summary holds no againstReference rows.
PortabilitySummary kbxPortability(const std::vector<GoldenTiming>& timings, const std::string& reference);

} // namespace mkb::analysis
