// The shard file format (mkb-shard/1): a trial record, its outcome and its submissions, verdicts kept verbatim.
#include "core/cluster/shard.h"

#include "core/util/json_input.h"
#include "core/util/text.h"
#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

namespace mkb::cluster {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json optionalNumber(const std::optional<std::int64_t>& value) {
    return value ? json(*value) : json();
}
json optionalNumber(const std::optional<double>& value) {
    return value ? json(*value) : json();
}

json usageToJson(const Usage& usage) {
    return {{"input_tokens", optionalNumber(usage.inputTokens)},
            {"cache_tokens", optionalNumber(usage.cacheTokens)},
            {"output_tokens", optionalNumber(usage.outputTokens)},
            {"cost_usd", optionalNumber(usage.costUsd)},
            {"agent_seconds", optionalNumber(usage.agentSeconds)}};
}

/// The verdict as the grader wrote it (or as the workbench made it, for verdicts of its own).
std::string verdictText(const Verdict& verdict) {
    return verdict.json.empty() ? verdictToJson(verdict) : verdict.json;
}

/// Reads typed fields of one JSON object; each error names the field and the file.
class Fields {
public:
    Fields(const json& object, std::string where, std::string prefix = {})
        : object_(object), where_(std::move(where)), prefix_(std::move(prefix)) {}

    Result<std::string> text(const char* key, bool required = true) const {
        const json* value = find(key);
        if (!value) {
            return required ? Result<std::string>(missing(key)) : Result<std::string>(std::string());
        }
        if (!value->is_string()) {
            return wrong(key, "a string");
        }
        return value->get<std::string>();
    }
    Result<std::optional<std::string>> optionalText(const char* key) const {
        const json* value = find(key);
        if (!value) {
            return std::optional<std::string>();
        }
        if (!value->is_string()) {
            return wrong(key, "a string or null");
        }
        return std::optional<std::string>(value->get<std::string>());
    }
    Result<std::int64_t> integer(const char* key) const {
        const json* value = find(key);
        if (!value) {
            return missing(key);
        }
        if (!value->is_number_integer()) {
            return wrong(key, "an integer");
        }
        return value->get<std::int64_t>();
    }
    Result<std::optional<std::int64_t>> optionalInteger(const char* key) const {
        const json* value = find(key);
        if (!value) {
            return std::optional<std::int64_t>();
        }
        if (!value->is_number_integer()) {
            return wrong(key, "an integer or null");
        }
        return std::optional<std::int64_t>(value->get<std::int64_t>());
    }
    Result<std::optional<double>> optionalNumber(const char* key) const {
        const json* value = find(key);
        if (!value) {
            return std::optional<double>();
        }
        if (!value->is_number()) {
            return wrong(key, "a number or null");
        }
        return std::optional<double>(value->get<double>());
    }
    Result<bool> flag(const char* key) const {
        const json* value = find(key);
        if (!value) {
            return false;
        }
        if (!value->is_boolean()) {
            return wrong(key, "true or false");
        }
        return value->get<bool>();
    }
    Result<const json*> object(const char* key) const {
        const json* value = find(key);
        if (!value || !value->is_object()) {
            return wrong(key, "an object");
        }
        return value;
    }
    Result<const json*> array(const char* key) const {
        const json* value = find(key);
        if (!value || !value->is_array()) {
            return wrong(key, "an array");
        }
        return value;
    }

private:
    const json* find(const char* key) const {
        auto it = object_.find(key);
        return it == object_.end() || it->is_null() ? nullptr : &*it;
    }
    Error missing(const char* key) const {
        return makeError(where_ + ": field '" + prefix_ + key + "' is missing (not a shard written by mkb run-shard?)");
    }
    Error wrong(const char* key, const char* expected) const {
        return makeError(where_ + ": field '" + prefix_ + key + "' must be " + expected);
    }

    const json& object_;
    std::string where_;
    std::string prefix_;
};

/// Unwraps a Result into target or returns its error from the enclosing function.
#define MKB_READ(target, expression)                                                                                   \
    do {                                                                                                               \
        auto read_ = (expression);                                                                                     \
        if (!read_) {                                                                                                  \
            return read_.error();                                                                                      \
        }                                                                                                              \
        target = std::move(read_).value();                                                                             \
    } while (false)

Result<Usage> usageFromJson(const Fields& fields) {
    Usage usage;
    MKB_READ(usage.inputTokens, fields.optionalInteger("input_tokens"));
    MKB_READ(usage.cacheTokens, fields.optionalInteger("cache_tokens"));
    MKB_READ(usage.outputTokens, fields.optionalInteger("output_tokens"));
    MKB_READ(usage.costUsd, fields.optionalNumber("cost_usd"));
    MKB_READ(usage.agentSeconds, fields.optionalNumber("agent_seconds"));
    return usage;
}

Result<Verdict> verdictFrom(const std::string& text, const std::string& where) {
    auto verdict = verdictFromJson(text);
    if (!verdict) {
        return makeError(where + ": " + verdict.error().message);
    }
    return verdict;
}

Result<TrialStatus> statusFrom(const std::string& text, const std::string& where) {
    if (auto status = trialStatusFromString(text)) {
        return *status;
    }
    return makeError(where + ": unknown trial status '" + safeOneLine(text) + "'");
}

} // namespace

TrialOutcome outcomeOfTrial(const TrialRecord& trial) {
    TrialOutcome outcome;
    outcome.status = trial.status;
    outcome.verdict = trial.finalVerdict;
    outcome.usage = trial.usage;
    outcome.error = trial.error;
    outcome.skillText = trial.skillText;
    outcome.timedOut = trial.timedOut;
    outcome.skipped = trial.skipped;
    outcome.finishedAt = trial.finishedAt;
    return outcome;
}

std::string shardOrigin(const std::string& shardId) {
    return "mkb-shard:" + shardId;
}

std::string shardToJson(const Shard& shard) {
    const TrialRecord& trial = shard.trial;
    const TrialOutcome& outcome = shard.outcome;
    json submissions = json::array();
    for (const SubmissionRecord& submission : shard.submissions) {
        submissions.push_back({{"index", submission.index},
                               {"kernel", submission.kernelSource},
                               {"verdict", verdictText(submission.verdict)},
                               {"device", submission.verdict.device},
                               {"eval_seconds", submission.evalSeconds},
                               {"created_at", submission.createdAt}});
    }
    json document = {{"format", kShardFormat},
                     {"shard_id", shard.shardId},
                     {"job_id", shard.jobId},
                     {"host", shard.host},
                     {"replaces_trial_id", optionalNumber(shard.replacesTrialId)},
                     {"trial",
                      {{"model", trial.model},
                       {"suite", trial.suite},
                       {"problem_number", trial.problemNumber},
                       {"problem_slug", trial.problemSlug},
                       {"family", trial.family},
                       {"replicate", trial.replicate},
                       {"arm", trial.arm},
                       {"dsl", trial.dsl},
                       {"coordinate", trial.coordinate},
                       {"problem_fingerprint", trial.problemFingerprint},
                       {"grader_fingerprint", trial.graderFingerprint},
                       {"source_skill_sha256", trial.sourceSkillSha256},
                       {"started_at", trial.startedAt}}},
                     {"outcome",
                      {{"status", toString(outcome.status)},
                       {"error", outcome.error},
                       {"skipped", outcome.skipped},
                       {"timed_out", outcome.timedOut},
                       {"usage", usageToJson(outcome.usage)},
                       {"verdict", outcome.verdict ? json(verdictText(*outcome.verdict)) : json()},
                       {"verdict_device", outcome.verdict ? outcome.verdict->device : std::string()},
                       {"skill", outcome.skillText ? json(*outcome.skillText) : json()},
                       {"finished_at", outcome.finishedAt}}},
                     {"submissions", submissions}};
    // Invalid UTF-8 in a kernel or a skill (an agent's bytes) is replaced rather than making the shard unwritable.
    return document.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<Shard> shardFromJson(const std::string& text, const std::string& where) {
    auto parsed = parseJsonInput(text);
    if (!parsed) {
        return makeError(where + ": " + parsed.error().message + " (a shard cut short?)");
    }
    if (!parsed->is_object()) {
        return makeError(where + ": is not a JSON object");
    }
    const Fields top(*parsed, where);
    Shard shard;
    std::string format;
    MKB_READ(format, top.text("format"));
    if (format != kShardFormat) {
        return makeError(where + ": format '" + safeOneLine(format) + "' is not " + kShardFormat +
                         " (written by another mkb version?)");
    }
    MKB_READ(shard.shardId, top.text("shard_id"));
    if (shard.shardId.empty()) {
        return makeError(where + ": field 'shard_id' is empty");
    }
    MKB_READ(shard.jobId, top.text("job_id", false));
    MKB_READ(shard.host, top.text("host", false));
    MKB_READ(shard.replacesTrialId, top.optionalInteger("replaces_trial_id"));

    const json* trialObject = nullptr;
    MKB_READ(trialObject, top.object("trial"));
    const Fields trialFields(*trialObject, where, "trial.");
    TrialRecord& trial = shard.trial;
    std::int64_t number = 0;
    std::int64_t replicate = 0;
    MKB_READ(trial.model, trialFields.text("model"));
    MKB_READ(trial.suite, trialFields.text("suite"));
    MKB_READ(number, trialFields.integer("problem_number"));
    MKB_READ(trial.problemSlug, trialFields.text("problem_slug"));
    MKB_READ(trial.family, trialFields.text("family", false));
    MKB_READ(replicate, trialFields.integer("replicate"));
    MKB_READ(trial.arm, trialFields.text("arm"));
    MKB_READ(trial.dsl, trialFields.text("dsl"));
    MKB_READ(trial.coordinate, trialFields.text("coordinate"));
    MKB_READ(trial.problemFingerprint, trialFields.text("problem_fingerprint", false));
    MKB_READ(trial.graderFingerprint, trialFields.text("grader_fingerprint", false));
    MKB_READ(trial.sourceSkillSha256, trialFields.text("source_skill_sha256", false));
    MKB_READ(trial.startedAt, trialFields.text("started_at", false));
    if (number < 1 || number > 100000 || replicate < 1 || replicate > 100000) {
        return makeError(where + ": trial.problem_number and trial.replicate must be positive");
    }
    trial.problemNumber = static_cast<int>(number);
    trial.replicate = static_cast<int>(replicate);

    const json* outcomeObject = nullptr;
    MKB_READ(outcomeObject, top.object("outcome"));
    const Fields outcomeFields(*outcomeObject, where, "outcome.");
    TrialOutcome& outcome = shard.outcome;
    std::string status;
    MKB_READ(status, outcomeFields.text("status"));
    MKB_READ(outcome.status, statusFrom(status, where));
    MKB_READ(outcome.error, outcomeFields.text("error", false));
    MKB_READ(outcome.skipped, outcomeFields.flag("skipped"));
    MKB_READ(outcome.timedOut, outcomeFields.flag("timed_out"));
    const json* usageObject = nullptr;
    MKB_READ(usageObject, outcomeFields.object("usage"));
    MKB_READ(outcome.usage, usageFromJson(Fields(*usageObject, where, "outcome.usage.")));
    std::optional<std::string> verdict;
    MKB_READ(verdict, outcomeFields.optionalText("verdict"));
    if (verdict) {
        MKB_READ(outcome.verdict, verdictFrom(*verdict, where + " outcome.verdict"));
        MKB_READ(outcome.verdict->device, outcomeFields.text("verdict_device", false)); // "" in shards of before
    }
    MKB_READ(outcome.skillText, outcomeFields.optionalText("skill"));
    MKB_READ(outcome.finishedAt, outcomeFields.text("finished_at", false));
    trial.status = outcome.status;
    trial.error = outcome.error;
    trial.skipped = outcome.skipped;
    trial.timedOut = outcome.timedOut;
    trial.usage = outcome.usage;
    trial.finishedAt = outcome.finishedAt;
    trial.finalVerdict = outcome.verdict;
    trial.skillText = outcome.skillText;
    trial.origin = shardOrigin(shard.shardId);

    const json* submissions = nullptr;
    MKB_READ(submissions, top.array("submissions"));
    for (std::size_t i = 0; i < submissions->size(); ++i) {
        const std::string at = where + " submissions[" + std::to_string(i) + "]";
        if (!(*submissions)[i].is_object()) {
            return makeError(at + ": is not an object");
        }
        const Fields fields((*submissions)[i], at);
        SubmissionRecord submission;
        std::int64_t index = 0;
        std::string verdictJson;
        std::optional<double> seconds;
        MKB_READ(index, fields.integer("index"));
        MKB_READ(submission.kernelSource, fields.text("kernel"));
        MKB_READ(verdictJson, fields.text("verdict"));
        MKB_READ(submission.verdict, verdictFrom(verdictJson, at));
        MKB_READ(submission.verdict.device, fields.text("device", false));
        MKB_READ(seconds, fields.optionalNumber("eval_seconds"));
        MKB_READ(submission.createdAt, fields.text("created_at", false));
        if (index < 0 || index > 1000000) {
            return makeError(at + ": index must be 0 (the final evaluation) or a submission number");
        }
        submission.index = static_cast<int>(index);
        submission.evalSeconds = seconds.value_or(0.0);
        shard.submissions.push_back(std::move(submission));
    }
    return shard;
}

#undef MKB_READ

std::string shardFileName(const Shard& shard) {
    return shard.trial.coordinate + "." + shard.shardId + ".json";
}

Status writeShard(const fs::path& dir, const Shard& shard) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return makeError("cannot create the shard folder " + dir.string() + ": " + ec.message() +
                         " (is the shared folder mounted on this node?)");
    }
    return writeFileAtomically(dir / shardFileName(shard), shardToJson(shard));
}

Result<Shard> readShard(const fs::path& file) {
    auto text = readFile(file, 256u << 20);
    if (!text) {
        return text.error();
    }
    return shardFromJson(*text, file.string());
}

} // namespace mkb::cluster
