// Eager time of KernelBench-X's ops side by side across GPUs, at the largest input size all of them timed.
#include "core/analysis/kbx_portability.h"

#include <algorithm>
#include <set>

namespace mkb::analysis {

PortabilitySummary kbxPortability(const std::vector<GoldenTiming>& timings, const std::string& reference) {
    PortabilitySummary summary;
    std::set<std::string> gpus;
    // op -> gpu -> size -> ms, and each op's sizes in the reference's order (else the first GPU's).
    std::map<std::string, std::map<std::string, std::map<std::string, double>>> byOp;
    std::map<std::string, std::vector<std::string>> sizeOrder;
    std::map<std::string, std::string> taskOf;
    for (const GoldenTiming& timing : timings) {
        gpus.insert(timing.gpu);
        byOp[timing.op][timing.gpu][timing.sizeKey] = timing.ms;
        if (!timing.task.empty()) {
            taskOf[timing.op] = timing.task;
        }
    }
    for (const std::string& gpu : gpus) {
        if (gpu != reference) {
            summary.gpus.push_back(gpu);
        }
    }
    const bool hasReference = gpus.count(reference) > 0;
    if (hasReference) {
        summary.gpus.push_back(reference);
    }
    const std::string& orderGpu = hasReference ? reference : summary.gpus.front();
    for (const GoldenTiming& timing : timings) {
        if (timing.gpu == orderGpu) {
            sizeOrder[timing.op].push_back(timing.sizeKey);
        }
    }
    for (const auto& [op, perGpu] : byOp) {
        std::optional<std::string> chosen;
        if (perGpu.size() == gpus.size()) {
            for (const std::string& size : sizeOrder[op]) {
                const bool everywhere = std::all_of(perGpu.begin(), perGpu.end(),
                                                    [&](const auto& entry) { return entry.second.count(size) > 0; });
                if (everywhere) {
                    chosen = size;
                }
            }
        }
        if (!chosen) {
            summary.partial.push_back(op);
            continue;
        }
        PortableOp row;
        row.op = op;
        row.task = taskOf.count(op) ? taskOf[op] : std::string();
        row.sizeKey = *chosen;
        double fastest = 0;
        double slowest = 0;
        for (const auto& [gpu, sizes] : perGpu) {
            const double ms = sizes.at(*chosen);
            row.msByGpu[gpu] = ms;
            if (row.fastest.empty() || ms < fastest) {
                fastest = ms;
                row.fastest = gpu;
            }
            if (row.slowest.empty() || ms > slowest) {
                slowest = ms;
                row.slowest = gpu;
            }
        }
        row.maxOverMin = fastest > 0 ? slowest / fastest : 0;
        summary.ops.push_back(std::move(row));
    }
    for (std::size_t i = 0; i < summary.gpus.size(); ++i) {
        for (std::size_t j = i + 1; j < summary.gpus.size(); ++j) {
            IdenticalGpus pair{summary.gpus[i], summary.gpus[j], 0, 0};
            for (const auto& [op, perGpu] : byOp) {
                const auto first = perGpu.find(pair.first);
                const auto second = perGpu.find(pair.second);
                if (first != perGpu.end() && second != perGpu.end()) {
                    ++pair.sharedOps;
                    pair.identicalOps += first->second == second->second;
                }
            }
            if (pair.identicalOps > 0) {
                summary.identical.push_back(pair);
            }
        }
    }
    std::vector<double> spreads;
    for (std::size_t i = 0; i < summary.ops.size(); ++i) {
        const PortableOp& row = summary.ops[i];
        if (row.maxOverMin > 0) {
            spreads.push_back(row.maxOverMin);
        }
        if (!summary.widest || row.maxOverMin > summary.ops[*summary.widest].maxOverMin) {
            summary.widest = i;
        }
    }
    summary.maxOverMinGeometricMean = geometricMean(spreads);
    summary.maxOverMinInterval = geometricMeanBootstrapCi(spreads);
    if (!hasReference) {
        return summary;
    }
    for (const std::string& gpu : summary.gpus) {
        if (gpu == reference) {
            continue;
        }
        GpuAgainstReference against;
        against.gpu = gpu;
        std::vector<double> ratios;
        for (const PortableOp& row : summary.ops) {
            const double theirs = row.msByGpu.at(gpu);
            const double ours = row.msByGpu.at(reference);
            if (theirs > 0 && ours > 0) {
                ratios.push_back(theirs / ours);
                against.fasterThanReference += theirs < ours;
            }
        }
        against.ops = ratios.size();
        against.ratioGeometricMean = geometricMean(ratios);
        against.ratioInterval = geometricMeanBootstrapCi(ratios);
        summary.againstReference.push_back(std::move(against));
    }
    return summary;
}

} // namespace mkb::analysis
