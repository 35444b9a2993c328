// Reads MetaKernelBench's on-disk results (store.json, record.json, verdict.json, submissions.jsonl, artifacts,
// archive/) and files every trial in the project store, so that re-importing the same folder changes nothing.
#include "core/io/mkb_results_import.h"

#include "core/protocol/arms.h"
#include "core/util/sha256.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <set>

namespace mkb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// One trial folder found on disk, before it is parsed.
struct TrialFolder {
    fs::path dir;
    std::string problemStem; // "01_mha_prefill"; empty for archived folders until resolved by number
    Coordinate coordinate;
    bool archived = false;
    std::string archivedAt; // from the archive folder's "YYYY-MM-DD__HH-MM-SS__" prefix
};

/// A trial folder parsed into what the store takes.
struct ParsedTrial {
    TrialRecord record;
    TrialOutcome outcome;
    std::vector<SubmissionRecord> submissions;
};

std::optional<std::string> readOptionalFile(const fs::path& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
        return std::nullopt;
    }
    auto text = readFile(path);
    if (!text) {
        return std::nullopt;
    }
    return std::move(text).value();
}

Result<json> parseJsonFile(const fs::path& path) {
    auto text = readFile(path);
    if (!text) {
        return text.error();
    }
    json value = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) {
        return makeError("not valid JSON");
    }
    return value;
}

bool rewardSet(const json& rewards, const char* key) {
    auto it = rewards.find(key);
    return it != rewards.end() && it->is_number() && it->get<double>() >= 1.0;
}

double rewardValue(const json& rewards, const char* key) {
    auto it = rewards.find(key);
    return it != rewards.end() && it->is_number() ? it->get<double>() : 0.0;
}

Verdict verdictFromRewards(const json& rewards) {
    Verdict verdict;
    verdict.imported = rewardSet(rewards, "imported");
    verdict.correct = rewardSet(rewards, "correct");
    verdict.passed = rewardSet(rewards, "passed");
    verdict.speedupVsEager = verdict.passed || verdict.correct ? rewardValue(rewards, "speedup_vs_eager") : 0.0;
    verdict.compliant = verdict.imported;
    verdict.stage = verdict.passed ? "done" : "";
    return verdict;
}

template <typename T>
std::optional<T> optionalNumber(const json& object, const char* key) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_number()) {
        return std::nullopt;
    }
    return it->get<T>();
}

/// "2026-01-02__03-04-05__abc123_p01_r1_solo_tirx" -> ("2026-01-02T03:04:05", "abc123_p01_r1_solo_tirx").
std::pair<std::string, std::string> splitArchiveName(const std::string& name) {
    auto separator = name.find("__", 12);
    if (name.size() > 22 && name[10] == '_' && name[11] == '_' && separator == 20) {
        std::string stamp = name.substr(0, 10) + "T" + name.substr(12, 8);
        std::replace(stamp.begin() + 11, stamp.end(), '-', ':');
        return {stamp, name.substr(22)};
    }
    return {"", name};
}

/// Parses "<prefix>_p<NN>_r<k>_<arm>" for the given prefix.
Result<Coordinate> coordinateOfFolder(const std::string& name, const std::string& prefix) {
    if (!startsWith(name, prefix + "_")) {
        return makeError("folder name does not start with the store prefix '" + prefix + "_'");
    }
    return parseCoordinate(std::string_view(name).substr(prefix.size() + 1));
}

/// Number and slug of a MetaKernelBench problem folder name "NN_slug".
std::optional<std::pair<int, std::string>> splitProblemStem(const std::string& stem) {
    if (stem.size() < 4 || !std::isdigit(static_cast<unsigned char>(stem[0])) ||
        !std::isdigit(static_cast<unsigned char>(stem[1])) || stem[2] != '_') {
        return std::nullopt;
    }
    return std::make_pair((stem[0] - '0') * 10 + (stem[1] - '0'), stem.substr(3));
}

Result<ParsedTrial> parseTrialFolder(const TrialFolder& folder, const std::string& model, const std::string& suite,
                                     const std::string& family) {
    ParsedTrial parsed;
    TrialRecord& trial = parsed.record;
    auto problem = splitProblemStem(folder.problemStem);
    if (!problem) {
        return makeError("problem folder '" + folder.problemStem + "' is not named NN_slug");
    }
    trial.model = model;
    trial.suite = suite;
    trial.problemNumber = problem->first;
    trial.problemSlug = problem->second;
    trial.family = family;
    trial.replicate = folder.coordinate.replicate;
    trial.arm = folder.coordinate.arm.name();
    trial.dsl = folder.coordinate.arm.dsl;
    trial.coordinate = formatCoordinate(folder.coordinate);

    const fs::path recordPath = folder.dir / "record.json";
    auto recordText = readFile(recordPath);
    if (!recordText) {
        return makeError("record.json is missing or unreadable");
    }
    json record = json::parse(*recordText, nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
        return makeError("record.json is not a JSON object");
    }
    if (!record.contains("rewards") || !record["rewards"].is_object()) {
        return makeError("record.json has no 'rewards' object");
    }
    if (record.contains("stamps") && !record["stamps"].is_object()) {
        return makeError("record.json 'stamps' is not an object");
    }
    const json& rewards = record["rewards"];
    for (const char* key : {"imported", "correct", "speedup_vs_eager", "passed"}) {
        if (rewards.contains(key) && !rewards[key].is_number()) {
            return makeError(std::string("record.json rewards.") + key + " is not a number");
        }
    }

    std::string verdictText = readOptionalFile(folder.dir / "verdict.json").value_or("");
    json verdictJson = verdictText.empty() ? json() : json::parse(verdictText, nullptr, false);

    TrialOutcome& outcome = parsed.outcome;
    const json errorValue = record.value("error", json());
    const json skippedValue = record.value("skipped", json());
    outcome.timedOut = record.value("timed_out", false);
    if (!errorValue.is_null()) {
        outcome.status = TrialStatus::InfrastructureError;
        outcome.error = errorValue.is_string() ? errorValue.get<std::string>() : errorValue.dump();
    } else if (!skippedValue.is_null() && !(skippedValue.is_boolean() && !skippedValue.get<bool>())) {
        outcome.status = TrialStatus::Skipped;
        outcome.skipped = true;
        outcome.error = skippedValue.is_string() ? "skipped: " + skippedValue.get<std::string>() : "skipped";
    } else {
        outcome.status = TrialStatus::Finished;
        Verdict verdict = verdictFromRewards(rewards);
        verdict.json = verdictText.empty() ? rewards.dump() : verdictText;
        if (verdictJson.is_object()) {
            verdict.evalSeconds = optionalNumber<double>(verdictJson, "eval_sec").value_or(0.0);
        }
        outcome.verdict = verdict;
    }
    if (record.contains("usage") && record["usage"].is_object()) {
        const json& usage = record["usage"];
        outcome.usage.inputTokens = optionalNumber<std::int64_t>(usage, "n_input_tokens");
        outcome.usage.cacheTokens = optionalNumber<std::int64_t>(usage, "n_cache_tokens");
        outcome.usage.outputTokens = optionalNumber<std::int64_t>(usage, "n_output_tokens");
        outcome.usage.costUsd = optionalNumber<double>(usage, "cost_usd");
        outcome.usage.agentSeconds = optionalNumber<double>(usage, "agent_sec");
    }
    if (record.contains("stamps")) {
        const json& stamps = record["stamps"];
        if (stamps.contains("task_fingerprint") && stamps["task_fingerprint"].is_string()) {
            trial.problemFingerprint = stamps["task_fingerprint"].get<std::string>();
        }
        if (stamps.contains("skill_sha256") && stamps["skill_sha256"].is_string()) {
            trial.sourceSkillSha256 = stamps["skill_sha256"].get<std::string>();
        }
    }
    trial.timedOut = outcome.timedOut;
    trial.skipped = outcome.skipped;

    std::optional<std::string> kernel = readOptionalFile(folder.dir / "artifacts" / "app" / "kernel.py");
    outcome.skillText = readOptionalFile(folder.dir / "artifacts" / "app" / "SKILL.md");
    std::optional<std::string> submissionsText = readOptionalFile(folder.dir / "submissions.jsonl");

    // Identity of the imported content: the same folder imported twice maps to the same origin.
    std::string identity = *recordText + '\0' + verdictText + '\0' + kernel.value_or("") + '\0' +
                           outcome.skillText.value_or("") + '\0' + submissionsText.value_or("") + '\0' +
                           trial.coordinate;
    trial.origin = "mkb-import:" + sha256Hex(identity);
    trial.archived = folder.archived;
    trial.archivedAt = folder.archivedAt;

    if (submissionsText) {
        int lineNumber = 0;
        for (const std::string& line : splitString(*submissionsText, '\n')) {
            ++lineNumber;
            if (trimmed(line).empty()) {
                continue;
            }
            json entry = json::parse(line, nullptr, false);
            if (entry.is_discarded() || !entry.is_object()) {
                return makeError("submissions.jsonl line " + std::to_string(lineNumber) + " is not a JSON object");
            }
            SubmissionRecord submission;
            submission.index = static_cast<int>(parsed.submissions.size()) + 1;
            const json entryRewards = entry.value("rewards", json());
            submission.verdict = entryRewards.is_object() ? verdictFromRewards(entryRewards) : Verdict{};
            if (!entry.value("counted", true)) {
                submission.verdict.error = "not counted: " + entry.value("note", std::string("no reason given"));
            }
            submission.verdict.json = line;
            submission.evalSeconds = optionalNumber<double>(entry, "eval_sec").value_or(0.0);
            submission.verdict.evalSeconds = submission.evalSeconds;
            parsed.submissions.push_back(std::move(submission));
        }
    }
    if (kernel) {
        SubmissionRecord finalEvaluation;
        finalEvaluation.index = 0;
        finalEvaluation.kernelSource = *kernel;
        finalEvaluation.verdict = outcome.verdict.value_or(Verdict{});
        finalEvaluation.evalSeconds = finalEvaluation.verdict.evalSeconds;
        parsed.submissions.push_back(std::move(finalEvaluation));
    }
    return parsed;
}

/// Problem folder name -> family, from results.json's cells.
std::map<std::string, std::string> familiesFromSnapshot(const fs::path& modelDir) {
    std::map<std::string, std::string> families;
    auto snapshot = parseJsonFile(modelDir / "results.json");
    if (!snapshot || !snapshot->is_object() || !snapshot->contains("cells") || !(*snapshot)["cells"].is_array()) {
        return families;
    }
    for (const json& cell : (*snapshot)["cells"]) {
        if (cell.is_object() && cell.contains("cell") && cell["cell"].is_object()) {
            const json& spec = cell["cell"];
            if (spec.contains("problem") && spec["problem"].is_string() && spec.contains("category") &&
                spec["category"].is_string()) {
                families[spec["problem"].get<std::string>()] = spec["category"].get<std::string>();
            }
        }
    }
    return families;
}

class ModelImporter {
public:
    ModelImporter(Store& store, const fs::path& modelDir, const ImportOptions& options, ImportSummary& summary)
        : store_(store), modelDir_(modelDir), options_(options), summary_(summary) {}

    /// Reads the model's identity and lists its trial folders in import order; writes nothing.
    /// False (with an issue) when store.json does not name the model and its folder prefix.
    bool scan() {
        auto identity = parseJsonFile(modelDir_ / "store.json");
        if (!identity || !identity->is_object() || !(*identity).contains("model") ||
            !(*identity)["model"].is_string() || !(*identity).contains("prefix") ||
            !(*identity)["prefix"].is_string()) {
            issue(modelDir_ / "store.json",
                  identity ? "needs string fields 'model' and 'prefix'" : identity.error().message);
            return false;
        }
        model_ = (*identity)["model"].get<std::string>();
        prefix_ = (*identity)["prefix"].get<std::string>();
        if ((*identity).contains("created_at")) {
            createdAt_ = (*identity)["created_at"];
        }
        folders_ = findTrialFolders();
        // Archived versions first (oldest first), then live solos, then live skill arms (they link to solos).
        std::stable_sort(folders_.begin(), folders_.end(), [](const TrialFolder& a, const TrialFolder& b) {
            auto rank = [](const TrialFolder& f) { return f.archived ? 0 : (f.coordinate.arm.isSkill() ? 2 : 1); };
            if (rank(a) != rank(b)) {
                return rank(a) < rank(b);
            }
            return a.archivedAt < b.archivedAt;
        });
        return true;
    }

    /// Files the model and its invocations and reads what the store already holds of it, right before its first
    /// trial (so a model folder imported earlier in the same call is seen). False when the model cannot be filed.
    bool begin() {
        json settings = {{"source", "metakernelbench"}, {"prefix", prefix_}, {"results_folder", modelDir_.string()}};
        if (!createdAt_.is_null()) {
            settings["created_at"] = createdAt_;
        }
        if (auto model = store_.ensureModel(model_, "imported", settings.dump()); !model) {
            issue(modelDir_, model.error().message);
            return false;
        }
        ++summary_.models;
        families_ = familiesFromSnapshot(modelDir_);
        importInvocations();
        loadExistingTrials();
        return true;
    }

    std::size_t trialCount() const { return folders_.size(); }

    /// "<model> · <problem folder> · <coordinate>", what the progress callback is told.
    std::string describeTrial(std::size_t index) const {
        const TrialFolder& folder = folders_[index];
        return model_ + " · " + folder.problemStem + " · " + formatCoordinate(folder.coordinate) +
               (folder.archived ? " (archived " + folder.archivedAt + ")" : "");
    }

    void importTrialAt(std::size_t index) { importTrial(folders_[index]); }

private:
    void issue(const fs::path& path, const std::string& message) { summary_.issues.push_back({path, message}); }

    void importInvocations() {
        auto text = readOptionalFile(modelDir_ / "invocations.jsonl");
        if (!text) {
            return;
        }
        std::set<std::string> known;
        if (auto existing = store_.invocations()) {
            for (const InvocationRecord& invocation : *existing) {
                known.insert(invocation.settingsJson);
            }
        }
        int lineNumber = 0;
        for (const std::string& line : splitString(*text, '\n')) {
            ++lineNumber;
            if (trimmed(line).empty()) {
                continue;
            }
            json entry = json::parse(line, nullptr, false);
            if (entry.is_discarded() || !entry.is_object()) {
                issue(modelDir_ / "invocations.jsonl", "line " + std::to_string(lineNumber) + " is not a JSON object");
                continue;
            }
            json tagged = {{"model", model_}, {"imported", entry}};
            if (known.count(tagged.dump())) {
                continue;
            }
            InvocationRecord invocation;
            for (const char* key : {"started_at", "timestamp", "created_at"}) {
                if (entry.contains(key) && entry[key].is_string()) {
                    invocation.startedAt = entry[key].get<std::string>();
                    break;
                }
            }
            if (entry.contains("argv")) {
                invocation.commandLine =
                    entry["argv"].is_string() ? entry["argv"].get<std::string>() : entry["argv"].dump();
            }
            invocation.settingsJson = tagged.dump();
            if (auto written = store_.beginInvocation(invocation)) {
                known.insert(invocation.settingsJson);
                ++summary_.invocationsImported;
            } else {
                issue(modelDir_ / "invocations.jsonl", written.error().message);
            }
        }
    }

    void loadExistingTrials() {
        TrialFilter filter;
        filter.model = model_;
        filter.suite = options_.suite;
        filter.includeArchived = true;
        auto trials = store_.loadTrials(filter);
        if (!trials) {
            issue(modelDir_, trials.error().message);
            return;
        }
        for (const TrialRecord& trial : *trials) {
            if (trial.archived) {
                if (!trial.origin.empty()) {
                    archivedOrigins_.insert(trial.origin);
                }
                continue;
            }
            const std::string key = liveKey(trial.problemNumber, trial.replicate, trial.arm);
            liveTrials_[key] = trial.id;
            liveOrigins_[key] = trial.origin;
        }
    }

    static std::string liveKey(int number, int replicate, const std::string& arm) {
        return std::to_string(number) + "/" + std::to_string(replicate) + "/" + arm;
    }

    std::vector<TrialFolder> findTrialFolders() {
        std::vector<TrialFolder> folders;
        std::map<int, std::string> stemByNumber;
        std::error_code ec;
        const fs::path problemsDir = modelDir_ / "problems";
        if (fs::is_directory(problemsDir, ec)) {
            for (const auto& problemEntry : fs::directory_iterator(problemsDir, ec)) {
                if (!problemEntry.is_directory()) {
                    continue;
                }
                const std::string stem = problemEntry.path().filename().string();
                auto problem = splitProblemStem(stem);
                if (!problem) {
                    issue(problemEntry.path(), "problem folder is not named NN_slug; skipped");
                    continue;
                }
                stemByNumber[problem->first] = stem;
                for (const auto& trialEntry : fs::directory_iterator(problemEntry.path(), ec)) {
                    const std::string name = trialEntry.path().filename().string();
                    if (!trialEntry.is_directory() || name == "skills" || startsWith(name, ".")) {
                        continue;
                    }
                    auto coordinate = coordinateOfFolder(name, prefix_);
                    if (!coordinate) {
                        issue(trialEntry.path(), coordinate.error().message + "; skipped");
                        continue;
                    }
                    if (coordinate->problemNumber != problem->first) {
                        issue(trialEntry.path(), "coordinate names problem " +
                                                     std::to_string(coordinate->problemNumber) + " inside folder " +
                                                     stem + "; skipped");
                        continue;
                    }
                    folders.push_back({trialEntry.path(), stem, *coordinate, false, ""});
                }
            }
        }
        const fs::path archiveDir = modelDir_ / "archive";
        if (fs::is_directory(archiveDir, ec)) {
            for (const auto& entry : fs::directory_iterator(archiveDir, ec)) {
                if (!entry.is_directory()) {
                    continue;
                }
                auto [archivedAt, name] = splitArchiveName(entry.path().filename().string());
                auto coordinate = coordinateOfFolder(name, prefix_);
                if (!coordinate) {
                    issue(entry.path(), coordinate.error().message + "; skipped");
                    continue;
                }
                auto stem = stemByNumber.find(coordinate->problemNumber);
                if (stem == stemByNumber.end()) {
                    issue(entry.path(), "archived trial of problem " + std::to_string(coordinate->problemNumber) +
                                            " has no problem folder to name it; skipped");
                    continue;
                }
                folders.push_back({entry.path(), stem->second, *coordinate, true,
                                   archivedAt.empty() ? entry.path().filename().string() : archivedAt});
            }
        }
        return folders;
    }

    std::string familyOf(const std::string& stem) {
        if (auto it = families_.find(stem); it != families_.end()) {
            return it->second;
        }
        if (auto it = options_.familyByProblem.find(stem); it != options_.familyByProblem.end()) {
            return it->second;
        }
        if (warnedFamilies_.insert(stem).second) {
            issue(modelDir_ / "problems" / stem,
                  "family unknown (results.json has no cell for it and no catalog names it); filed as 'unknown'");
        }
        return "unknown";
    }

    void importTrial(const TrialFolder& folder) {
        auto parsed = parseTrialFolder(folder, model_, options_.suite, familyOf(folder.problemStem));
        if (!parsed) {
            issue(folder.dir, parsed.error().message + "; trial skipped");
            return;
        }
        TrialRecord& trial = parsed->record;
        const std::string key = liveKey(trial.problemNumber, trial.replicate, trial.arm);
        // Unchanged means: this content is already stored in the same role. A live folder whose content equals an
        // archived trial's (a redo that came out byte-identical) is still imported as the live trial.
        auto liveOrigin = liveOrigins_.find(key);
        const bool unchanged = folder.archived ? archivedOrigins_.count(trial.origin) > 0
                                               : liveOrigin != liveOrigins_.end() && liveOrigin->second == trial.origin;
        if (unchanged) {
            ++summary_.trialsUnchanged;
            return;
        }
        if (folder.coordinate.arm.isSkill()) {
            auto source = liveTrials_.find(
                liveKey(trial.problemNumber, trial.replicate, soloArm(folder.coordinate.arm.sourceDsl).name()));
            if (source != liveTrials_.end()) {
                trial.sourceTrialId = source->second;
            }
        }
        bool replacing = false;
        std::int64_t newId = 0;
        Status written = store_.transaction([&]() -> Status {
            // An archived folder is history: it is written archived and never disturbs the live trial.
            auto live = liveTrials_.find(key);
            if (!folder.archived && live != liveTrials_.end()) {
                if (auto archived = store_.archiveTrial(live->second); !archived) {
                    return archived.error();
                }
                replacing = true;
            }
            auto id = store_.insertFinishedTrial(trial, parsed->outcome);
            if (!id) {
                return id.error();
            }
            for (SubmissionRecord& submission : parsed->submissions) {
                submission.trialId = *id;
                if (auto added = store_.addSubmission(submission); !added) {
                    return added.error();
                }
            }
            newId = *id;
            return Ok{};
        });
        if (!written) {
            issue(folder.dir, "could not be stored: " + written.error().message);
            return;
        }
        if (folder.archived) {
            archivedOrigins_.insert(trial.origin);
        } else {
            if (replacing && liveOrigin != liveOrigins_.end()) {
                archivedOrigins_.insert(liveOrigin->second); // the replaced live trial is history now
            }
            liveTrials_[key] = newId;
            liveOrigins_[key] = trial.origin;
        }
        summary_.submissionsImported += static_cast<int>(parsed->submissions.size());
        if (replacing) {
            ++summary_.trialsReplaced;
        } else {
            ++summary_.trialsImported;
        }
    }

    Store& store_;
    fs::path modelDir_;
    const ImportOptions& options_;
    ImportSummary& summary_;
    std::string model_;
    std::string prefix_;
    json createdAt_;
    std::vector<TrialFolder> folders_;
    std::map<std::string, std::string> families_;
    std::set<std::string> archivedOrigins_;          // content of the archived trials
    std::map<std::string, std::int64_t> liveTrials_; // live trial id per (problem, replicate, arm)
    std::map<std::string, std::string> liveOrigins_; // its content's origin
    std::set<std::string> warnedFamilies_;
};

} // namespace

Result<ImportSummary> importMetaKernelBenchResults(Store& store, const std::filesystem::path& folder,
                                                   const ImportOptions& options) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
        return makeError("results folder " + folder.string() + " does not exist or is not a folder");
    }
    std::vector<fs::path> modelDirs;
    if (fs::is_regular_file(folder / "store.json", ec)) {
        modelDirs.push_back(folder);
    } else {
        for (const auto& entry : fs::directory_iterator(folder, ec)) {
            if (entry.is_directory() && fs::is_regular_file(entry.path() / "store.json", ec)) {
                modelDirs.push_back(entry.path());
            }
        }
        std::sort(modelDirs.begin(), modelDirs.end());
    }
    if (modelDirs.empty()) {
        return makeError(folder.string() +
                         " holds no MetaKernelBench model folder (a folder with store.json); point at results/ or "
                         "results/<model>/");
    }
    ImportSummary summary;
    std::vector<std::unique_ptr<ModelImporter>> importers;
    std::size_t total = 0;
    for (const fs::path& modelDir : modelDirs) {
        auto importer = std::make_unique<ModelImporter>(store, modelDir, options, summary);
        if (importer->scan()) {
            total += importer->trialCount();
            importers.push_back(std::move(importer));
        }
    }
    summary.trialsTotal = static_cast<int>(total);
    std::size_t done = 0;
    for (const auto& importer : importers) {
        if (importer->trialCount() == 0) {
            importer->begin(); // a model folder without trials still files its model and invocations
            continue;
        }
        bool begun = false;
        for (std::size_t index = 0; index < importer->trialCount(); ++index, ++done) {
            if (options.progress && !options.progress(done, total, importer->describeTrial(index))) {
                summary.cancelled = true;
                return summary;
            }
            if (!begun && !importer->begin()) {
                done += importer->trialCount() - index; // the model could not be filed: none of its trials can
                break;
            }
            begun = true;
            importer->importTrialAt(index);
        }
    }
    if (options.progress) {
        options.progress(total, total, {});
    }
    return summary;
}

} // namespace mkb
