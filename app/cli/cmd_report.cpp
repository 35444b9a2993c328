// `mkb report`: the metrics of a store as Markdown, CSV, LaTeX or JSON tables, for any split, filter and metric set.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/report/report_model.h"
#include "core/report/report_options.h"
#include "core/report/report_writers.h"
#include "core/store/store.h"
#include "core/util/output_file.h"
#include "core/util/paths.h"

#include <iostream>

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

std::string reportHelp() {
    return verbHelp(kReportIntro, report::reportOptionTable(), kReportRest);
}

int runReport(const std::vector<std::string>& rawArgs) {
    auto args = parseOptions(report::reportOptionTable(), rawArgs);
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
    auto options = report::reportOptionsFrom(*args);
    if (!options) {
        return fail(kExitUsage, options.error().message);
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
    auto built = report::buildReportFromStore(**store, *options);
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
