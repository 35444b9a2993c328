// `mkb import`: files a MetaKernelBench results folder, or KernelBench-X's refinement corpus, into the project store.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/io/import_families.h"
#include "core/io/import_summary_text.h"
#include "core/io/kbx_corpus_import.h"
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/vocabulary/arms.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <iostream>

namespace mkb::cli {
namespace {

const char* const kImportIntro =
    R"(usage: mkb import PATH [--store PATH] [--suite-name NAME] [--problems DIR]... [--json]
       mkb import kernelbenchx-corpus FILE.jsonl [--store PATH] [--model NAME] [--tasks CHECKOUT]
                                                 [--suite DIR] [--dsl ID] [--json]

Imports a MetaKernelBench results folder: either results/ (one folder per model) or one model's folder
results/<model>/ (holding store.json). Every trial folder problems/<problem>/<prefix>_p<NN>_r<k>_<arm>/ becomes a
trial with its record.json rewards, verdict.json, submissions.jsonl, final kernel.py and SKILL.md; archive/ becomes
archived trials; invocations.jsonl becomes invocations. Importing the same folder again changes nothing; a trial
whose content changed replaces the live one, which is archived, never deleted.

Anything missing or malformed is reported on its own line (path: reason, naming the file and the field) and the
rest imports. Only regular files whose real path lies inside the results folder are read; JSON nested deeper than
256 levels, counts out of range and negative costs or speedups are refused. Imports into one store take turns, trial
by trial, so two at once file each trial once; importing again links skill arms stored without their source trial.
On a terminal, stderr shows the trials handled of all and the one being imported.

)";

const char* const kCorpusIntro =
    R"(kernelbenchx-corpus reads KernelBench-X's refinement corpus (data/kbx_corpus/all_records.jsonl: before/after
records of one agent's rounds) and files one trial per task in suite kernelbenchx, arm solo_triton, replicate 1,
with each round's kernel as a submission (round_0 is submission 1) and the last round's verdict as the final one.
Every verdict is KernelBench-X's own (call_ok -> imported, exe_ok -> correct, perf_ok with its speedup -> passed),
stored under the boundary "kbx" so that it is never compared with ours. A task of the checkout keeps the number
`mkb suite import kernelbenchx` gives it; a task the checkout lacks is numbered from 900 and listed. A malformed
line is reported (line and field) and the rest imports; importing again changes nothing.
)";

const char* const kImportExitCodes =
    R"(exit codes: 0 imported with no issue, 1 imported but some items were skipped (listed on stderr),
            3 the folder (or corpus file, or task checkout) is missing or holds nothing to import,
            4 the store cannot be opened or written
)";

/// mkb import's options for a results folder.
const OptionTable& importOptions() {
    static const OptionTable table = {
        pathOption("store", "PATH", "the project store; created when missing")
            .defaultSaid("$MKB_STORE, else the user's data folder"),
        textOption("suite-name", "NAME", "the suite the imported trials are filed under")
            .withDefault(ImportOptions{}.suite),
        pathOption("problems", "DIR",
                   "a MetaKernelBench problems/ folder used to name families that results.json lacks")
            .isRepeatable(),
        flagOption("json", "print the summary as one JSON object"),
    };
    return table;
}

/// mkb import kernelbenchx-corpus's options.
const OptionTable& corpusOptions() {
    static const OptionTable table = {
        pathOption("store", "PATH", "the project store; created when missing")
            .defaultSaid("$MKB_STORE, else the user's data folder"),
        textOption("model", "NAME", "the model the trials are filed under (the corpus names no LLM)")
            .withDefault(CorpusImportOptions{}.model),
        pathOption("tasks", "CHECKOUT", "the KernelBench-X checkout that numbers the tasks")
            .defaultSaid("the checkout FILE lies in, when it lies in data/kbx_corpus/ of one"),
        pathOption("suite", "DIR",
                   "the suite mkb suite import kernelbenchx wrote from that checkout: each corpus task's problem file "
                   "is stored with its trials, so the report knows its KernelBench-X category"),
        textOption("dsl", "ID",
                   "the DSL the corpus's kernels are written in (KernelBench-X's are triton); the trials' arm is "
                   "solo_<ID>")
            .withDefault(CorpusImportOptions{}.dsl),
        flagOption("json", "print the summary as one JSON object"),
    };
    return table;
}

/// The whole --help: both forms' options, each table as declared.
std::string importHelp() {
    return verbHelp(kImportIntro, importOptions(),
                    std::string(kCorpusIntro) + optionsHelp(corpusOptions()) + "\n" + kImportExitCodes);
}

/// The checkout a corpus file lies in: CHECKOUT/data/kbx_corpus/FILE, when CHECKOUT holds data/kernelbenchx/.
/// An import that a store write stopped (locked, read-only, full): not the input's fault, so the store's own exit code,
/// and importing again finishes the job (what is stored is recognised as unchanged).
int stoppedByTheStore(const std::string& failure, const std::string& counts) {
    return fail(kExitStore, safeOneLine(failure) + "; the import stopped there (" + counts +
                                "): run it again once the store can be written");
}

std::optional<std::filesystem::path> checkoutHolding(const std::filesystem::path& file) {
    const std::filesystem::path folder = std::filesystem::absolute(file).parent_path();
    std::error_code ec;
    if (folder.filename() != "kbx_corpus" || folder.parent_path().filename() != "data" ||
        !std::filesystem::is_directory(folder.parent_path() / "kernelbenchx", ec)) {
        return std::nullopt;
    }
    return folder.parent_path().parent_path();
}

int runCorpusImport(const std::vector<std::string>& rawArgs) {
    auto args = parseOptions(corpusOptions(), std::vector<std::string>(rawArgs.begin() + 1, rawArgs.end()));
    if (!args) {
        return fail(kExitUsage, args.error().message);
    }
    if (args->help) {
        std::cout << importHelp();
        return kExitOk;
    }
    if (args->positionals.size() != 1) {
        return fail(kExitUsage, "import kernelbenchx-corpus takes one corpus file (see mkb import --help)");
    }
    const std::filesystem::path file = args->positionals[0];
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
        return fail(kExitBadInput, "corpus file " + file.string() + " does not exist or is not a file");
    }
    CorpusImportOptions options;
    options.model = args->text("model");
    if (options.model.empty()) {
        return fail(kExitUsage, "--model needs a non-empty name");
    }
    options.dsl = args->text("dsl");
    if (!isValidDslId(options.dsl)) {
        return fail(kExitUsage,
                    "--dsl: '" + options.dsl +
                        "' is not a DSL id (a lowercase letter, then lowercase letters, digits or underscores)");
    }
    if (auto tasks = args->value("tasks")) {
        options.checkout = std::filesystem::path(*tasks);
    } else {
        options.checkout = checkoutHolding(file);
    }
    if (options.checkout) {
        if (auto listed = checkoutTaskFiles(*options.checkout); !listed) {
            return fail(kExitBadInput, "--tasks: " + listed.error().message);
        }
    }
    if (auto suite = args->value("suite")) {
        if (!std::filesystem::is_directory(*suite, ec)) {
            return fail(kExitBadInput, "--suite: " + *suite + " does not exist or is not a folder");
        }
        options.suiteFolder = std::filesystem::path(*suite);
    }
    auto store = Store::open(args->value("store").value_or(defaultStorePath().string()), OpenMode::CreateIfMissing);
    if (!store) {
        return fail(kExitStore, store.error().message);
    }
    auto summary = importKbxCorpus(**store, file, options);
    if (!summary) {
        return fail(kExitBadInput, summary.error().message);
    }
    for (const CorpusIssue& issue : summary->issues) {
        std::cerr << (issue.line > 0 ? safeOneLine(file.string()) + ": " : std::string()) << safeOneLine(issue.message)
                  << '\n';
    }
    const std::string counts = std::to_string(summary->records) + " of " + std::to_string(summary->lines) +
                               " records read; " + std::to_string(summary->tasks) + " tasks (" +
                               std::to_string(summary->rounds) +
                               " rounds): " + std::to_string(summary->trialsImported) + " trials imported, " +
                               std::to_string(summary->trialsUnchanged) + " unchanged, " +
                               std::to_string(summary->trialsReplaced) + " replaced";
    if (summary->storeFailure) {
        return stoppedByTheStore(*summary->storeFailure, counts);
    }
    if (summary->records == 0 && summary->lines == 0) {
        return fail(kExitBadInput, "corpus file " + file.string() + " holds no records");
    }
    if (args->flag("json")) {
        nlohmann::json absent = nlohmann::json::array();
        for (const CorpusProblem& problem : summary->absentTasks) {
            absent.push_back({{"task", problem.taskId}, {"number", problem.number}, {"slug", problem.slug}});
        }
        nlohmann::json out = {{"model", options.model},
                              {"lines", summary->lines},
                              {"records", summary->records},
                              {"tasks", summary->tasks},
                              {"rounds", summary->rounds},
                              {"trials_imported", summary->trialsImported},
                              {"trials_unchanged", summary->trialsUnchanged},
                              {"trials_replaced", summary->trialsReplaced},
                              {"tasks_not_in_checkout", absent},
                              {"numbered_by_checkout", options.checkout.has_value()},
                              {"problems_stored", summary->problemsStored},
                              {"issues", summary->issues.size()}};
        std::cout << out.dump() << '\n';
    } else {
        if (!options.checkout) {
            std::cout << "no task checkout (--tasks): every task is numbered from " << kFirstAbsentTaskNumber << '\n';
        } else {
            for (const CorpusProblem& problem : summary->absentTasks) {
                std::cout << "absent   " << safeOneLine(problem.taskId) << " -> " << problem.number << "_"
                          << problem.slug << " (the checkout holds no such task file)\n";
            }
        }
        if (options.suiteFolder) {
            std::cout << "stored the problem files of " << summary->problemsStored << " of " << summary->tasks
                      << " tasks from " << safeOneLine(options.suiteFolder->string()) << '\n';
        }
        std::cout << "kernelbenchx-corpus: " << counts << " (model " << safeOneLine(options.model) << ")\n";
    }
    return summary->issues.empty() ? kExitOk : kExitFailed;
}

int runImport(const std::vector<std::string>& rawArgs) {
    if (!rawArgs.empty() && rawArgs[0] == "kernelbenchx-corpus") {
        return runCorpusImport(rawArgs);
    }
    auto args = parseOptions(importOptions(), rawArgs);
    if (!args) {
        return fail(kExitUsage, args.error().message);
    }
    if (args->help) {
        std::cout << importHelp();
        return kExitOk;
    }
    if (args->positionals.size() != 1) {
        return fail(kExitUsage, "import takes one results folder (see mkb import --help)");
    }
    ImportOptions options;
    options.suite = args->text("suite-name");
    std::vector<std::filesystem::path> suiteRoots;
    for (const std::string& dir : args->all("problems")) {
        suiteRoots.emplace_back(dir);
    }
    options.familyByProblem = familiesByProblem(suiteRoots);
    const std::filesystem::path folder = args->positionals[0];
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec)) {
        return fail(kExitBadInput, "results folder " + folder.string() + " does not exist or is not a folder");
    }
    auto store = Store::open(args->value("store").value_or(defaultStorePath().string()), OpenMode::CreateIfMissing);
    if (!store) {
        return fail(kExitStore, store.error().message);
    }
    if (::isatty(STDERR_FILENO)) {
        options.progress = [](std::size_t done, std::size_t total, std::string_view where) {
            std::cerr << "\r\033[K";
            if (done < total) {
                std::cerr << "importing " << done + 1 << "/" << total << ": " << safeOneLine(where);
            }
            std::cerr << std::flush;
            return true;
        };
    }
    auto summary = importMetaKernelBenchResults(**store, folder, options);
    if (!summary) {
        return fail(kExitBadInput, summary.error().message);
    }
    for (const ImportIssue& issue : summary->issues) {
        // One line per issue: a newline or escape in a folder name or a field must not break or forge lines.
        std::cerr << safeOneLine(issue.path.string()) << ": " << safeOneLine(issue.message) << '\n';
    }
    if (summary->storeFailure) {
        return stoppedByTheStore(*summary->storeFailure, importCountsText(*summary));
    }
    if (args->flag("json")) {
        nlohmann::json out = {{"models", summary->models},
                              {"trials_imported", summary->trialsImported},
                              {"trials_unchanged", summary->trialsUnchanged},
                              {"trials_replaced", summary->trialsReplaced},
                              {"submissions_imported", summary->submissionsImported},
                              {"invocations_imported", summary->invocationsImported},
                              {"source_links_repaired", summary->sourceLinksRepaired},
                              {"issues", summary->issues.size()}};
        std::cout << out.dump() << '\n';
    } else {
        std::cout << "imported " << importCountsText(*summary) << '\n';
        if (summary->sourceLinksRepaired > 0) {
            std::cout << "repaired " << summary->sourceLinksRepaired
                      << " skill arm(s) stored without the link to their source trial\n";
        }
    }
    return summary->issues.empty() ? kExitOk : kExitFailed;
}

const bool registered = registerCommand(
    {"import", "import a MetaKernelBench results folder or KernelBench-X's corpus into the project store", importHelp(),
     runImport});

} // namespace
} // namespace mkb::cli
