// The chat attempt loop: instruction, reply, parse, submit, report back; retries, usage, cost and redacted logs.
#include "core/agents/chat_driver.h"

#include "core/agents/http_client.h"
#include "core/agents/prompt_builder.h"
#include "core/agents/reply_parser.h"
#include "core/agents/secrets.h"
#include "core/agents/workspace.h"
#include "core/util/json_input.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>

namespace mkb {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::vector<std::string>& knownSettings() {
    static const std::vector<std::string> keys = {"base_url",
                                                  "model",
                                                  "api_key_env",
                                                  "temperature",
                                                  "top_p",
                                                  "max_tokens",
                                                  "request_timeout_s",
                                                  "max_retries",
                                                  "backoff_initial_s",
                                                  "backoff_max_s",
                                                  "price",
                                                  "extra_headers",
                                                  "max_malformed_replies",
                                                  "max_reply_bytes",
                                                  "final_skill_turn",
                                                  "prompts_dir"};
    return keys;
}

Error settingError(const std::string& field, const std::string& problem) {
    return makeError("chat driver setting '" + field + "': " + problem + "; fix it in --driver-config");
}

Result<double> numberSetting(const json& settings, const std::string& field, double low, double high) {
    const json& value = settings.at(field);
    if (!value.is_number()) {
        return settingError(field, "expected a number");
    }
    const double number = value.get<double>();
    if (!std::isfinite(number) || number < low || number > high) {
        char range[96];
        std::snprintf(range, sizeof range, "expected a number from %g to %g", low, high);
        return settingError(field, range);
    }
    return number;
}

Result<int> integerSetting(const json& settings, const std::string& field, int low, int high) {
    const json& value = settings.at(field);
    if (!value.is_number_integer() || value.get<long long>() < low || value.get<long long>() > high) {
        return settingError(field,
                            "expected a whole number from " + std::to_string(low) + " to " + std::to_string(high));
    }
    return static_cast<int>(value.get<long long>());
}

bool isEnvironmentName(const std::string& name) {
    static const std::regex pattern("[A-Za-z_][A-Za-z0-9_]*");
    return std::regex_match(name, pattern);
}

std::string lowered(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

/// Replaces each byte that does not start a well-formed UTF-8 sequence with U+FFFD.
std::string repairedUtf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t at = 0; at < bytes.size();) {
        const auto lead = static_cast<unsigned char>(bytes[at]);
        const std::size_t length = lead < 0x80           ? 1
                                   : (lead >> 5) == 0x6  ? 2
                                   : (lead >> 4) == 0xE  ? 3
                                   : (lead >> 3) == 0x1E ? 4
                                                         : 0;
        if (length > 0 && at + length <= bytes.size() && isValidUtf8(bytes.substr(at, length))) {
            out.append(bytes.substr(at, length));
            at += length;
        } else {
            out += "\xEF\xBF\xBD";
            ++at;
        }
    }
    return out;
}

std::string excerpt(std::string_view text, std::size_t limit) {
    std::string out = repairedUtf8(text.substr(0, limit));
    for (char& c : out) {
        if (c == '\n' || c == '\r' || c == '\t') {
            c = ' ';
        }
    }
    return text.size() > limit ? out + "…" : out;
}

std::string oneDecimal(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
    return buffer;
}

/// True when an error body reads like a context-length refusal ("maximum context length", "too many tokens").
bool mentionsContextLimit(const std::string& body) {
    const std::string text = lowered(body);
    for (const char* phrase : {"context length", "context_length", "context window", "maximum context",
                               "too many tokens", "prompt is too long", "context size"}) {
        if (text.find(phrase) != std::string::npos) {
            return true;
        }
    }
    return false;
}

/// What one chat completion came to.
struct Completion {
    bool ok = false;
    std::string content;
    bool invalidUtf8 = false; // the body held malformed UTF-8 (repaired before parsing)
    std::string finishReason;
    std::optional<std::int64_t> promptTokens;
    std::optional<std::int64_t> cachedTokens;
    std::optional<std::int64_t> completionTokens;
    int retries = 0;
    bool cancelled = false;
    bool deadlinePassed = false;
    bool contextFull = false; // the endpoint refused the conversation as too long: the attempt ends, not broken
    std::string error;        // when !ok and neither cancelled nor out of time: an infrastructure error, one line
};

class ChatDriver final : public AgentDriver {
public:
    ChatDriver(ChatSettings settings, std::string apiKey, PromptTemplates templates)
        : settings_(std::move(settings)), apiKey_(std::move(apiKey)), prompts_(std::move(templates)) {
        redactor_.add(apiKey_);
    }

    std::string name() const override { return "chat"; }

    AttemptResult attempt(const AttemptTask& task, SubmissionGate& gate, const std::atomic<bool>& cancel) override;

private:
    Completion complete(const json& messages, double secondsLeft, const std::atomic<bool>& cancel,
                        const std::function<void(const std::string&)>& note) const;

    ChatSettings settings_;
    std::string apiKey_;
    SecretRedactor redactor_;
    PromptBuilder prompts_;
};

Completion ChatDriver::complete(const json& messages, double secondsLeft, const std::atomic<bool>& cancel,
                                const std::function<void(const std::string&)>& note) const {
    json body = {{"model", settings_.model}, {"messages", messages}};
    if (settings_.temperature) {
        body["temperature"] = *settings_.temperature;
    }
    if (settings_.topP) {
        body["top_p"] = *settings_.topP;
    }
    if (settings_.maxTokens) {
        body["max_tokens"] = *settings_.maxTokens;
    }
    HttpRequest request;
    request.url = settings_.baseUrl + "/chat/completions";
    request.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    request.timeoutSeconds = settings_.requestTimeoutSeconds;
    if (!apiKey_.empty()) {
        request.headers.push_back("Authorization: Bearer " + apiKey_);
    }
    for (const auto& [header, value] : settings_.extraHeaders) {
        request.headers.push_back(header + ": " + value);
    }
    RetryPolicy policy;
    policy.maxRetries = settings_.maxRetries;
    policy.initialBackoffSeconds = settings_.backoffInitialSeconds;
    policy.maxBackoffSeconds = settings_.backoffMaxSeconds;
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(secondsLeft));
    const RetriedResponse retried = postWithRetries(request, policy, cancel, deadline, note);

    Completion completion;
    completion.retries = retried.retries;
    const HttpResponse& response = retried.response;
    if (response.failure == HttpFailure::Cancelled || cancel.load()) {
        completion.cancelled = true;
        return completion;
    }
    if (retried.deadlinePassed) {
        completion.deadlinePassed = true;
        return completion;
    }
    const std::string where = "chat endpoint " + request.url;
    if (response.failure != HttpFailure::None) {
        completion.error = where + ": " + toString(response.failure) + " (" + response.error + ")" +
                           (retried.retries > 0 ? " after " + std::to_string(retried.retries) + " retries" : "") +
                           "; check that the server is up and base_url is right";
        completion.error = redactor_.redact(completion.error);
        return completion;
    }
    if ((response.status == 400 || response.status == 413) && mentionsContextLimit(response.body)) {
        completion.contextFull = true;
        completion.error = redactor_.redact("the conversation outgrew the model's context (" + where +
                                            " answered HTTP " + std::to_string(response.status) + ": " +
                                            excerpt(redactor_.redact(response.body), 200) + ")");
        return completion;
    }
    if (response.status < 200 || response.status >= 300) {
        completion.error = where + " answered HTTP " + std::to_string(response.status) +
                           (retried.retries > 0 ? " after " + std::to_string(retried.retries) + " retries" : "") +
                           ": " + excerpt(redactor_.redact(response.body), 300) +
                           "; check the model name, the key and the endpoint";
        completion.error = redactor_.redact(completion.error);
        return completion;
    }
    std::string bodyText = response.body;
    if (!isValidUtf8(bodyText)) {
        completion.invalidUtf8 = true;
        bodyText = repairedUtf8(bodyText);
    }
    const json parsed = parseJsonInputOrDiscarded<json>(bodyText);
    const json* message = nullptr;
    if (parsed.is_object() && parsed.contains("choices") && parsed["choices"].is_array() &&
        !parsed["choices"].empty() && parsed["choices"][0].is_object()) {
        const json& choice = parsed["choices"][0];
        if (choice.contains("message") && choice["message"].is_object()) {
            message = &choice["message"];
        }
        if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
            completion.finishReason = choice["finish_reason"].get<std::string>();
        }
    }
    if (!message) {
        completion.error = redactor_.redact(
            where + " sent a reply without choices[0].message: " + excerpt(redactor_.redact(response.body), 300) +
            "; check that the endpoint speaks the OpenAI chat-completions API");
        return completion;
    }
    if (message->contains("content") && (*message)["content"].is_string()) {
        completion.content = (*message)["content"].get<std::string>();
    }
    if (parsed.contains("usage") && parsed["usage"].is_object()) {
        const json& usage = parsed["usage"];
        auto count = [](const json& object, const char* key) -> std::optional<std::int64_t> {
            if (object.contains(key) && object[key].is_number_integer()) {
                return object[key].get<std::int64_t>();
            }
            return std::nullopt;
        };
        completion.promptTokens = count(usage, "prompt_tokens");
        completion.completionTokens = count(usage, "completion_tokens");
        if (usage.contains("prompt_tokens_details") && usage["prompt_tokens_details"].is_object()) {
            completion.cachedTokens = count(usage["prompt_tokens_details"], "cached_tokens");
        }
    }
    completion.ok = true;
    return completion;
}

AttemptResult ChatDriver::attempt(const AttemptTask& task, SubmissionGate& gate, const std::atomic<bool>& cancel) {
    const auto started = std::chrono::steady_clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    const auto secondsLeft = [&] { return std::min(gate.secondsLeft(), task.budget.wallSeconds - elapsed()); };

    AttemptResult result;
    std::error_code ec;
    fs::create_directories(task.workspace, ec);
    std::ofstream log(task.workspace / kChatLogFile, std::ios::app);
    std::ofstream transcript(task.workspace / kChatTranscriptFile, std::ios::app);
    auto note = [&](const std::string& line) {
        log << "[+" << oneDecimal(elapsed()) << " s] " << redactor_.redact(line) << '\n' << std::flush;
    };
    int turn = 0;
    auto record = [&](const std::string& role, const std::string& content) {
        const std::string kept = content.size() > settings_.maxReplyBytes
                                     ? content.substr(0, settings_.maxReplyBytes) + "\n[… cut by the workbench]"
                                     : content;
        json line = {{"turn", turn}, {"role", role}, {"content", redactor_.redact(kept)}};
        transcript << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
    };

    // The workspace mirrors the latest files, so it reads like a terminal agent's after the attempt.
    const WorkspaceLayout layout = workspaceLayout(task.workspace, task.problem);
    auto keepInWorkspace = [&](const ParsedReply& reply) {
        for (const auto& [file, text] :
             {std::pair{layout.kernel, reply.kernel}, std::pair{layout.skill, reply.skill}}) {
            if (text) {
                if (Status written = writeFileAtomically(file, *text); !written) {
                    note("cannot mirror into the workspace: " + written.error().message);
                }
            }
        }
    };

    std::int64_t inputTokens = 0, cachedTokens = 0, outputTokens = 0;
    bool usageReported = false, cacheReported = false;
    int retries = 0;
    auto finish = [&](const std::string& why) {
        if (usageReported) {
            result.usage.inputTokens = inputTokens;
            result.usage.outputTokens = outputTokens;
            if (cacheReported) {
                result.usage.cacheTokens = cachedTokens;
            }
            if (settings_.price) {
                result.usage.costUsd = costUsd(*settings_.price, inputTokens, cachedTokens, outputTokens);
            }
        }
        result.usage.agentSeconds = elapsed();
        result.error = redactor_.redact(result.error);
        note("attempt ends: " + why + "; " + std::to_string(turn) + " replies, " + std::to_string(retries) +
             " retries, " +
             (usageReported ? std::to_string(inputTokens) + " prompt tokens (" + std::to_string(cachedTokens) +
                                  " cached), " + std::to_string(outputTokens) + " completion tokens"
                            : std::string("usage not reported")));
        return result;
    };

    auto system = prompts_.systemMessage(task);
    auto instruction = prompts_.instruction(task, settings_.maxReplyBytes);
    if (!system || !instruction) {
        result.error = (!system ? system.error() : instruction.error()).message;
        result.infrastructureError = true;
        return finish("the prompt could not be built");
    }
    json messages =
        json::array({{{"role", "system"}, {"content", *system}}, {{"role", "user"}, {"content", *instruction}}});
    record("system", *system);
    record("user", *instruction);
    note("attempt starts: " + task.armName + " on " + task.problem.name() + " with model " + settings_.model + " at " +
         settings_.baseUrl);

    int malformedStreak = 0;
    int idleStreak = 0;
    int submissions = 0;
    bool finalSkillTurn = false; // the budget is spent; this reply may only bring SKILL.md
    while (true) {
        if (cancel.load()) {
            return finish("cancelled");
        }
        if (secondsLeft() <= 0) {
            result.timedOut = true;
            return finish("the wall clock ran out");
        }
        ++turn;
        note("request " + std::to_string(turn) + ": " + std::to_string(messages.size()) + " messages");
        const Completion completion = complete(messages, secondsLeft(), cancel, note);
        retries += completion.retries;
        if (completion.cancelled) {
            return finish("cancelled");
        }
        if (completion.deadlinePassed) {
            result.timedOut = true;
            return finish("the wall clock ran out during a request");
        }
        if (completion.contextFull) {
            result.error = completion.error;
            return finish("the context is full");
        }
        if (!completion.ok) {
            result.error = completion.error;
            result.infrastructureError = true;
            return finish("the endpoint failed");
        }
        if (completion.promptTokens || completion.completionTokens) {
            usageReported = true;
            inputTokens += completion.promptTokens.value_or(0);
            outputTokens += completion.completionTokens.value_or(0);
        }
        if (completion.cachedTokens) {
            cacheReported = true;
            cachedTokens += *completion.cachedTokens;
        }
        record("assistant", completion.content);
        note("reply " + std::to_string(turn) + ": " + std::to_string(completion.content.size()) + " bytes, finish " +
             (completion.finishReason.empty() ? "unknown" : completion.finishReason) +
             (completion.retries ? ", " + std::to_string(completion.retries) + " retries" : ""));

        ReplyParse parse = parseReply(completion.content, settings_.maxReplyBytes);
        if (parse.defect == ReplyDefect::None && completion.invalidUtf8) {
            parse = ReplyParse{ReplyDefect::InvalidUtf8, "the reply was not valid UTF-8", {}};
        }
        if (finalSkillTurn) {
            if (parse.defect == ReplyDefect::None && parse.reply.skill) {
                result.skill = parse.reply.skill;
                keepInWorkspace({std::nullopt, parse.reply.skill, false});
            }
            if (parse.reply.kernel) {
                note("the final-skill reply also held a kernel.py; it is ignored (no submissions left)");
            }
            return finish(parse.defect == ReplyDefect::None ? "submissions spent, final SKILL.md received"
                                                            : "submissions spent, final reply unusable (" +
                                                                  std::string(toString(parse.defect)) + ")");
        }
        if (parse.defect != ReplyDefect::None) {
            ++malformedStreak;
            note("malformed reply (" + std::string(toString(parse.defect)) + "): " + parse.detail);
            if (malformedStreak >= settings_.maxMalformedReplies) {
                result.error = "the model sent " + std::to_string(malformedStreak) +
                               " unusable replies in a row (last: " + parse.detail + ")";
                return finish("too many malformed replies");
            }
            std::string kept = completion.content;
            if (parse.defect == ReplyDefect::TooLarge) {
                kept = repairedUtf8(std::string_view(kept).substr(0, 4000)) + "\n[… the rest of this reply was cut]";
            }
            auto correction = prompts_.correction(parse.detail, gate.submissionsLeft(), secondsLeft());
            if (!correction) {
                result.error = correction.error().message;
                result.infrastructureError = true;
                return finish("the prompt could not be built");
            }
            messages.push_back({{"role", "assistant"}, {"content", repairedUtf8(kept)}});
            messages.push_back({{"role", "user"}, {"content", *correction}});
            record("user", *correction);
            continue;
        }
        malformedStreak = 0;
        messages.push_back({{"role", "assistant"}, {"content", completion.content}});
        if (parse.reply.skill) {
            result.skill = parse.reply.skill;
        }
        keepInWorkspace(parse.reply);
        if (parse.reply.done) {
            if (parse.reply.kernel) {
                result.finalKernel = *parse.reply.kernel;
            }
            return finish("the model said DONE");
        }
        if (!parse.reply.kernel) {
            if (++idleStreak >= settings_.maxMalformedReplies) {
                result.error =
                    "the model sent " + std::to_string(idleStreak) + " replies in a row without kernel.py or DONE";
                return finish("no progress");
            }
            auto reminder = prompts_.noKernelReminder(gate.submissionsLeft(), secondsLeft());
            if (!reminder) {
                result.error = reminder.error().message;
                result.infrastructureError = true;
                return finish("the prompt could not be built");
            }
            messages.push_back({{"role", "user"}, {"content", *reminder}});
            record("user", *reminder);
            continue;
        }
        idleStreak = 0;
        result.finalKernel = *parse.reply.kernel;
        if (gate.submissionsLeft() <= 0) {
            return finish("no submissions left");
        }
        ++submissions;
        note("submission " + std::to_string(submissions) + ": " + std::to_string(parse.reply.kernel->size()) +
             " bytes of kernel.py");
        const SubmitOutcome outcome = gate.submit(*parse.reply.kernel);
        note("submission " + std::to_string(submissions) + " " + (outcome.counted ? "counted" : "not counted") + ", " +
             (outcome.verdict ? (outcome.verdict->passed ? "passed" : "failed") : "not graded") + "; " +
             std::to_string(outcome.submissionsLeft) + " left, " + oneDecimal(outcome.secondsLeft) + " s left");
        const FeedbackFacts facts{submissions, outcome};
        if (cancel.load()) {
            return finish("cancelled");
        }
        if (outcome.secondsLeft <= 0 || secondsLeft() <= 0) {
            result.timedOut = true;
            return finish("the wall clock ran out");
        }
        const bool spent = outcome.submissionsLeft <= 0;
        if (spent && !settings_.finalSkillTurn) {
            return finish("no submissions left");
        }
        auto reply = spent ? prompts_.finalSkillRequest(facts) : prompts_.feedback(facts);
        if (!reply) {
            result.error = reply.error().message;
            result.infrastructureError = true;
            return finish("the prompt could not be built");
        }
        finalSkillTurn = spent;
        messages.push_back({{"role", "user"}, {"content", *reply}});
        record("user", *reply);
    }
}

} // namespace

double costUsd(const PriceTable& price, std::int64_t inputTokens, std::int64_t cachedTokens,
               std::int64_t outputTokens) {
    const double uncached = static_cast<double>(std::max<std::int64_t>(0, inputTokens - cachedTokens));
    return (uncached * price.inputPerMtok + static_cast<double>(cachedTokens) * price.cachePerMtok +
            static_cast<double>(outputTokens) * price.outputPerMtok) /
           1e6;
}

Result<ChatSettings> parseChatSettings(const json& settings) {
    if (!settings.is_object()) {
        return makeError("chat driver settings must be a JSON object; fix --driver-config");
    }
    for (const auto& [key, value] : settings.items()) {
        if (key == "api_key" || key == "key" || key == "token") {
            return settingError(key, "keys are never accepted in the config; export the key in an environment "
                                     "variable and name that variable in api_key_env");
        }
        const auto& known = knownSettings();
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            std::string list;
            for (const std::string& name : known) {
                list += (list.empty() ? "" : ", ") + name;
            }
            return settingError(key, "unknown setting; the chat driver knows " + list);
        }
    }
    ChatSettings parsed;
    for (const char* required : {"base_url", "model"}) {
        if (!settings.contains(required) || !settings[required].is_string() ||
            trimmed(settings[required].get<std::string>()).empty()) {
            return settingError(required, "required, a non-empty string");
        }
    }
    parsed.baseUrl = std::string(trimmed(settings["base_url"].get<std::string>()));
    if (!startsWith(parsed.baseUrl, "http://") && !startsWith(parsed.baseUrl, "https://")) {
        return settingError("base_url", "expected an http:// or https:// URL such as http://localhost:8000/v1");
    }
    while (!parsed.baseUrl.empty() && parsed.baseUrl.back() == '/') {
        parsed.baseUrl.pop_back();
    }
    parsed.model = settings["model"].get<std::string>();
    if (settings.contains("api_key_env")) {
        if (!settings["api_key_env"].is_string()) {
            return settingError("api_key_env", "expected the name of an environment variable, as a string");
        }
        parsed.apiKeyEnv = settings["api_key_env"].get<std::string>();
        if (!parsed.apiKeyEnv.empty() && !isEnvironmentName(parsed.apiKeyEnv)) {
            // Never echo the value: a key pasted here by mistake must not reach a log.
            return settingError("api_key_env", "expected a variable name (letters, digits, underscores), not the "
                                               "key itself");
        }
    }
    struct NumberField {
        const char* name;
        double low, high;
        double* target;
    };
    for (const NumberField& field : {NumberField{"request_timeout_s", 0.001, 86400, &parsed.requestTimeoutSeconds},
                                     NumberField{"backoff_initial_s", 0, 3600, &parsed.backoffInitialSeconds},
                                     NumberField{"backoff_max_s", 0, 3600, &parsed.backoffMaxSeconds}}) {
        if (settings.contains(field.name)) {
            auto value = numberSetting(settings, field.name, field.low, field.high);
            if (!value) {
                return value.error();
            }
            *field.target = *value;
        }
    }
    if (settings.contains("temperature")) {
        auto value = numberSetting(settings, "temperature", 0, 2);
        if (!value) {
            return value.error();
        }
        parsed.temperature = *value;
    }
    if (settings.contains("top_p")) {
        auto value = numberSetting(settings, "top_p", 0, 1);
        if (!value) {
            return value.error();
        }
        parsed.topP = *value;
    }
    if (settings.contains("max_tokens")) {
        auto value = integerSetting(settings, "max_tokens", 1, 10'000'000);
        if (!value) {
            return value.error();
        }
        parsed.maxTokens = *value;
    }
    if (settings.contains("max_retries")) {
        auto value = integerSetting(settings, "max_retries", 0, 100);
        if (!value) {
            return value.error();
        }
        parsed.maxRetries = *value;
    }
    if (settings.contains("max_malformed_replies")) {
        auto value = integerSetting(settings, "max_malformed_replies", 1, 100);
        if (!value) {
            return value.error();
        }
        parsed.maxMalformedReplies = *value;
    }
    if (settings.contains("max_reply_bytes")) {
        auto value = integerSetting(settings, "max_reply_bytes", 1000, 100'000'000);
        if (!value) {
            return value.error();
        }
        parsed.maxReplyBytes = static_cast<std::size_t>(*value);
    }
    if (settings.contains("final_skill_turn")) {
        if (!settings["final_skill_turn"].is_boolean()) {
            return settingError("final_skill_turn", "expected true or false");
        }
        parsed.finalSkillTurn = settings["final_skill_turn"].get<bool>();
    }
    if (settings.contains("price")) {
        const json& price = settings["price"];
        if (!price.is_object()) {
            return settingError("price", "expected an object with input_per_mtok, cache_per_mtok, output_per_mtok");
        }
        PriceTable table;
        bool cacheGiven = false;
        for (const auto& [key, value] : price.items()) {
            double* target = key == "input_per_mtok"    ? &table.inputPerMtok
                             : key == "cache_per_mtok"  ? &table.cachePerMtok
                             : key == "output_per_mtok" ? &table.outputPerMtok
                                                        : nullptr;
            if (!target) {
                return settingError("price." + key, "unknown; use input_per_mtok, cache_per_mtok, output_per_mtok");
            }
            if (!value.is_number() || value.get<double>() < 0 || !std::isfinite(value.get<double>())) {
                return settingError("price." + key, "expected a non-negative number of USD per million tokens");
            }
            *target = value.get<double>();
            cacheGiven = cacheGiven || key == "cache_per_mtok";
        }
        for (const char* required : {"input_per_mtok", "output_per_mtok"}) {
            if (!price.contains(required)) {
                return settingError(std::string("price.") + required, "required when price is given");
            }
        }
        if (!cacheGiven) {
            table.cachePerMtok = table.inputPerMtok; // no discount known: cached tokens cost what input does
        }
        parsed.price = table;
    }
    if (settings.contains("extra_headers")) {
        const json& headers = settings["extra_headers"];
        if (!headers.is_object()) {
            return settingError("extra_headers", "expected an object of header names to string values");
        }
        static const std::regex token("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
        for (const auto& [header, value] : headers.items()) {
            if (!std::regex_match(header, token)) {
                return settingError("extra_headers", "'" + header + "' is not a valid header name");
            }
            if (lowered(header) == "authorization") {
                return settingError("extra_headers." + header,
                                    "not accepted here; name the key's environment variable in api_key_env");
            }
            if (!value.is_string() || value.get<std::string>().find_first_of("\r\n") != std::string::npos) {
                return settingError("extra_headers." + header, "expected a one-line string value");
            }
            parsed.extraHeaders.emplace_back(header, value.get<std::string>());
        }
    }
    if (settings.contains("prompts_dir")) {
        if (!settings["prompts_dir"].is_string() || settings["prompts_dir"].get<std::string>().empty()) {
            return settingError("prompts_dir", "expected a folder path");
        }
        parsed.promptsDir = settings["prompts_dir"].get<std::string>();
    }
    return parsed;
}

Result<std::unique_ptr<AgentDriver>> makeChatDriver(const json& settings) {
    auto parsed = parseChatSettings(settings);
    if (!parsed) {
        return parsed.error();
    }
    std::string apiKey;
    if (!parsed->apiKeyEnv.empty()) {
        const char* value = std::getenv(parsed->apiKeyEnv.c_str());
        if (!value || !*value) {
            return makeError("chat driver: the environment variable " + parsed->apiKeyEnv +
                             " named by api_key_env is not set; export the API key in it before the run");
        }
        apiKey = value;
        if (apiKey.size() < kMinimumSecretLength) {
            return makeError("chat driver: the key in " + parsed->apiKeyEnv + " is shorter than " +
                             std::to_string(kMinimumSecretLength) +
                             " characters, too short to keep out of logs; use the real key");
        }
        registerSecret(apiKey);
    }
    const fs::path promptsDir = parsed->promptsDir.empty() ? defaultPromptsDir() : parsed->promptsDir;
    auto templates = loadPromptTemplates(promptsDir);
    if (!templates) {
        return templates.error();
    }
    return std::unique_ptr<AgentDriver>(
        std::make_unique<ChatDriver>(std::move(parsed).value(), std::move(apiKey), std::move(templates).value()));
}

} // namespace mkb
