// `mkb import`: files a MetaKernelBench results folder into the project store.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/io/import_families.h"
#include "core/io/import_summary_text.h"
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <iostream>

namespace mkb::cli {
namespace {

const char* const kImportHelp =
    R"(usage: mkb import PATH [--store PATH] [--suite-name NAME] [--problems DIR]... [--json]

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

options:
  --store PATH       the project store (default: $MKB_STORE, else the user's data folder); created when missing
  --suite-name NAME  the suite the imported trials are filed under (default: metakernelbench)
  --problems DIR     a MetaKernelBench problems/ folder used to name families that results.json lacks (repeatable)
  --json             print the summary as one JSON object

exit codes: 0 imported with no issue, 1 imported but some items were skipped (listed on stderr),
            3 the folder is missing or holds no model folder, 4 the store cannot be opened
)";

int runImport(const std::vector<std::string>& rawArgs) {
    ArgSpec spec{{"json"}, {"store", "suite-name", "problems"}, {"problems"}};
    auto args = parseArgs(rawArgs, spec);
    if (!args) {
        return fail(kExitUsage, args.error().message);
    }
    if (args->wantsHelp()) {
        std::cout << kImportHelp;
        return kExitOk;
    }
    if (args->positionals.size() != 1) {
        return fail(kExitUsage, "import takes one results folder (see mkb import --help)");
    }
    ImportOptions options;
    options.suite = args->optionOr("suite-name", options.suite);
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
    auto store = Store::open(args->optionOr("store", defaultStorePath().string()), OpenMode::CreateIfMissing);
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
        // Not the results folder's fault: the store's own exit code, so a script can tell a locked store from bad
        // input. Importing again finishes the job (what is stored is recognised as unchanged).
        return fail(kExitStore, safeOneLine(*summary->storeFailure) + "; the import stopped there (" +
                                    importCountsText(*summary) + "): run it again once the store can be written");
    }
    if (args->has("json")) {
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
    {"import", "import a MetaKernelBench results folder into the project store", kImportHelp, runImport});

} // namespace
} // namespace mkb::cli
