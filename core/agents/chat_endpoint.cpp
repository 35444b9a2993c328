// The chat endpoint: builds the request body and headers, posts with retries, and reads choices[0] and usage back.
#include "core/agents/chat_endpoint.h"

#include "core/agents/http_client.h"
#include "core/util/json_input.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace mkb {

using json = nlohmann::json;

namespace {

std::string lowered(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

} // namespace

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

namespace {

std::string excerpt(std::string_view text, std::size_t limit) {
    std::string out = repairedUtf8(text.substr(0, limit));
    for (char& c : out) {
        if (c == '\n' || c == '\r' || c == '\t') {
            c = ' ';
        }
    }
    return text.size() > limit ? out + "…" : out;
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

} // namespace

ChatEndpoint::ChatEndpoint(ChatSettings settings, std::string apiKey)
    : settings_(std::move(settings)), apiKey_(std::move(apiKey)) {
    redactor_.add(apiKey_);
}

Completion ChatEndpoint::complete(const json& messages, double secondsLeft, const std::atomic<bool>& cancel,
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

} // namespace mkb
