// The chat driver: holds the endpoint and the prompt templates, and runs each attempt as a ChatConversation.
#include "core/agents/chat_driver.h"

#include "core/agents/chat_conversation.h"
#include "core/agents/chat_endpoint.h"
#include "core/agents/prompt_builder.h"
#include "core/agents/secrets.h"

#include <nlohmann/json.hpp>

#include <cstdlib>

namespace mkb {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

class ChatDriver final : public AgentDriver {
public:
    ChatDriver(ChatSettings settings, std::string apiKey, PromptTemplates templates)
        : endpoint_(std::move(settings), std::move(apiKey)), prompts_(std::move(templates)) {}

    std::string name() const override { return "chat"; }

    AttemptResult attempt(const AttemptTask& task, SubmissionGate& gate, const std::atomic<bool>& cancel) override {
        return ChatConversation(endpoint_, prompts_, task, gate, cancel).run();
    }

private:
    ChatEndpoint endpoint_;
    PromptBuilder prompts_;
};

} // namespace

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
