// The chat driver (DESIGN §7): an OpenAI-compatible chat-completions endpoint writes kernel.py and SKILL.md in turns.
#pragma once

#include "core/agents/chat_settings.h"
#include "core/agents/driver.h"

#include <nlohmann/json_fwd.hpp>

#include <memory>

namespace mkb {

/// Files the driver writes into the attempt's workspace (all text passes through secret redaction):
inline constexpr const char* kChatLogFile = "chat.log";                     // one line per request, retry and decision
inline constexpr const char* kChatTranscriptFile = "chat_transcript.jsonl"; // one message per line

/// Reads the key from the named variable (the error names the variable, never a value), registers it for redaction
/// and loads the templates, so a bad setup fails before any attempt starts.
Result<std::unique_ptr<AgentDriver>> makeChatDriver(const nlohmann::json& settings);

} // namespace mkb
