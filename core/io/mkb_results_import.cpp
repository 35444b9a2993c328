// Reads MetaKernelBench's on-disk results (store.json, record.json, verdict.json, submissions.jsonl, artifacts,
// archive/) and files every trial in the project store, so that re-importing the same folder changes nothing.
// Longer than 600 lines because the import is one walk over MetaKernelBench's folder layout whose checks share its
// state; a candidate for a split by file kind (record, verdict, submissions, archive).
#include "core/io/mkb_results_import.h"

#include "core/io/trial_filing.h"
#include "core/util/json_input.h"
#include "core/util/sha256.h"
#include "core/util/text.h"
#include "core/vocabulary/arms.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
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

/// True when path (resolved) is root or lies below it, compared component by component.
bool isInside(const fs::path& path, const fs::path& root) {
    auto at = path.begin();
    for (const fs::path& part : root) {
        if (at == path.end() || *at != part) {
            return false;
        }
        ++at;
    }
    return true;
}

/// Reads name (relative to dir, which is how messages call it) when it exists. Only a regular file whose real path
/// lies inside root (the results folder) is read: a link out of the folder (kernel.py -> /etc/passwd), a link loop,
/// a FIFO or a device is an error naming the file, never its content.
Result<std::optional<std::string>> readFileInside(const fs::path& dir, const fs::path& name, const fs::path& root) {
    const fs::path path = dir / name;
    std::error_code ec;
    const fs::file_status link = fs::symlink_status(path, ec);
    if (link.type() == fs::file_type::not_found || (ec && ec == std::errc::no_such_file_or_directory)) {
        return std::optional<std::string>();
    }
    if (ec) {
        return makeError(name.string() + ": cannot be read: " + ec.message());
    }
    const fs::path real = fs::canonical(path, ec);
    if (ec) {
        return makeError(name.string() + ": is a link that cannot be followed (" + ec.message() + ")");
    }
    if (!isInside(real, root)) {
        return makeError(name.string() + ": is a link to " + real.string() + ", outside the results folder " +
                         root.string() + "; only files inside it are read");
    }
    if (!fs::is_regular_file(real, ec)) {
        return makeError(name.string() + ": is not a regular file (a folder, FIFO or device); only files are read");
    }
    auto text = readFile(real);
    if (!text) {
        return makeError(name.string() + ": " + text.error().message);
    }
    return std::optional<std::string>(std::move(text).value());
}

/// A value as a message shows it: numbers, booleans and null as written, anything else by its kind (no raw text).
std::string describe(const json& value) {
    switch (value.type()) {
    case json::value_t::null:
    case json::value_t::boolean:
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
        if (const double number = value.is_number_float() ? value.get<double>() : 0.0; !std::isfinite(number)) {
            // Python's json writes these bare tokens for float('nan') and the infinities; so do they read here.
            return std::isnan(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity";
        }
        return value.dump();
    case json::value_t::string:
        return "a string";
    case json::value_t::array:
        return "an array";
    case json::value_t::object:
        return "an object";
    default:
        return "not a JSON value";
    }
}

/// Checked reads of one JSON object's fields. A field that is absent (or null, where the field is optional) leaves
/// its default; a field of the wrong type or out of range is an error naming the file and the field.
class FieldReader {
public:
    FieldReader(const json& object, std::string file, std::string prefix = {})
        : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

    /// true or false; absent gives absentValue. null is an error: the writer always writes a boolean here.
    Result<bool> flag(const char* key, bool absentValue) const {
        const json* value = find(key);
        if (!value) {
            return absentValue;
        }
        if (!value->is_boolean()) {
            return wrong(key, *value, "true or false");
        }
        return value->get<bool>();
    }

    /// A finite number >= 0 (a reward, a speedup, a cost, seconds), or absent/null.
    Result<std::optional<double>> amount(const char* key) const {
        const json* value = find(key);
        if (!value || value->is_null()) {
            return std::optional<double>();
        }
        if (!value->is_number()) {
            return wrong(key, *value, "a number");
        }
        const double number = value->get<double>();
        if (!std::isfinite(number) || number < 0) {
            return wrong(key, *value, "a finite number >= 0");
        }
        return std::optional<double>(number);
    }

    /// A whole number from 0 to INT64_MAX (a token count), or absent/null. 1e308 or -5 is an error, never a wrapped
    /// value.
    Result<std::optional<std::int64_t>> count(const char* key) const {
        const json* value = find(key);
        if (!value || value->is_null()) {
            return std::optional<std::int64_t>();
        }
        constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
        const char* expected = "a whole number from 0 to 9223372036854775807";
        if (value->is_number_unsigned()) {
            const auto number = value->get<std::uint64_t>();
            if (number > static_cast<std::uint64_t>(kMax)) {
                return wrong(key, *value, expected);
            }
            return std::optional<std::int64_t>(static_cast<std::int64_t>(number));
        }
        if (value->is_number_integer()) {
            const auto number = value->get<std::int64_t>();
            if (number < 0) {
                return wrong(key, *value, expected);
            }
            return std::optional<std::int64_t>(number);
        }
        if (value->is_number_float()) {
            const double number = value->get<double>();
            // 2^63 is the first double past INT64_MAX; below it every whole double converts exactly.
            if (!std::isfinite(number) || number < 0 || number >= 9223372036854775808.0 ||
                number != std::floor(number)) {
                return wrong(key, *value, expected);
            }
            return std::optional<std::int64_t>(static_cast<std::int64_t>(number));
        }
        return wrong(key, *value, expected);
    }

    /// A string, or absent/null.
    Result<std::optional<std::string>> text(const char* key) const {
        const json* value = find(key);
        if (!value || value->is_null()) {
            return std::optional<std::string>();
        }
        if (!value->is_string()) {
            return wrong(key, *value, "a string");
        }
        return std::optional<std::string>(value->get<std::string>());
    }

    /// An object; nullptr when absent or null, unless required (then an error).
    Result<const json*> object(const char* key, bool required) const {
        const json* value = find(key);
        if (!value || value->is_null()) {
            if (required) {
                return makeError(file_ + ": has no field '" + prefix_ + key + "'" +
                                 (value ? " (it is null), expected an object" : ""));
            }
            return static_cast<const json*>(nullptr);
        }
        if (!value->is_object()) {
            return wrong(key, *value, "an object");
        }
        return value;
    }

private:
    const json* find(const char* key) const {
        auto it = object_.find(key);
        return it == object_.end() ? nullptr : &*it;
    }
    Error wrong(const char* key, const json& value, const char* expected) const {
        return makeError(file_ + ": field '" + prefix_ + key + "' is " + describe(value) + ", expected " + expected);
    }

    const json& object_;
    std::string file_;
    std::string prefix_;
};

/// Parses one JSON object from outside, in Python's dialect (NaN and the infinities read as numbers, so the field
/// that holds one is named); the error gives the cause (syntax and where, too deep, not an object).
Result<json> parseObject(std::string_view text, const std::string& file, bool* readPythonTokens = nullptr) {
    auto value = parsePythonJsonInput(text, readPythonTokens);
    if (!value) {
        return makeError(file + ": " + value.error().message);
    }
    if (!value->is_object()) {
        return makeError(file + ": is " + describe(*value) + ", expected a JSON object");
    }
    return value;
}

/// The verdict a rewards object states (file names where it came from, for errors).
Result<Verdict> verdictFromRewards(const json& rewards, const std::string& file) {
    FieldReader reader(rewards, file, "rewards.");
    auto imported = reader.amount("imported");
    auto correct = reader.amount("correct");
    auto passed = reader.amount("passed");
    auto speedup = reader.amount("speedup_vs_eager");
    for (const auto* read : {&imported, &correct, &passed, &speedup}) {
        if (!*read) {
            return read->error();
        }
    }
    Verdict verdict;
    verdict.imported = imported->value_or(0.0) >= 1.0;
    verdict.correct = correct->value_or(0.0) >= 1.0;
    verdict.passed = passed->value_or(0.0) >= 1.0;
    verdict.speedupVsEager = verdict.passed || verdict.correct ? speedup->value_or(0.0) : 0.0;
    verdict.compliant = verdict.imported;
    verdict.stage = verdict.passed ? "done" : "";
    verdict.boundary = "mkb"; // graded by MetaKernelBench itself, under its own implementation boundary
    return verdict;
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

/// The entries of a folder, in name order; entries that cannot be examined (a link loop, a vanished entry) are
/// reported through onError and left out. Never throws.
template <typename OnError>
std::vector<fs::path> subfolders(const fs::path& dir, OnError onError) {
    std::vector<fs::path> folders;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
        onError(dir, "cannot be listed: " + ec.message());
        return folders;
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        std::error_code entryError;
        const bool folder = it->is_directory(entryError);
        if (entryError) {
            onError(it->path(), "cannot be examined (" + entryError.message() + "); skipped");
        } else if (folder) {
            folders.push_back(it->path());
        }
    }
    if (ec) {
        onError(dir, "could not be listed to the end: " + ec.message());
    }
    std::sort(folders.begin(), folders.end());
    return folders;
}

/// record.json's outcome fields: error, skipped, timed_out, usage, stamps.
Status readOutcome(const json& record, TrialRecord& trial, TrialOutcome& outcome) {
    const FieldReader fields(record, "record.json");
    auto timedOut = fields.flag("timed_out", false);
    if (!timedOut) {
        return timedOut.error();
    }
    outcome.timedOut = *timedOut;
    const json errorValue = record.value("error", json());
    const json skippedValue = record.value("skipped", json());
    if (!errorValue.is_null()) {
        outcome.status = TrialStatus::InfrastructureError;
        outcome.error = errorValue.is_string() ? errorValue.get<std::string>() : errorValue.dump();
    } else if (!skippedValue.is_null() && !(skippedValue.is_boolean() && !skippedValue.get<bool>())) {
        outcome.status = TrialStatus::Skipped;
        outcome.skipped = true;
        outcome.error = skippedValue.is_string() ? "skipped: " + skippedValue.get<std::string>() : "skipped";
    } else {
        outcome.status = TrialStatus::Finished;
    }
    auto usage = fields.object("usage", false);
    if (!usage) {
        return usage.error();
    }
    if (*usage) {
        const FieldReader reader(**usage, "record.json", "usage.");
        auto input = reader.count("n_input_tokens");
        auto cache = reader.count("n_cache_tokens");
        auto output = reader.count("n_output_tokens");
        auto cost = reader.amount("cost_usd");
        auto seconds = reader.amount("agent_sec");
        for (const auto* read : {&input, &cache, &output}) {
            if (!*read) {
                return read->error();
            }
        }
        for (const auto* read : {&cost, &seconds}) {
            if (!*read) {
                return read->error();
            }
        }
        outcome.usage.inputTokens = *input;
        outcome.usage.cacheTokens = *cache;
        outcome.usage.outputTokens = *output;
        outcome.usage.costUsd = *cost;
        outcome.usage.agentSeconds = *seconds;
    }
    auto stamps = fields.object("stamps", false);
    if (!stamps) {
        return stamps.error();
    }
    if (*stamps) {
        const FieldReader reader(**stamps, "record.json", "stamps.");
        auto fingerprint = reader.text("task_fingerprint");
        auto skill = reader.text("skill_sha256");
        for (const auto* read : {&fingerprint, &skill}) {
            if (!*read) {
                return read->error();
            }
        }
        trial.problemFingerprint = fingerprint->value_or("");
        trial.sourceSkillSha256 = skill->value_or("");
    }
    trial.timedOut = outcome.timedOut;
    trial.skipped = outcome.skipped;
    return Ok{};
}

/// submissions.jsonl: one feedback evaluation per line.
Result<std::vector<SubmissionRecord>> readSubmissions(const std::string& text) {
    std::vector<SubmissionRecord> submissions;
    int lineNumber = 0;
    for (const std::string& line : splitString(text, '\n')) {
        ++lineNumber;
        if (trimmed(line).empty()) {
            continue;
        }
        const std::string file = "submissions.jsonl line " + std::to_string(lineNumber);
        auto entry = parseObject(line, file);
        if (!entry) {
            return entry.error();
        }
        const FieldReader fields(*entry, file);
        SubmissionRecord submission;
        submission.index = static_cast<int>(submissions.size()) + 1;
        auto rewards = fields.object("rewards", false);
        if (!rewards) {
            return rewards.error();
        }
        if (*rewards) {
            auto verdict = verdictFromRewards(**rewards, file);
            if (!verdict) {
                return verdict.error();
            }
            submission.verdict = *verdict;
        }
        auto counted = fields.flag("counted", true);
        auto note = fields.text("note");
        auto seconds = fields.amount("eval_sec");
        if (!counted) {
            return counted.error();
        }
        if (!note) {
            return note.error();
        }
        if (!seconds) {
            return seconds.error();
        }
        if (!*counted) {
            submission.verdict.error = "not counted: " + note->value_or("no reason given");
        }
        submission.verdict.json = line;
        submission.evalSeconds = seconds->value_or(0.0);
        submission.verdict.evalSeconds = submission.evalSeconds;
        submissions.push_back(std::move(submission));
    }
    return submissions;
}

Result<ParsedTrial> parseTrialFolder(const TrialFolder& folder, const fs::path& root, const std::string& model,
                                     const std::string& suite, const std::string& family) {
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

    auto recordText = readFileInside(folder.dir, "record.json", root);
    if (!recordText) {
        return recordText.error();
    }
    if (!*recordText) {
        return makeError("record.json: is missing");
    }
    auto record = parseObject(**recordText, "record.json");
    if (!record) {
        return record.error();
    }
    auto rewards = FieldReader(*record, "record.json").object("rewards", true);
    if (!rewards) {
        return rewards.error();
    }
    auto rewardsVerdict = verdictFromRewards(**rewards, "record.json");
    if (!rewardsVerdict) {
        return rewardsVerdict.error();
    }

    // verdict.json, when present, must be whole: a truncated one (it does not parse, or lacks its rewards) is
    // reported rather than stored verbatim as the trial's verdict.
    auto verdictText = readFileInside(folder.dir, "verdict.json", root);
    if (!verdictText) {
        return verdictText.error();
    }
    std::optional<double> verdictSeconds;
    std::string verdictStored = *verdictText ? **verdictText : std::string();
    if (*verdictText) {
        bool pythonTokens = false;
        auto verdictJson = parseObject(**verdictText, "verdict.json", &pythonTokens);
        if (!verdictJson) {
            return makeError(verdictJson.error().message + " (truncated or not written by MetaKernelBench?)");
        }
        const FieldReader fields(*verdictJson, "verdict.json");
        if (auto verdictRewards = fields.object("rewards", true); !verdictRewards) {
            return makeError(verdictRewards.error().message + " (truncated or not written by MetaKernelBench?)");
        }
        auto seconds = fields.amount("eval_sec");
        if (!seconds) {
            return seconds.error();
        }
        verdictSeconds = *seconds;
        if (pythonTokens) {
            verdictStored = verdictJson->dump(); // Python's NaN tokens: kept as JSON (null), so every reader parses it
        }
    }

    TrialOutcome& outcome = parsed.outcome;
    if (Status read = readOutcome(*record, trial, outcome); !read) {
        return read.error();
    }
    if (outcome.status == TrialStatus::Finished) {
        Verdict verdict = *rewardsVerdict;
        verdict.json = *verdictText ? verdictStored : (*rewards)->dump();
        verdict.evalSeconds = verdictSeconds.value_or(0.0);
        outcome.verdict = verdict;
    }

    auto kernel = readFileInside(folder.dir, fs::path("artifacts") / "app" / "kernel.py", root);
    auto skill = readFileInside(folder.dir, fs::path("artifacts") / "app" / "SKILL.md", root);
    auto submissionsText = readFileInside(folder.dir, "submissions.jsonl", root);
    for (const auto* read : {&kernel, &skill, &submissionsText}) {
        if (!*read) {
            return read->error();
        }
    }
    outcome.skillText = *skill;

    // Identity of the imported content: the same folder imported twice maps to the same origin.
    std::string identity = **recordText + '\0' + verdictText->value_or("") + '\0' + kernel->value_or("") + '\0' +
                           outcome.skillText.value_or("") + '\0' + submissionsText->value_or("") + '\0' +
                           trial.coordinate;
    trial.origin = "mkb-import:" + sha256Hex(identity);
    trial.archived = folder.archived;
    trial.archivedAt = folder.archivedAt;

    if (*submissionsText) {
        auto submissions = readSubmissions(**submissionsText);
        if (!submissions) {
            return submissions.error();
        }
        parsed.submissions = std::move(submissions).value();
    }
    if (*kernel) {
        SubmissionRecord finalEvaluation;
        finalEvaluation.index = 0;
        finalEvaluation.kernelSource = **kernel;
        finalEvaluation.verdict = outcome.verdict.value_or(Verdict{});
        finalEvaluation.evalSeconds = finalEvaluation.verdict.evalSeconds;
        parsed.submissions.push_back(std::move(finalEvaluation));
    }
    return parsed;
}

class ModelImporter {
public:
    ModelImporter(Store& store, const fs::path& modelDir, const fs::path& root, const ImportOptions& options,
                  ImportSummary& summary)
        : store_(store), modelDir_(modelDir), root_(root), options_(options), summary_(summary) {}

    /// Reads the model's identity and lists its trial folders in import order; writes nothing.
    /// False (with an issue) when store.json does not name the model and its folder prefix.
    bool scan() {
        auto identity = readModelFile("store.json");
        if (!identity) {
            issue(modelDir_ / "store.json", identity.error().message + "; model folder skipped");
            return false;
        }
        const FieldReader fields(*identity, "store.json");
        auto model = fields.text("model");
        auto prefix = fields.text("prefix");
        std::string wrong = !model ? model.error().message : !prefix ? prefix.error().message : "";
        if (wrong.empty() && (!*model || !*prefix || (*model)->empty() || (*prefix)->empty())) {
            wrong = "store.json: needs non-empty string fields 'model' and 'prefix'";
        }
        if (!wrong.empty()) {
            issue(modelDir_ / "store.json", wrong + "; model folder skipped");
            return false;
        }
        model_ = **model;
        prefix_ = **prefix;
        if (identity->contains("created_at")) {
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

    /// Files the model and its invocations, right before its first trial. False when the model cannot be filed.
    bool begin() {
        json settings = {{"source", "metakernelbench"}, {"prefix", prefix_}, {"results_folder", modelDir_.string()}};
        if (!createdAt_.is_null()) {
            settings["created_at"] = createdAt_;
        }
        if (auto model = store_.ensureModel(model_, "imported", settings.dump()); !model) {
            storeIssue(modelDir_, model.error().message);
            return false;
        }
        ++summary_.models;
        families_ = familiesFromSnapshot();
        importInvocations();
        return true;
    }

    std::size_t trialCount() const { return folders_.size(); }

    /// "<model> · <problem folder> · <coordinate>", what the progress callback is told.
    std::string describeTrial(std::size_t index) const {
        const TrialFolder& folder = folders_[index];
        return model_ + " · " + folder.problemStem + " · " + formatCoordinate(folder.coordinate) +
               (folder.archived ? " (archived " + folder.archivedAt + ")" : "");
    }

    void importTrialAt(std::size_t index) {
        const TrialFolder& folder = folders_[index];
        // Every field is read through checked accessors; this is the last guard that keeps one trial's unforeseen
        // value from ending the whole import.
        try {
            importTrial(folder);
        } catch (const nlohmann::json::exception& error) {
            issue(folder.dir,
                  std::string("unexpected JSON value (") + error.what() + "); trial skipped (please report this)");
        } catch (const fs::filesystem_error& error) {
            issue(folder.dir, std::string("cannot be read (") + error.what() + "); trial skipped");
        }
    }

private:
    void issue(const fs::path& path, const std::string& message) { summary_.issues.push_back({path, message}); }
    /// A write to the store failed: that is no fault of the results folder, and the import stops (the next write
    /// would wait for the same lock or fail on the same disk).
    void storeIssue(const fs::path& path, const std::string& message) {
        issue(path, message);
        if (!summary_.storeFailure) {
            summary_.storeFailure = message;
        }
    }

    /// A JSON object file of the model folder (store.json, results.json), read like the trial files.
    Result<json> readModelFile(const char* name) {
        auto text = readFileInside(modelDir_, name, root_);
        if (!text) {
            return text.error();
        }
        if (!*text) {
            return makeError(std::string(name) + ": is missing");
        }
        return parseObject(**text, name);
    }

    /// Problem folder name -> family, from results.json's cells.
    std::map<std::string, std::string> familiesFromSnapshot() {
        std::map<std::string, std::string> families;
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(modelDir_ / "results.json", ec))) {
            return families;
        }
        auto snapshot = readModelFile("results.json");
        if (!snapshot) {
            issue(modelDir_ / "results.json", snapshot.error().message + "; families taken from --problems only");
            return families;
        }
        if (!snapshot->contains("cells") || !(*snapshot)["cells"].is_array()) {
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

    void importInvocations() {
        auto text = readFileInside(modelDir_, "invocations.jsonl", root_);
        if (!text) {
            issue(modelDir_ / "invocations.jsonl", text.error().message);
            return;
        }
        if (!*text) {
            return;
        }
        // The check against the stored invocations and the inserts share one write transaction, so two imports of
        // the same folder at once file each invocation once.
        Status written = store_.transaction([&]() -> Status {
            std::set<std::string> known;
            auto existing = store_.invocations();
            if (!existing) {
                return existing.error();
            }
            for (const InvocationRecord& invocation : *existing) {
                known.insert(invocation.settingsJson);
            }
            int lineNumber = 0;
            for (const std::string& line : splitString(**text, '\n')) {
                ++lineNumber;
                if (trimmed(line).empty()) {
                    continue;
                }
                auto entry = parseObject(line, "invocations.jsonl line " + std::to_string(lineNumber));
                if (!entry) {
                    issue(modelDir_ / "invocations.jsonl", entry.error().message + "; invocation skipped");
                    continue;
                }
                json tagged = {{"model", model_}, {"imported", *entry}};
                if (known.count(tagged.dump())) {
                    continue;
                }
                InvocationRecord invocation;
                for (const char* key : {"started_at", "timestamp", "created_at"}) {
                    if (entry->contains(key) && (*entry)[key].is_string()) {
                        invocation.startedAt = (*entry)[key].get<std::string>();
                        break;
                    }
                }
                if (entry->contains("argv")) {
                    invocation.commandLine =
                        (*entry)["argv"].is_string() ? (*entry)["argv"].get<std::string>() : (*entry)["argv"].dump();
                }
                invocation.settingsJson = tagged.dump();
                auto started = store_.beginInvocation(invocation);
                if (!started) {
                    return started.error();
                }
                known.insert(invocation.settingsJson);
                ++summary_.invocationsImported;
            }
            return Ok{};
        });
        if (!written) {
            storeIssue(modelDir_ / "invocations.jsonl", written.error().message);
        }
    }

    std::vector<TrialFolder> findTrialFolders() {
        std::vector<TrialFolder> folders;
        auto report = [this](const fs::path& path, const std::string& message) { issue(path, message); };
        std::error_code ec;
        // Two problem folders with one number ("01_a", "01_b") would file their trials as one problem, in directory
        // order: both are reported and skipped instead.
        std::map<int, std::vector<fs::path>> problemsByNumber;
        const fs::path problemsDir = modelDir_ / "problems";
        if (fs::is_directory(problemsDir, ec)) {
            for (const fs::path& problemDir : subfolders(problemsDir, report)) {
                if (auto problem = splitProblemStem(problemDir.filename().string())) {
                    problemsByNumber[problem->first].push_back(problemDir);
                } else {
                    issue(problemDir, "problem folder is not named NN_slug; skipped");
                }
            }
        }
        std::map<int, std::string> stemByNumber;
        for (const auto& [number, dirs] : problemsByNumber) {
            if (dirs.size() > 1) {
                for (const fs::path& dir : dirs) {
                    std::string others;
                    for (const fs::path& other : dirs) {
                        if (other != dir) {
                            others += (others.empty() ? "" : ", ") + other.filename().string();
                        }
                    }
                    issue(dir, "problem folder shares its number with " + others +
                                   "; its trials are skipped (rename or remove one)");
                }
                continue;
            }
            const fs::path& problemDir = dirs.front();
            const std::string stem = problemDir.filename().string();
            stemByNumber[number] = stem;
            for (const fs::path& trialDir : subfolders(problemDir, report)) {
                const std::string name = trialDir.filename().string();
                if (name == "skills" || startsWith(name, ".")) {
                    continue;
                }
                auto coordinate = coordinateOfFolder(name, prefix_);
                if (!coordinate) {
                    issue(trialDir, coordinate.error().message + "; skipped");
                    continue;
                }
                if (coordinate->problemNumber != number) {
                    issue(trialDir, "coordinate names problem " + std::to_string(coordinate->problemNumber) +
                                        " inside folder " + stem + "; skipped");
                    continue;
                }
                folders.push_back({trialDir, stem, *coordinate, false, ""});
            }
        }
        const fs::path archiveDir = modelDir_ / "archive";
        if (fs::is_directory(archiveDir, ec)) {
            for (const fs::path& dir : subfolders(archiveDir, report)) {
                auto [archivedAt, name] = splitArchiveName(dir.filename().string());
                auto coordinate = coordinateOfFolder(name, prefix_);
                if (!coordinate) {
                    issue(dir, coordinate.error().message + "; skipped");
                    continue;
                }
                auto stem = stemByNumber.find(coordinate->problemNumber);
                if (stem == stemByNumber.end()) {
                    const bool shared = problemsByNumber.count(coordinate->problemNumber) > 0;
                    issue(dir,
                          "archived trial of problem " + std::to_string(coordinate->problemNumber) +
                              (shared ? ", a number two problem folders share" : " has no problem folder to name it") +
                              "; skipped");
                    continue;
                }
                folders.push_back(
                    {dir, stem->second, *coordinate, true, archivedAt.empty() ? dir.filename().string() : archivedAt});
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
        auto parsed = parseTrialFolder(folder, root_, model_, options_.suite, familyOf(folder.problemStem));
        if (!parsed) {
            issue(folder.dir, parsed.error().message + "; trial skipped");
            return;
        }
        auto filed = fileTrial(store_, parsed->record, parsed->outcome, std::move(parsed->submissions));
        if (!filed) {
            storeIssue(folder.dir, "could not be stored: " + filed.error().message);
            return;
        }
        switch (filed->filed) {
        case FiledAs::Unchanged:
            ++summary_.trialsUnchanged;
            summary_.sourceLinksRepaired += filed->relinked ? 1 : 0;
            return;
        case FiledAs::Replaced:
            ++summary_.trialsReplaced;
            break;
        case FiledAs::Imported:
            ++summary_.trialsImported;
            break;
        }
        summary_.submissionsImported += filed->submissionsWritten;
    }

    Store& store_;
    fs::path modelDir_;
    fs::path root_; // the results folder's real path: only files inside it are read
    const ImportOptions& options_;
    ImportSummary& summary_;
    std::string model_;
    std::string prefix_;
    json createdAt_;
    std::vector<TrialFolder> folders_;
    std::map<std::string, std::string> families_;
    std::set<std::string> warnedFamilies_;
};

} // namespace

Result<ImportSummary> importMetaKernelBenchResults(Store& store, const std::filesystem::path& folder,
                                                   const ImportOptions& options) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
        return makeError("results folder " + folder.string() + " does not exist or is not a folder");
    }
    const fs::path root = fs::canonical(folder, ec);
    if (ec) {
        return makeError("results folder " + folder.string() + " cannot be resolved: " + ec.message());
    }
    ImportSummary summary;
    auto report = [&summary](const fs::path& path, const std::string& message) {
        summary.issues.push_back({path, message});
    };
    std::vector<fs::path> modelDirs;
    if (fs::exists(fs::symlink_status(folder / "store.json", ec))) {
        modelDirs.push_back(folder);
    } else {
        for (const fs::path& dir : subfolders(folder, report)) {
            if (fs::exists(fs::symlink_status(dir / "store.json", ec))) {
                modelDirs.push_back(dir);
            }
        }
    }
    if (modelDirs.empty()) {
        return makeError(folder.string() +
                         " holds no MetaKernelBench model folder (a folder with store.json); point at results/ or "
                         "results/<model>/");
    }
    std::vector<std::unique_ptr<ModelImporter>> importers;
    std::size_t total = 0;
    for (const fs::path& modelDir : modelDirs) {
        auto importer = std::make_unique<ModelImporter>(store, modelDir, root, options, summary);
        if (importer->scan()) {
            total += importer->trialCount();
            importers.push_back(std::move(importer));
        }
    }
    summary.trialsTotal = static_cast<int>(total);
    std::size_t done = 0;
    for (const auto& importer : importers) {
        if (summary.storeFailure) {
            return summary;
        }
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
            if (summary.storeFailure) {
                return summary;
            }
        }
    }
    if (options.progress) {
        options.progress(total, total, {});
    }
    return summary;
}

} // namespace mkb
