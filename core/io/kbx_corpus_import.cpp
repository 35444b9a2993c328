// Numbering corpus tasks like the task importer, gathering each task's rounds from its lines, and filing the trials.
#include "core/io/kbx_corpus_import.h"

#include "core/catalog/catalog.h"
#include "core/io/kbx_corpus_records.h"
#include "core/io/trial_filing.h"
#include "core/util/sha256.h"
#include "core/util/text.h"
#include "core/vocabulary/arms.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace mkb {
namespace fs = std::filesystem;

namespace {

bool hiddenOrPrivate(const std::string& name) {
    return name.empty() || name[0] == '_' || name[0] == '.';
}

/// One round of one task as filed: the side and the line it was first read from.
struct RoundSeen {
    CorpusSide side;
    int line = 0;
};

/// A task's rounds in order, each read once.
struct TaskRounds {
    std::string category;
    std::string taskName;
    std::string taskFile;
    std::map<int, RoundSeen> rounds;
};

/// Keeps the first reading of a round; a later line that disagrees with it is an issue naming both lines.
void noteRound(TaskRounds& task, const CorpusSide& side, int line, const std::string& sideName,
               std::vector<CorpusIssue>& issues) {
    auto [it, inserted] = task.rounds.try_emplace(side.round, RoundSeen{side, line});
    if (inserted) {
        return;
    }
    CorpusSide& kept = it->second.side;
    if (kept.reachedBy.empty()) {
        kept.reachedBy = side.reachedBy; // first read as a before side, now as the after side of its transition
    }
    if (kept.code != side.code || kept.sideJson != side.sideJson) {
        issues.push_back({line, "line " + std::to_string(line) + ": task " + task.category + "/" + task.taskName +
                                    " round_" + std::to_string(side.round) + " ('" + sideName +
                                    "') differs from line " + std::to_string(it->second.line) + "'s; line " +
                                    std::to_string(it->second.line) + "'s is kept"});
    }
}

nlohmann::json modelSettings(const fs::path& file) {
    return {{"source", "kernelbenchx-corpus"},
            {"corpus_file", file.filename().string()},
            {"agent", "GEAK"},
            {"agent_evidence", "the corpus's tracebacks run from results/geak_all/round_<k>/"},
            {"llm", "not named by the corpus"}};
}

} // namespace

std::string corpusTaskSlug(const std::string& taskName) {
    std::string slug;
    for (char c : taskName) {
        const auto u = static_cast<unsigned char>(c);
        const char lower = static_cast<char>(std::tolower(u));
        const bool keep = (lower >= 'a' && lower <= 'z') || (c >= '0' && c <= '9');
        if (keep) {
            slug += lower;
        } else if (slug.empty() || slug.back() != '_') {
            slug += '_';
        }
    }
    while (!slug.empty() && slug.front() == '_') {
        slug.erase(slug.begin());
    }
    while (!slug.empty() && slug.back() == '_') {
        slug.pop_back();
    }
    return slug.empty() ? "task" : slug;
}

std::string corpusCategoryFamily(const std::string& category) {
    std::string family;
    for (std::size_t i = 0; i < category.size(); ++i) {
        const auto c = static_cast<unsigned char>(category[i]);
        if (std::isupper(c) && i > 0 && !std::isupper(static_cast<unsigned char>(category[i - 1]))) {
            family += '_';
        }
        family += static_cast<char>(std::tolower(c));
    }
    return family;
}

Result<std::vector<std::pair<std::string, std::string>>> checkoutTaskFiles(const fs::path& checkout) {
    const fs::path root = checkout / "data" / "kernelbenchx";
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
        return makeError(checkout.string() + ": not a KernelBench-X checkout (it has no data/kernelbenchx/ folder)");
    }
    std::vector<std::pair<std::string, std::string>> tasks;
    for (const fs::directory_entry& category : fs::directory_iterator(root, ec)) {
        if (!category.is_directory(ec)) {
            continue;
        }
        for (const fs::directory_entry& task : fs::directory_iterator(category.path(), ec)) {
            const std::string name = task.path().filename().string();
            if (task.is_regular_file(ec) && task.path().extension() == ".py" && !hiddenOrPrivate(name)) {
                tasks.emplace_back(category.path().filename().string(), name);
            }
        }
    }
    if (ec) {
        return makeError(root.string() + ": cannot be listed: " + ec.message());
    }
    std::sort(tasks.begin(), tasks.end());
    return tasks;
}

std::vector<CorpusProblem> numberCorpusTasks(std::vector<std::pair<std::string, std::string>> corpusTasks,
                                             const std::vector<std::pair<std::string, std::string>>& checkoutTasks) {
    std::sort(corpusTasks.begin(), corpusTasks.end());
    corpusTasks.erase(std::unique(corpusTasks.begin(), corpusTasks.end()), corpusTasks.end());
    std::vector<CorpusProblem> problems;
    int nextAbsent = kFirstAbsentTaskNumber;
    for (const auto& [category, file] : corpusTasks) {
        CorpusProblem problem;
        const std::string name = file.substr(0, file.size() - 3); // without ".py"
        problem.taskId = category + "/" + name;
        problem.slug = corpusTaskSlug(name);
        problem.family = corpusCategoryFamily(category);
        auto found = std::lower_bound(checkoutTasks.begin(), checkoutTasks.end(), std::make_pair(category, file));
        problem.inCheckout = found != checkoutTasks.end() && *found == std::make_pair(category, file);
        problem.number = problem.inCheckout ? 100 + static_cast<int>(found - checkoutTasks.begin()) : nextAbsent++;
        problems.push_back(std::move(problem));
    }
    return problems;
}

namespace {

/// The problems of a suite `mkb suite import kernelbenchx` wrote, by the task they came from ("Activation/gelu_bf16").
Result<std::map<std::string, Problem>> suiteProblemsByTask(const fs::path& folder) {
    static const std::string kOrigin = "kernelbenchx:";
    std::map<std::string, Problem> byTask;
    for (Problem& problem : loadCatalog({folder}).problems) {
        if (problem.meta.origin.rfind(kOrigin, 0) == 0) {
            byTask.emplace(problem.meta.origin.substr(kOrigin.size()), std::move(problem));
        }
    }
    if (byTask.empty()) {
        return makeError("suite " + folder.string() +
                         " holds no problem imported from KernelBench-X (write one with mkb suite import kernelbenchx "
                         "CHECKOUT --out DIR)");
    }
    return byTask;
}

/// Every task's rounds from the corpus text; malformed lines and disagreeing rounds become issues of the summary.
std::map<std::string, TaskRounds> readTaskRounds(const std::string& text, CorpusImportSummary& summary) {
    std::map<std::string, TaskRounds> tasks; // by task id
    std::istringstream lines(text);
    int lineNumber = 0;
    for (std::string line; std::getline(lines, line);) {
        ++lineNumber;
        if (line.find_first_not_of(" \t\r") == std::string::npos) {
            continue;
        }
        ++summary.lines;
        auto record = parseCorpusRecord(line, lineNumber);
        if (!record) {
            summary.issues.push_back({lineNumber, record.error().message});
            continue;
        }
        ++summary.records;
        TaskRounds& task = tasks[record->taskId()];
        task.category = record->category;
        task.taskName = record->taskName;
        task.taskFile = record->taskFile;
        noteRound(task, record->before, lineNumber, "before", summary.issues);
        noteRound(task, record->after, lineNumber, "after", summary.issues);
    }
    return tasks;
}

/// The trial a task becomes, without its content: identity, arm and DSL.
TrialRecord trialOfTask(const CorpusProblem& problem, const TaskRounds& task, const CorpusImportOptions& options) {
    TrialRecord trial;
    trial.model = options.model;
    trial.suite = options.suite;
    trial.problemNumber = problem.number;
    trial.problemSlug = problem.slug;
    trial.family = problem.family;
    trial.category = task.category;
    trial.replicate = 1;
    trial.arm = soloArm(options.dsl).name();
    trial.dsl = options.dsl;
    trial.coordinate = formatCoordinate(Coordinate{problem.number, 1, soloArm(options.dsl)});
    trial.status = TrialStatus::Finished;
    return trial;
}

/// The task's rounds as submissions in order, and the trial's origin: a hash of everything they were made from.
std::vector<SubmissionRecord> roundsAsSubmissions(const CorpusProblem& problem, const TaskRounds& task,
                                                  TrialRecord& trial) {
    std::vector<SubmissionRecord> submissions;
    std::string identity = trial.coordinate + '\0' + problem.taskId;
    for (const auto& [round, seen] : task.rounds) {
        SubmissionRecord submission;
        submission.index = round + 1;
        submission.kernelSource = seen.side.code;
        submission.verdict = corpusVerdict(seen.side, problem.taskId);
        submissions.push_back(std::move(submission));
        identity += '\0' + std::to_string(round) + '\0' + seen.side.sideJson + '\0' + seen.side.code + '\0' +
                    seen.side.reachedBy;
    }
    trial.origin = "kbx-corpus:" + sha256Hex(identity);
    return submissions;
}

void countFiled(FiledAs filed, CorpusImportSummary& summary) {
    switch (filed) {
    case FiledAs::Unchanged:
        ++summary.trialsUnchanged;
        break;
    case FiledAs::Imported:
        ++summary.trialsImported;
        break;
    case FiledAs::Replaced:
        ++summary.trialsReplaced;
        break;
    }
}

} // namespace

Result<CorpusImportSummary> importKbxCorpus(Store& store, const fs::path& file, const CorpusImportOptions& options) {
    auto text = readFile(file);
    if (!text) {
        return text.error();
    }
    std::vector<std::pair<std::string, std::string>> checkoutTasks;
    if (options.checkout) {
        auto listed = checkoutTaskFiles(*options.checkout);
        if (!listed) {
            return listed.error();
        }
        checkoutTasks = std::move(*listed);
    }
    std::map<std::string, Problem> suiteProblems;
    if (options.suiteFolder) {
        auto found = suiteProblemsByTask(*options.suiteFolder);
        if (!found) {
            return found.error();
        }
        suiteProblems = std::move(*found);
    }

    CorpusImportSummary summary;
    const std::map<std::string, TaskRounds> tasks = readTaskRounds(*text, summary);
    std::vector<std::pair<std::string, std::string>> corpusTasks;
    for (const auto& [id, task] : tasks) {
        corpusTasks.emplace_back(task.category, task.taskFile);
    }
    const std::vector<CorpusProblem> problems = numberCorpusTasks(corpusTasks, checkoutTasks);
    if (problems.empty()) {
        return summary;
    }
    if (auto model = store.ensureModel(options.model, "imported", modelSettings(file).dump()); !model) {
        summary.storeFailure = model.error().message;
        return summary;
    }
    for (const CorpusProblem& problem : problems) {
        const TaskRounds& task = tasks.at(problem.taskId);
        if (!problem.inCheckout) {
            summary.absentTasks.push_back(problem);
        }
        TrialRecord trial = trialOfTask(problem, task, options);
        if (auto found = suiteProblems.find(problem.taskId); found != suiteProblems.end()) {
            const Problem& suiteProblem = found->second;
            if (suiteProblem.number != problem.number || suiteProblem.slug != problem.slug) {
                summary.issues.push_back(
                    {0, "suite " + options.suiteFolder->string() + ": task " + problem.taskId + " is problem " +
                            std::to_string(suiteProblem.number) + "_" + suiteProblem.slug + " there but " +
                            std::to_string(problem.number) + "_" + problem.slug +
                            " here; import the suite and the corpus from one checkout (its problem is not stored)"});
            } else if (auto stored = store.upsertProblem(suiteProblem); !stored) {
                summary.storeFailure = stored.error().message;
                return summary;
            } else {
                trial.problemFingerprint = suiteProblem.fingerprint;
                ++summary.problemsStored;
            }
        }
        std::vector<SubmissionRecord> submissions = roundsAsSubmissions(problem, task, trial);
        summary.rounds += static_cast<int>(submissions.size());
        ++summary.tasks;

        TrialOutcome outcome;
        outcome.status = TrialStatus::Finished;
        outcome.verdict = submissions.back().verdict;
        outcome.error = outcome.verdict->error;
        auto filed = fileTrial(store, trial, outcome, std::move(submissions));
        if (!filed) {
            summary.storeFailure = "task " + problem.taskId + ": " + filed.error().message;
            return summary;
        }
        countFiled(filed->filed, summary);
    }
    return summary;
}

} // namespace mkb
