// Import of KernelBench-X's refinement corpus into the project store: one trial per task, its rounds as submissions.
//
// The corpus holds before/after records of one agent's refinement rounds (round_0 -> round_1 -> round_2). A task's
// rounds are one attempt refined step by step, not independent replicates, so they are filed as one trial
// (replicate 1, arm solo_triton) whose submissions are the rounds in order (index = round + 1) and whose final verdict
// is its last round's. The refinement metrics and the repair-pairs export then read the corpus as they read our own
// attempts. Every verdict is KernelBench-X's, kept apart from ours by its boundary "kbx".
#pragma once

#include "core/store/store.h"
#include "core/util/result.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// Where a corpus task lands in the suite: the task importer's number and slug when the checkout holds its task
/// file (from 100, in order of category then file name), else a number from 900 on (in the same order among the
/// tasks the checkout lacks).
struct CorpusProblem {
    std::string taskId; // "Activation/gelu_bf16"
    int number = 0;
    std::string slug;   // "gelu_bf16"
    std::string family; // "activation": the category in snake case
    bool inCheckout = false;
};

inline constexpr int kFirstAbsentTaskNumber = 900;

/// The task files of a KernelBench-X checkout (data/kernelbenchx/<Category>/<task>.py) as (category, file name),
/// sorted and numbered as `mkb suite import kernelbenchx` numbers them. An error when the folder is missing.
Result<std::vector<std::pair<std::string, std::string>>> checkoutTaskFiles(const std::filesystem::path& checkout);

/// Numbers the corpus's tasks (given as (category, file name)) against the checkout's task files.
std::vector<CorpusProblem> numberCorpusTasks(std::vector<std::pair<std::string, std::string>> corpusTasks,
                                             const std::vector<std::pair<std::string, std::string>>& checkoutTasks);

/// The task importer's slug of a task name and family of a category ("index_fill_" -> "index_fill",
/// "LinearAlgebra" -> "linear_algebra").
std::string corpusTaskSlug(const std::string& taskName);
std::string corpusCategoryFamily(const std::string& category);

struct CorpusImportOptions {
    std::string model = "kbx-geak"; // the model the trials are filed under
    std::string suite = "kernelbenchx";
    std::string dsl = "triton"; // the DSL the corpus's kernels are written in; the trials' arm is solo_<dsl>
    std::optional<std::filesystem::path> checkout; // numbers the tasks; unset: none (every task from 900)
    // The suite `mkb suite import kernelbenchx` wrote from the same checkout: the problem file of each corpus task is
    // stored (so the report knows its category and the workbench its source) and its fingerprint goes on the trial.
    std::optional<std::filesystem::path> suiteFolder;
};

/// One malformed or conflicting line (or a suite problem numbered otherwise); the rest imports.
struct CorpusIssue {
    int line = 0;        // 0: not about one line (a suite problem)
    std::string message; // starts with "line N: " when line > 0
};

struct CorpusImportSummary {
    int lines = 0;   // non-blank lines read
    int records = 0; // lines that parsed
    int tasks = 0;   // distinct tasks (one trial each)
    int rounds = 0;  // distinct (task, round) kernels (one submission each)
    int trialsImported = 0;
    int trialsUnchanged = 0;
    int trialsReplaced = 0;                 // a task whose records changed: the old trial archived, the new one filed
    std::vector<CorpusProblem> absentTasks; // numbered from 900: the checkout holds no such task file
    int problemsStored = 0; // corpus tasks whose problem file the suite holds (CorpusImportOptions::suiteFolder)
    std::vector<CorpusIssue> issues;
    // A write to the store failed: the import stopped there, and this is the store's error. Importing again
    // finishes the job.
    std::optional<std::string> storeFailure;
};

/// Reads the corpus file and files its tasks. Fails as a whole only when the file, the checkout or the suite cannot be
/// read (a suite without any problem imported from KernelBench-X is refused); a malformed line, a round two lines
/// disagree on or a suite problem numbered otherwise is an issue, and the rest imports.
Result<CorpusImportSummary> importKbxCorpus(Store& store, const std::filesystem::path& file,
                                            const CorpusImportOptions& options = {});

} // namespace mkb
