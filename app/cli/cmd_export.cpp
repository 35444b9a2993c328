// `mkb export`: MetaKernelBench-compatible results.json per model, and the repair-pairs JSONL dataset.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/io/export_models.h"
#include "core/io/mkb_results_export.h"
#include "core/io/repair_pairs.h"
#include "core/report/report_model.h"
#include "core/store/store.h"
#include "core/util/output_file.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <iostream>
#include <map>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kExportIntro =
    R"(usage: mkb export results-json [--store PATH] [--model M] [--output FILE|DIR] [--timing paired|unpaired]
       mkb export repair-pairs [--store PATH] [--model M] [--output FILE.jsonl]

results-json  writes MetaKernelBench's results.json for one model: legend, model, overall (n_cells,
              n_cell_replicates, n_resolved, coverage, base/skill/lift ladders R@t and S, with_skill,
              by_source_verdict, usage per arm, by_direction, by_category) and cells with their replicates' records.
              With one model in the store --model may be left out. With several and no --model, --output names a
              folder and each model is written to DIR/<model>/results.json, where <model> keeps letters, digits,
              '-', '.' and '_' and turns the rest into '_' ("." and ".." become "model"); when two models would
              share a folder (org/m and org_m), nothing is written and the error names both (exit 3).
              Its "timing" key (ours, not MetaKernelBench's) names the rule the ladders were ranked by and how many
              cells were ranked on a paired re-timing, as mkb report's ladder says.
repair-pairs  writes one JSON object per line for every pair of consecutive submissions in one attempt where a
              failing kernel became correct: model, problem, family, dsl, arm, coordinate, before/after index and
              source, failure_report (stage, error, mismatch, full verdict), fix_changed_line_share, fix_kind
              (local or structural).

)";

const char* const kExportRest =
    R"(The store is opened read-only: never migrated, its write-ahead log read but never applied (mkb db recover --help).

exit codes: 0 written, 2 bad command line, 3 the output cannot be written or the model is unknown,
            4 the store cannot be opened or read
)";

const OptionTable& exportOptions() {
    static const OptionTable table = {
        pathOption("store", "PATH", "the project store; must exist")
            .defaultSaid("$MKB_STORE, else the user's data folder"),
        textOption("model", "M", "only this model"),
        textOption("timing", "RULE",
                   "results-json: paired (a cell's base and skill ranked on its paired re-timing, cells without one "
                   "on their verdicts) or unpaired (MetaKernelBench's rule: each arm's own verdict), docs/metrics.md")
            .defaultSaid("paired"),
        pathOption("output", "PATH",
                   "write there instead of standard output: atomically (temporary file + rename), through a symbolic "
                   "link to its target; a directory, FIFO, device, the store itself or any SQLite database, -wal or "
                   "-shm (by its first bytes) is refused (exit 3)"),
    };
    return table;
}

std::string exportHelp() {
    return verbHelp(kExportIntro, exportOptions(), kExportRest);
}

int writeOrPrint(const std::optional<std::string>& output, const std::string& text, const OutputRules& rules) {
    if (output) {
        if (Status written = writeOutputFile(*output, text, rules); !written) {
            return fail(kExitBadInput, written.error().message);
        }
        return kExitOk;
    }
    std::cout << text;
    std::cout.flush();
    return kExitOk;
}

int exportResultsJson(Store& store, const ParsedOptions& args, const OutputRules& rules) {
    analysis::AnalysisSettings settings;
    if (auto timing = args.value("timing")) {
        auto parsed = report::parseTimingRule(*timing);
        if (!parsed) {
            return fail(kExitUsage, parsed.error().message);
        }
        settings.timing = *parsed;
    }
    std::vector<std::string> models;
    if (auto model = args.value("model")) {
        models.push_back(*model);
    } else {
        auto live = liveModels(store);
        if (!live) {
            return fail(kExitStore, live.error().message);
        }
        models = std::move(live).value();
        if (models.empty()) {
            return fail(kExitBadInput, "the store " + store.path().string() + " holds no live trial to export");
        }
    }
    const std::optional<std::string> output = args.value("output");
    if (models.size() > 1 && !output) {
        return fail(kExitUsage, "the store holds " + std::to_string(models.size()) +
                                    " models; pick one with --model or give --output DIR for one results.json each");
    }
    std::error_code ec;
    if (models.size() > 1 && fs::exists(*output, ec) && !fs::is_directory(*output, ec)) {
        return fail(kExitBadInput, "--output " + *output + " is not a directory, but the store holds " +
                                       std::to_string(models.size()) +
                                       " models: name a directory (one DIR/<model>/results.json each) or pick one "
                                       "model with --model");
    }
    if (models.size() > 1) {
        // Two models whose names clean up to one folder would share one results.json: refused before anything is
        // written, naming both.
        std::map<std::string, std::string> modelOfFolder;
        for (const std::string& model : models) {
            const std::string folder = modelFolderName(model);
            if (auto [claimed, fresh] = modelOfFolder.emplace(folder, model); !fresh) {
                return fail(kExitBadInput,
                            "models '" + safeOneLine(claimed->second) + "' and '" + safeOneLine(model) +
                                "' would both be written to " +
                                safeOneLine((fs::path(*output) / folder / "results.json").string()) +
                                " (a folder name keeps letters, digits, '-', '.' and '_' and turns the rest into "
                                "'_'); nothing was written: export each with --model M --output FILE");
            }
        }
    }
    if (models.size() == 1 && output) {
        if (Status writable = checkOutputPath(*output, rules); !writable) {
            return fail(kExitBadInput, writable.error().message);
        }
    }
    for (const std::string& model : models) {
        auto document = exportMetaKernelBenchResults(store, model, settings);
        if (!document) {
            return fail(kExitBadInput, document.error().message);
        }
        const std::string text = document->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        if (models.size() > 1) {
            const fs::path path = fs::path(*output) / modelFolderName(model) / "results.json";
            fs::create_directories(path.parent_path(), ec);
            if (int code = writeOrPrint(path.string(), text, rules); code != kExitOk) {
                return code;
            }
        } else if (int code = writeOrPrint(output, text, rules); code != kExitOk) {
            return code;
        }
    }
    return kExitOk;
}

int exportRepairPairs(Store& store, const ParsedOptions& args, const OutputRules& rules) {
    if (auto output = args.value("output")) {
        if (Status writable = checkOutputPath(*output, rules); !writable) {
            return fail(kExitBadInput, writable.error().message);
        }
    }
    auto pairs = repairPairsFromStore(store, args.value("model"));
    if (!pairs) {
        return fail(kExitStore, pairs.error().message);
    }
    std::string text;
    for (const RepairPair& pair : *pairs) {
        text += repairPairJsonLine(pair);
        text += '\n';
    }
    return writeOrPrint(args.value("output"), text, rules);
}

int runExport(const std::vector<std::string>& rawArgs) {
    auto args = parseOptions(exportOptions(), rawArgs);
    if (!args) {
        return fail(kExitUsage, args.error().message);
    }
    if (args->help) {
        std::cout << exportHelp();
        return kExitOk;
    }
    if (args->positionals.size() != 1 ||
        (args->positionals[0] != "results-json" && args->positionals[0] != "repair-pairs")) {
        return fail(kExitUsage, "export takes one of results-json or repair-pairs (see mkb export --help)");
    }
    const fs::path storePath = args->value("store").value_or(defaultStorePath().string());
    auto store = Store::open(storePath, OpenMode::ReadExisting);
    if (!store) {
        return fail(kExitStore, store.error().message);
    }
    const OutputRules rules{"--output", storeFiles(storePath)};
    return args->positionals[0] == "results-json" ? exportResultsJson(**store, *args, rules)
                                                  : exportRepairPairs(**store, *args, rules);
}

const bool registered = registerCommand(
    {"export", "export MetaKernelBench results.json or the repair-pairs dataset", exportHelp(), runExport});

} // namespace
} // namespace mkb::cli
