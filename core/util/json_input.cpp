// Depth-bounded parsing of outside JSON, with errors that give their cause.
#include "core/util/json_input.h"

#include "core/util/text.h"

#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace mkb {
namespace {

/// nlohmann's message without its "[json.exception.…] " tag and without the "; last read: '…'" echo of the input
/// (raw bytes of a hostile file have no place in a one-line message), with control characters shown as '?'.
std::string causeOf(const nlohmann::json::exception& error) {
    std::string message = error.what();
    if (startsWith(message, "[json.exception.")) {
        if (auto close = message.find("] "); close != std::string::npos) {
            message.erase(0, close + 2);
        }
    }
    if (startsWith(message, "parse error ")) {
        message.erase(0, 12); // "at line 1, column 3: syntax error while parsing …"
        if (auto colon = message.find(": "); colon != std::string::npos && startsWith(message, "at line ")) {
            message = message.substr(colon + 2) + " (" + message.substr(0, colon) + ")";
        }
    }
    if (auto lastRead = message.find("; last read: '"); lastRead != std::string::npos) {
        auto expected = message.rfind("'; expected ");
        auto close = message.rfind(" (at line ");
        std::string tail;
        if (expected != std::string::npos && expected > lastRead) {
            tail = message.substr(expected + 1);
        } else if (close != std::string::npos && close > lastRead) {
            tail = message.substr(close);
        }
        message = message.substr(0, lastRead) + tail;
    }
    for (char& c : message) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = '?';
        }
    }
    return message;
}

} // namespace

Status checkJsonDepth(std::string_view text, std::size_t maxDepth) {
    std::size_t depth = 0;
    std::size_t line = 1;
    std::size_t column = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        ++column;
        if (c == '\n') {
            ++line;
            column = 0;
        }
        if (inString) {
            if (c == '\\') {
                ++i; // the escaped character cannot end the string
                ++column;
            } else if (c == '"') {
                inString = false;
            }
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth) {
                return makeError("nested deeper than " + std::to_string(maxDepth) + " levels at line " +
                                 std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
                                 std::to_string(i) + ")");
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return Ok{};
}

template <typename Json>
Result<Json> parseJsonInput(std::string_view text, std::size_t maxDepth) {
    if (trimmed(text).empty()) {
        return makeError("is empty (no JSON value at all)");
    }
    if (Status bounded = checkJsonDepth(text, maxDepth); !bounded) {
        return bounded.error();
    }
    try {
        return Json::parse(text);
    } catch (const nlohmann::json::exception& error) {
        return makeError(causeOf(error));
    }
}

Result<nlohmann::json> parsePythonJsonInput(std::string_view text, bool* readPythonTokens, std::size_t maxDepth) {
    // Each of Python's tokens is replaced by a number of the same length ("0" or "-0", then spaces), so a syntax
    // error elsewhere keeps its column; the ordinal of every number token is noted, and the parser's callback turns
    // the noted ones back into NaN or an infinity as it reads numbers in document order. The text is copied only
    // when it holds such a token.
    struct Token {
        std::size_t at;
        std::size_t length;
        const char* number;
    };
    std::vector<Token> tokens;
    std::map<std::size_t, double> nonFinite; // number-token ordinal -> value
    std::size_t numbers = 0;
    bool inString = false;
    const auto isNumberChar = [](char c) {
        return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                inString = false;
            }
            continue;
        }
        if (c == '"') {
            inString = true;
            continue;
        }
        const std::string_view rest = text.substr(i);
        const auto note = [&](std::size_t length, const char* number, double value) {
            tokens.push_back({i, length, number});
            nonFinite[numbers++] = value;
            i += length - 1;
        };
        if (startsWith(rest, "NaN")) {
            note(3, "0", std::numeric_limits<double>::quiet_NaN());
        } else if (startsWith(rest, "Infinity")) {
            note(8, "0", std::numeric_limits<double>::infinity());
        } else if (startsWith(rest, "-Infinity")) {
            note(9, "-0", -std::numeric_limits<double>::infinity());
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            ++numbers;
            while (i + 1 < text.size() && isNumberChar(text[i + 1])) {
                ++i;
            }
        }
    }
    if (readPythonTokens) {
        *readPythonTokens = !tokens.empty();
    }
    if (tokens.empty()) {
        return parseJsonInput<nlohmann::json>(text, maxDepth);
    }
    std::string padded(text);
    for (const Token& token : tokens) {
        padded.replace(token.at, token.length,
                       std::string(token.number) + std::string(token.length - std::strlen(token.number), ' '));
    }
    if (Status bounded = checkJsonDepth(padded, maxDepth); !bounded) {
        return bounded.error();
    }
    std::size_t seen = 0;
    const nlohmann::json::parser_callback_t restore = [&](int, nlohmann::json::parse_event_t event,
                                                          nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::value && parsed.is_number()) {
            if (auto found = nonFinite.find(seen++); found != nonFinite.end()) {
                parsed = found->second;
            }
        }
        return true;
    };
    try {
        return nlohmann::json::parse(padded, restore);
    } catch (const nlohmann::json::exception& error) {
        return makeError(causeOf(error));
    }
}

template <typename Json>
Json parseJsonInputOrDiscarded(std::string_view text, std::size_t maxDepth) {
    if (!checkJsonDepth(text, maxDepth)) {
        return Json(Json::value_t::discarded);
    }
    return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

template Result<nlohmann::json> parseJsonInput<nlohmann::json>(std::string_view, std::size_t);
template Result<nlohmann::ordered_json> parseJsonInput<nlohmann::ordered_json>(std::string_view, std::size_t);
template nlohmann::json parseJsonInputOrDiscarded<nlohmann::json>(std::string_view, std::size_t);
template nlohmann::ordered_json parseJsonInputOrDiscarded<nlohmann::ordered_json>(std::string_view, std::size_t);

Result<nlohmann::json> readJsonFile(const std::filesystem::path& path, std::size_t maxDepth) {
    auto text = readFile(path);
    if (!text) {
        return text.error();
    }
    auto value = parseJsonInput<nlohmann::json>(*text, maxDepth);
    if (!value) {
        return makeError(path.string() + ": " + value.error().message);
    }
    return value;
}

} // namespace mkb
