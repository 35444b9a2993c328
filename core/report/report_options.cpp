// `mkb report`'s option table and what a parsed command line asks for (report_options.h).
#include "core/report/report_options.h"

#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"
#include "core/vocabulary/boundary.h"

#include <algorithm>
#include <limits>

namespace mkb::report {
namespace {

std::string thresholdsText(const std::vector<double>& thresholds) {
    std::string text;
    for (double threshold : thresholds) {
        text += (text.empty() ? "" : ",") + optionNumberText(threshold);
    }
    return text;
}

} // namespace

const OptionTable& reportOptionTable() {
    static const OptionTable table = {
        pathOption("store", "PATH", "the project store; must exist")
            .defaultSaid("$MKB_STORE, else the user's data folder"),
        textOption("format", "FMT", "md, csv (RFC 4180), latex (booktabs; needs \\usepackage{booktabs}) or json")
            .withDefault("md"),
        pathOption("output", "FILE",
                   "write there instead of standard output: atomically (temporary file + rename), through a symbolic "
                   "link to its target; a directory, FIFO, device, the store itself or any SQLite database, -wal or "
                   "-shm (by its first bytes) is refused (exit 3)"),
        textOption("split", "S",
                   "rows per overall, direction, family, with_skill, source_verdict, model, category (the problem's "
                   "KernelBench-X category from MKB_META; \"uncategorised\" when it names none) or boundary (the "
                   "implementation boundary of the verdicts)")
            .withDefault("overall"),
        textOption("metrics", "SET[,SET...]", "the metric sets above, comma-separated")
            .defaultSaid("ladder,coverage,transfer"),
        textOption("model", "M", "only this model's trials"),
        textOption("direction", "D",
                   "only cell-replicates of direction D (e.g. triton2cuda) and the attempts of its three arms"),
        textOption("family", "F", "only problems of this family"),
        textOption("problems", "GLOB", "only problems whose \"NN_slug\" or slug matches the shell glob"),
        textOption("boundary", "B",
                   "only verdicts graded under implementation boundary B: mkb, strict, or legacy (verdicts older than "
                   "boundaries). The notes name the boundaries every table covers; a cell-replicate whose arms were "
                   "graded under different boundaries is never compared (\"not comparable\", counted); --split "
                   "boundary gives each boundary its rows"),
        pathOption("golden", "DIR", "the golden timings kbx-portability reads: one folder per GPU of <op>.json files"),
        numberOption("delta", "D", "neutral band δ of the transfer outcome")
            .withDefault(analysis::AnalysisSettings{}.delta)
            .within(0, std::numeric_limits<double>::max()),
        textOption("thresholds", "LIST", "ladder thresholds t of R@t")
            .defaultSaid(thresholdsText(analysis::AnalysisSettings{}.thresholds)),
        flagOption("unclipped", "effective speedup without clipping at 1 (ΔGM, paired ratios)"),
        textOption("timing", "RULE",
                   "paired: two passing kernels of a re-timed cell are judged on their paired ratio and its 95% CI, "
                   "the others by the unpaired rule; unpaired: MetaKernelBench's rule on the separate gradings. Each "
                   "outcome table says which rule it used and how many cells had paired data. The ladder under paired "
                   "ranks a cell's base and skill on its one re-timing (a crossing of t within noise is a tie, "
                   "counted) and says how many cells fell back to their gradings' speedups; under unpaired it is "
                   "MetaKernelBench's ladder (docs/metrics.md)")
            .withDefault("paired"),
    };
    return table;
}

Result<ReportOptions> reportOptionsFrom(const ParsedOptions& parsed) {
    ReportOptions options;
    if (auto split = parsed.value("split")) {
        auto read = parseReportSplit(*split);
        if (!read) {
            return read.error();
        }
        options.split = *read;
    }
    if (auto metrics = parsed.value("metrics")) {
        auto read = parseMetricSets(*metrics);
        if (!read) {
            return read.error();
        }
        options.metrics = std::move(*read);
    }
    if (auto thresholds = parsed.value("thresholds")) {
        auto read = parseThresholds(*thresholds);
        if (!read) {
            return read.error();
        }
        options.settings.thresholds = std::move(*read);
    }
    options.settings.delta = parsed.number("delta");
    options.settings.clipEffectiveSpeedup = !parsed.flag("unclipped");
    if (auto timing = parsed.value("timing")) {
        auto read = parseTimingRule(*timing);
        if (!read) {
            return read.error();
        }
        options.settings.timing = *read;
    }
    options.model = parsed.value("model");
    options.direction = parsed.value("direction");
    options.family = parsed.value("family");
    options.problems = parsed.value("problems");
    options.golden = parsed.value("golden");
    const bool portability =
        std::find(options.metrics.begin(), options.metrics.end(), MetricSet::KbxPortability) != options.metrics.end();
    if (portability != options.golden.has_value()) {
        return makeError(portability ? "--metrics kbx-portability needs --golden DIR (KernelBench-X's "
                                       "metrics/golden_results, with this GPU's folder from "
                                       "bench/kbx_golden_timing.py)"
                                     : "--golden is read only by --metrics kbx-portability");
    }
    if (auto boundary = parsed.value("boundary")) {
        if (*boundary != kBoundaryLegacy) {
            auto read = parseBoundary(*boundary);
            if (!read) {
                return makeError(read.error().message + "; or legacy");
            }
        }
        options.boundary = *boundary;
    }
    if (options.direction && !analysis::parseSkillArm(*options.direction + "_skill")) {
        return makeError("--direction '" + *options.direction + "' is not a direction like triton2cuda");
    }
    return options;
}

Result<ReportOptions> reportOptionsFromWords(const std::vector<std::string>& words) {
    auto parsed = parseOptions(reportOptionTable(), words);
    if (!parsed) {
        return parsed.error();
    }
    if (!parsed->positionals.empty()) {
        return makeError("report takes no positional argument (got '" + parsed->positionals[0] +
                         "'); see mkb report --help");
    }
    if (parsed->help) {
        return makeError("--help is not a table's argument");
    }
    for (const std::string& name : kReportDestinationOptions) {
        if (parsed->given(name)) {
            return makeError("--" + name + " is set by the paper manifest, not by a table's arguments");
        }
    }
    return reportOptionsFrom(*parsed);
}

} // namespace mkb::report
