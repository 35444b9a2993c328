// Import of a MetaKernelBench results folder (results/<model>/...) into the project store, idempotently.
#pragma once

#include "core/store/store.h"
#include "core/util/result.h"

#include <filesystem>
#include <map>
#include <string>
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
    std::vector<ImportIssue> issues;
};

struct ImportOptions {
    std::string suite = "metakernelbench"; // suite name the imported trials are filed under
    std::map<std::string, std::string>
        familyByProblem; // "01_mha_prefill" -> "attention", used when results.json lacks it
};

/// Imports a folder holding model folders (MetaKernelBench's results/) or one model folder (holding store.json).
/// Fails as a whole only when the folder is missing or holds no model folder; everything else is a per-item issue.
Result<ImportSummary> importMetaKernelBenchResults(Store& store, const std::filesystem::path& folder,
                                                   const ImportOptions& options = {});

} // namespace mkb
