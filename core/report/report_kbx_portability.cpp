// Builds the kbx-portability tables from the golden timing folders.
#include "core/report/report_kbx_portability.h"

#include "core/analysis/kbx_portability.h"
#include "core/io/kbx_golden.h"

#include <algorithm>
#include <set>

namespace mkb::report {

const char* const kKbxPublishedGpus[6] = {"4090", "5090", "a100", "h20", "h800", "l20"};

Result<std::vector<ReportTable>> kbxPortabilityTables(const std::filesystem::path& golden) {
    auto timings = readGoldenTimings(golden);
    if (!timings) {
        return timings.error();
    }
    std::set<std::string> ours;
    for (const analysis::GoldenTiming& timing : *timings) {
        if (std::find(std::begin(kKbxPublishedGpus), std::end(kKbxPublishedGpus), timing.gpu) ==
            std::end(kKbxPublishedGpus)) {
            ours.insert(timing.gpu);
        }
    }
    if (ours.size() > 1) {
        std::string names;
        for (const std::string& gpu : ours) {
            names += (names.empty() ? "" : ", ") + gpu;
        }
        return makeError(golden.string() + ": more than one folder besides KernelBench-X's six GPUs (" + names +
                         "); keep the one GPU to measure the others against");
    }
    const std::string reference = ours.empty() ? std::string() : *ours.begin();
    const analysis::PortabilitySummary summary = analysis::kbxPortability(*timings, reference);
    const std::string against = reference.empty() ? "—" : reference;

    ReportTable gpus{"kbx-portability",
                     "Eager time across GPUs: KernelBench-X's golden timings beside " +
                         (reference.empty() ? std::string("each other") : reference + "'s"),
                     {"GPU", "ops", "eager time / " + against + " (GM)", "95% low", "95% high",
                      "ops faster than " + against, "paper"},
                     {},
                     {},
                     {}};
    for (const analysis::GpuAgainstReference& row : summary.againstReference) {
        gpus.rows.push_back({textCell(row.gpu), countCell(row.ops), numberCell(row.ratioGeometricMean, 3),
                             row.ratioInterval ? numberCell(row.ratioInterval->low, 3) : nullCell(),
                             row.ratioInterval ? numberCell(row.ratioInterval->high, 3) : nullCell(),
                             countCell(row.fasterThanReference), textCell("")});
    }
    std::string widest = "no op timed on every GPU";
    if (summary.widest) {
        const analysis::PortableOp& op = summary.ops[*summary.widest];
        char text[64];
        std::snprintf(text, sizeof text, "%.2f", op.maxOverMin);
        widest = std::string("widest: ") + op.op + " " + text + "x (" + op.slowest + " over " + op.fastest + ")";
    }
    gpus.rows.push_back({textCell("max/min across all " + std::to_string(summary.gpus.size()) + " GPUs (GM)"),
                         countCell(summary.ops.size()), numberCell(summary.maxOverMinGeometricMean, 3),
                         summary.maxOverMinInterval ? numberCell(summary.maxOverMinInterval->low, 3) : nullCell(),
                         summary.maxOverMinInterval ? numberCell(summary.maxOverMinInterval->high, 3) : nullCell(),
                         textCell(widest), textCell("max/min speedup of one kernel across 6 GPUs: up to 21.4x")});
    gpus.footnotes = {
        "Each op at the largest input size every GPU timed (KernelBench-X's templates metrics/golden_metrics, its "
        "timings metrics/golden_results; ours from bench/kbx_golden_timing.py with the same clock, "
        "triton.testing.do_bench's median). Ratio below 1: that GPU runs eager faster than " +
            against +
            ". Intervals: 95% percentile bootstrap over the ops, seeded. The paper's figure is the spread of a "
            "generated kernel's speedup; this is the spread of eager time itself, the denominator of every speedup: "
            "golden timings of one GPU do not carry to another.",
        std::to_string(summary.partial.size()) + " ops lack a timing on some GPU at every common size and are left "
                                                 "out (kbx-portability-ops lists the ops kept)."};

    for (const analysis::IdenticalGpus& pair : summary.identical) {
        gpus.footnotes.push_back(pair.first + " and " + pair.second +
                                 " hold identical timings (every size, every ms) "
                                 "for " +
                                 std::to_string(pair.identicalOps) + " of the " + std::to_string(pair.sharedOps) +
                                 " ops both timed: one folder looks copied from the other, so the two count as one "
                                 "GPU's measurement there.");
    }
    std::vector<std::string> header{"op", "task", "input size"};
    for (const std::string& gpu : summary.gpus) {
        header.push_back(gpu + " ms");
    }
    for (const char* column : {"max/min", "fastest", "slowest"}) {
        header.push_back(column);
    }
    ReportTable ops{"kbx-portability-ops",
                    "Each op's eager time on every GPU, at the largest common input size",
                    header,
                    {},
                    {},
                    {}};
    for (const analysis::PortableOp& op : summary.ops) {
        std::vector<ReportCell> row{textCell(op.op), textCell(op.task), textCell(op.sizeKey)};
        for (const std::string& gpu : summary.gpus) {
            row.push_back(numberCell(std::optional<double>(op.msByGpu.at(gpu)), 4));
        }
        row.push_back(numberCell(std::optional<double>(op.maxOverMin), 2));
        row.push_back(textCell(op.fastest));
        row.push_back(textCell(op.slowest));
        ops.rows.push_back(std::move(row));
    }
    return std::vector<ReportTable>{std::move(gpus), std::move(ops)};
}

} // namespace mkb::report
