// `mkb report`: the metrics of a store as Markdown, CSV, LaTeX or JSON tables, for any split, filter and metric set.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/analysis/comparison.h"
#include "core/analysis/settings.h"
#include "core/report/report_model.h"
#include "core/report/report_writers.h"
#include "core/store/store.h"
#include "core/util/output_file.h"
#include "core/util/paths.h"
#include "core/vocabulary/boundary.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>

namespace mkb::cli {
namespace {

const char* const kReportIntro = R"(usage: mkb report [--store PATH] [--format md|csv|latex|json] [--output FILE]
                  [--split overall|direction|family|with_skill|source_verdict|model|category|boundary]
                  [--metrics SET[,SET...]] [--model M] [--direction D] [--family F] [--problems GLOB]
                  [--boundary mkb|strict|legacy] [--golden DIR]
                  [--delta D] [--thresholds 0,0.5,1,2,4] [--unclipped] [--timing paired|unpaired]

Prints the metrics of the project store (docs/metrics.md defines each one) as tables. The store is opened read-only:
it is never migrated, and its write-ahead log is read but never applied, checkpointed or deleted (mkb db recover).

metric sets (--metrics, comma-separated; default ladder,coverage,transfer):
  ladder       R@t and S for base and skill, and the lift, with 95% bootstrap intervals over the cells
  coverage     share of resolved cell-replicates whose source passed / wrote a skill
  transfer     helped (T), neutral, harmed (H) and ΔGM of the paired ratios
  standing     transfer outcomes by source standing (above, same, below)
  reverse      for each outcome a→b, the outcome b→a on the same model, problem and replicate
  usage        attempts, tokens, cost and mean agent time per arm
  kbx          call / execution / outlier accuracy, quantization pass, fast_p, GM speedup, IOU/MFU, η² of
               correctness by KernelBench-X category, family and model
  refinement   rates by submission index, rescued attempts, fixing-edit sizes (reads submissions)
  portability  kernels graded on several devices and their max/min speedup (reads submissions)
  directions   the direction matrix: rows the source DSL, columns the target DSL, each cell the S lift with its
               95% interval and how many resolved comparisons were helped and harmed; then one row per ordered
               pair with every number (one matrix per group under --split model, family, ...)
  kbx-paper    KernelBench-X's findings from the data, each with n and a 95% interval beside the paper's number:
               η² by category and method, compile / correct / speedup per round, rescued against correct from the
               start, correct kernels slower than eager (reads submissions)
  kbx-agreement  our verdicts from mkb regrade against the rounds' own (an imported KernelBench-X corpus's), per
               boundary and category: correct shares with 95% intervals, agreement, and our speedup over theirs
  kbx-events   KernelBench-X's claimed speedup increases and regressions of a refinement, each judged by the paired
               re-timing of its before and after kernels (mkb retime --transitions): held, within noise, reversed
  kbx-portability  eager time across GPUs at the same input size: KernelBench-X's golden timings on its six GPUs
               beside ours (--golden DIR: its metrics/golden_results with a folder bench/kbx_golden_timing.py
               wrote for this GPU); each GPU's time against ours with a 95% interval, the max/min spread per op
  all          every set above but directions and the kbx-paper, -agreement, -events and -portability sets, so that reports made
               with all stay as they were (--metrics all,directions adds one)

)";

const char* const kReportRest =
    R"(exit codes: 0 printed, 2 bad command line, 3 the output file cannot be written, 4 the store (or the golden timings)
cannot be opened or read
)";

std::string thresholdsText(const std::vector<double>& thresholds) {
    std::string text;
    for (double threshold : thresholds) {
        text += (text.empty() ? "" : ",") + optionNumberText(threshold);
    }
    return text;
}

const OptionTable& reportOptions() {
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

std::string reportHelp() {
    return verbHelp(kReportIntro, reportOptions(), kReportRest);
}

int runReport(const std::vector<std::string>& rawArgs) {
    auto args = parseOptions(reportOptions(), rawArgs);
    if (!args) {
        return fail(kExitUsage, args.error().message);
    }
    if (args->help) {
        std::cout << reportHelp();
        return kExitOk;
    }
    if (!args->positionals.empty()) {
        return fail(kExitUsage,
                    "report takes no positional argument (got '" + args->positionals[0] + "'); see mkb report --help");
    }
    auto format = report::parseReportFormat(args->text("format"));
    if (!format) {
        return fail(kExitUsage, format.error().message);
    }
    report::ReportOptions options;
    if (auto split = args->value("split")) {
        auto parsed = report::parseReportSplit(*split);
        if (!parsed) {
            return fail(kExitUsage, parsed.error().message);
        }
        options.split = *parsed;
    }
    if (auto metrics = args->value("metrics")) {
        auto parsed = report::parseMetricSets(*metrics);
        if (!parsed) {
            return fail(kExitUsage, parsed.error().message);
        }
        options.metrics = std::move(*parsed);
    }
    if (auto thresholds = args->value("thresholds")) {
        auto parsed = report::parseThresholds(*thresholds);
        if (!parsed) {
            return fail(kExitUsage, parsed.error().message);
        }
        options.settings.thresholds = std::move(*parsed);
    }
    options.settings.delta = args->number("delta");
    options.settings.clipEffectiveSpeedup = !args->flag("unclipped");
    if (auto timing = args->value("timing")) {
        auto parsed = report::parseTimingRule(*timing);
        if (!parsed) {
            return fail(kExitUsage, parsed.error().message);
        }
        options.settings.timing = *parsed;
    }
    options.model = args->value("model");
    options.direction = args->value("direction");
    options.family = args->value("family");
    options.problems = args->value("problems");
    options.golden = args->value("golden");
    const bool portability = std::find(options.metrics.begin(), options.metrics.end(),
                                       report::MetricSet::KbxPortability) != options.metrics.end();
    if (portability != options.golden.has_value()) {
        return fail(kExitUsage, portability ? "--metrics kbx-portability needs --golden DIR (KernelBench-X's "
                                              "metrics/golden_results, with this GPU's folder from "
                                              "bench/kbx_golden_timing.py)"
                                            : "--golden is read only by --metrics kbx-portability");
    }
    if (auto boundary = args->value("boundary")) {
        if (*boundary != kBoundaryLegacy) {
            auto parsed = parseBoundary(*boundary);
            if (!parsed) {
                return fail(kExitUsage, parsed.error().message + "; or legacy");
            }
        }
        options.boundary = *boundary;
    }
    if (options.direction && !analysis::parseSkillArm(*options.direction + "_skill")) {
        return fail(kExitUsage, "--direction '" + *options.direction + "' is not a direction like triton2cuda");
    }

    const std::filesystem::path storePath = args->value("store").value_or(defaultStorePath().string());
    const OutputRules outputRules{"--output", storeFiles(storePath)};
    if (auto output = args->value("output")) {
        if (Status writable = checkOutputPath(*output, outputRules); !writable) {
            return fail(kExitBadInput, writable.error().message);
        }
    }
    auto store = Store::open(storePath, OpenMode::ReadExisting);
    if (!store) {
        return fail(kExitStore, store.error().message);
    }
    auto built = report::buildReportFromStore(**store, options);
    if (!built) {
        return fail(kExitStore, built.error().message);
    }
    const std::string text = report::renderReport(*built, *format);
    if (auto output = args->value("output")) {
        if (Status written = writeOutputFile(*output, text, outputRules); !written) {
            return fail(kExitBadInput, written.error().message);
        }
        return kExitOk;
    }
    std::cout << text;
    std::cout.flush();
    return kExitOk;
}

const bool registered = registerCommand(
    {"report", "print the metrics of a store as Markdown, CSV, LaTeX or JSON tables", reportHelp(), runReport});

} // namespace
} // namespace mkb::cli
