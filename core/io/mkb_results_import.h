// Import of a MetaKernelBench results folder (results/<model>/...) into the project store, idempotently.
#pragma once

#include "core/store/store.h"
#include "core/util/result.h"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// One thing in the results folder that could not be imported, with the reason; the rest still imports.
struct ImportIssue {
    std::filesystem::path path;
    std::string message;
};

struct ImportSummary {
    int models = 0;
    int trialsImported = 0;  // new trials written (live or archived)
    int trialsUnchanged = 0; // already in the store with the same content
    int trialsReplaced = 0;  // a live trial whose content changed: the old one archived, the new one written
    int submissionsImported = 0;
    int invocationsImported = 0;
    int sourceLinksRepaired = 0; // unchanged skill arms stored without their source trial, linked now
    int trialsTotal = 0;         // trial folders found in every model folder
    bool cancelled = false;      // the progress callback stopped the import before every trial folder was handled
    // A write to the store failed (it is locked by another process, read-only, full): the import stopped there, as
    // if cancelled, and this is the store's error. Every trial handled before it is stored.
    std::optional<std::string> storeFailure;
    std::vector<ImportIssue> issues;
};

/// Called with (trial folders handled so far, trial folders in all, the trial about to be imported as
/// "<model> · <problem folder> · <coordinate>") before each trial folder, and once more with done == total and an
/// empty where when all are handled. Returning false stops the import before that trial: every trial already
/// handled is in the store with its submissions (one transaction each), and importing again completes the rest.
using ImportProgress = std::function<bool(std::size_t done, std::size_t total, std::string_view where)>;

struct ImportOptions {
    std::string suite = "metakernelbench"; // suite name the imported trials are filed under
    std::map<std::string, std::string>
        familyByProblem;     // "01_mha_prefill" -> "attention", used when results.json lacks it
    ImportProgress progress; // optional: progress and cancel between trials
};

/// Imports a folder holding model folders (MetaKernelBench's results/) or one model folder (holding store.json).
/// Fails as a whole only when the folder is missing or holds no model folder; everything else is a per-item issue.
/// Every model folder is scanned first, so the progress callback knows the total before the first trial.
Result<ImportSummary> importMetaKernelBenchResults(Store& store, const std::filesystem::path& folder,
                                                   const ImportOptions& options = {});

} // namespace mkb
