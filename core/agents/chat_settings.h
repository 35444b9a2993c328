// Chat driver settings (DESIGN §7): what the --driver-config JSON may say, validated, and the token price table.
#pragma once

#include "core/util/result.h"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mkb {

/// US dollars per million tokens. prompt_tokens include the cached ones, which are billed at cachePerMtok instead.
struct PriceTable {
    double inputPerMtok = 0;
    double cachePerMtok = 0;
    double outputPerMtok = 0;
};

/// Settings from the driver config JSON (every key optional except base_url and model):
///   base_url            "http://host:8000/v1"; the driver posts to {base_url}/chat/completions
///   model               the model name the endpoint expects
///   api_key_env         name of the environment variable holding the API key (sent as "Authorization: Bearer");
///                       omitted or "" = no key. The key itself is never accepted in the config, stored or logged.
///   temperature, top_p  sampling; omitted = the endpoint's default
///   max_tokens          per reply; omitted = the endpoint's default
///   request_timeout_s   one request, default 600
///   max_retries         retries per request on 408/429/5xx, connection errors and timeouts; default 5
///   backoff_initial_s   first wait, doubled per retry, default 2; backoff_max_s caps it, default 60
///                       (a Retry-After header is honoured as sent)
///   price               {"input_per_mtok", "cache_per_mtok", "output_per_mtok"}: USD per million tokens; omitted =
///                       cost unknown
///   extra_headers       {"Name": "value"}: sent with every request (not Authorization: use api_key_env)
///   max_malformed_replies  consecutive unusable replies before the attempt ends with an error; default 3
///   max_reply_bytes     replies over this are malformed; default 300000
///   final_skill_turn    after the last submission, ask once more for the final SKILL.md; default true
///   prompts_dir         folder of the templates; default resources/prompts
struct ChatSettings {
    std::string baseUrl;
    std::string model;
    std::string apiKeyEnv;
    std::optional<double> temperature;
    std::optional<double> topP;
    std::optional<int> maxTokens;
    double requestTimeoutSeconds = 600;
    int maxRetries = 5;
    double backoffInitialSeconds = 2;
    double backoffMaxSeconds = 60;
    std::optional<PriceTable> price;
    std::vector<std::pair<std::string, std::string>> extraHeaders;
    int maxMalformedReplies = 3;
    std::size_t maxReplyBytes = 300000;
    bool finalSkillTurn = true;
    std::filesystem::path promptsDir;
};

/// Validates the settings; each error names the field and says what is expected.
Result<ChatSettings> parseChatSettings(const nlohmann::json& settings);

/// Cost of the tokens under the price table (cached tokens are part of inputTokens).
double costUsd(const PriceTable& price, std::int64_t inputTokens, std::int64_t cachedTokens, std::int64_t outputTokens);

} // namespace mkb
