// Chat driver settings: validating the --driver-config JSON into ChatSettings, and pricing tokens.
#include "core/agents/chat_settings.h"

#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

namespace mkb {

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

bool isAuthorizationHeader(const std::string& name) {
    const std::string_view authorization = "authorization";
    return std::equal(name.begin(), name.end(), authorization.begin(), authorization.end(),
                      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
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
            if (isAuthorizationHeader(header)) {
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

} // namespace mkb
