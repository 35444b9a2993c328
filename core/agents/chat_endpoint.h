// One chat-completions request to an OpenAI-compatible endpoint, with retries, read back into a Completion.
#pragma once

#include "core/agents/chat_settings.h"
#include "core/agents/secrets.h"

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace mkb {

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

/// The endpoint as the settings describe it; the key is sent as a bearer token and redacted from every error.
class ChatEndpoint {
public:
    ChatEndpoint(ChatSettings settings, std::string apiKey);

    /// Posts the conversation and waits at most secondsLeft (retries included); note() hears each retry.
    Completion complete(const nlohmann::json& messages, double secondsLeft, const std::atomic<bool>& cancel,
                        const std::function<void(const std::string&)>& note) const;

    const ChatSettings& settings() const { return settings_; }
    const SecretRedactor& redactor() const { return redactor_; }

private:
    ChatSettings settings_;
    std::string apiKey_;
    SecretRedactor redactor_;
};

/// Replaces each byte that does not start a well-formed UTF-8 sequence with U+FFFD.
std::string repairedUtf8(std::string_view bytes);

} // namespace mkb
