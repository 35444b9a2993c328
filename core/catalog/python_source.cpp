// A tokenizer for Python source and a parser for Python literal values, enough to read problem files safely.
// Longer than 600 lines because the tokenizer and the literal parser cover one fixed Python subset and share their
// token helpers; split it if a third job joins them.
#include "core/catalog/python_source.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace mkb {
namespace {

constexpr int kMaxLiteralDepth = 64;

bool isNameStart(unsigned char c) {
    return std::isalpha(c) || c == '_' || c >= 0x80;
}
bool isNameChar(unsigned char c) {
    return std::isalnum(c) || c == '_' || c >= 0x80;
}

std::string lineError(int line, const std::string& message) {
    return "line " + std::to_string(line) + ": " + message;
}

void appendUtf8(std::string& out, unsigned long codePoint) {
    if (codePoint < 0x80) {
        out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        out += static_cast<char>(0xC0 | (codePoint >> 6));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
        out += static_cast<char>(0xE0 | (codePoint >> 12));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (codePoint >> 18));
        out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
}

/// Decodes the backslash escapes of a non-raw string body.
Result<std::string> decodeEscapes(std::string_view body, int line) {
    std::string out;
    for (std::size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (c == '\n') {
            ++line;
        }
        if (c != '\\' || i + 1 >= body.size()) {
            out += c;
            continue;
        }
        char e = body[++i];
        auto hexDigits = [&](std::size_t count) -> Result<unsigned long> {
            std::string digits(body.substr(i + 1, count));
            if (digits.size() != count) {
                return makeError(lineError(line, "truncated escape in a string"));
            }
            for (char d : digits) {
                if (!std::isxdigit(static_cast<unsigned char>(d))) {
                    return makeError(lineError(line, "bad hexadecimal escape in a string"));
                }
            }
            i += count;
            return std::strtoul(digits.c_str(), nullptr, 16);
        };
        switch (e) {
        case '\n':
            ++line;
            break; // line continuation inside the string
        case '\\':
            out += '\\';
            break;
        case '\'':
            out += '\'';
            break;
        case '"':
            out += '"';
            break;
        case 'a':
            out += '\a';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        case 'n':
            out += '\n';
            break;
        case 'r':
            out += '\r';
            break;
        case 't':
            out += '\t';
            break;
        case 'v':
            out += '\v';
            break;
        case 'x':
        case 'u':
        case 'U': {
            auto code = hexDigits(e == 'x' ? 2 : e == 'u' ? 4 : 8);
            if (!code) {
                return code.error();
            }
            if (*code > 0x10FFFF) {
                return makeError(lineError(line, "escape beyond Unicode in a string"));
            }
            if (*code >= 0xD800 && *code <= 0xDFFF) {
                // A lone surrogate has no UTF-8 form; storing its bytes would make invalid UTF-8 downstream.
                return makeError(
                    lineError(line, "a surrogate escape (U+D800-U+DFFF) in a string; write the character"));
            }
            appendUtf8(out, *code);
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                unsigned long code = static_cast<unsigned long>(e - '0');
                for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
                    code = code * 8 + static_cast<unsigned long>(body[++i] - '0');
                }
                appendUtf8(out, code);
            } else if (e == 'N') {
                return makeError(lineError(line, "named escapes (\\N{...}) are not supported; write the character"));
            } else {
                out += '\\'; // Python keeps unknown escapes as written
                out += e;
            }
        }
    }
    return out;
}

bool isStringPrefix(std::string_view word) {
    std::string lower;
    for (char c : word) {
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    static const char* const prefixes[] = {"r", "u", "b", "f", "br", "rb", "fr", "rf"};
    for (const char* prefix : prefixes) {
        if (lower == prefix) {
            return true;
        }
    }
    return false;
}

class Tokenizer {
public:
    explicit Tokenizer(std::string_view source) : src_(source) {}

    Result<std::vector<PythonLogicalLine>> run() {
        std::vector<PythonLogicalLine> lines;
        PythonLogicalLine current;
        int depth = 0;
        while (pos_ < src_.size()) {
            unsigned char c = static_cast<unsigned char>(src_[pos_]);
            if (c == '\n') {
                advanceLine();
                if (depth == 0 && !current.tokens.empty()) {
                    lines.push_back(std::move(current));
                    current = {};
                }
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
                ++pos_;
                continue;
            }
            if (c == '#') {
                while (pos_ < src_.size() && src_[pos_] != '\n') {
                    ++pos_;
                }
                continue;
            }
            if (c == '\\') {
                std::size_t next = pos_ + 1;
                if (next < src_.size() && src_[next] == '\r') {
                    ++next;
                }
                if (next < src_.size() && src_[next] == '\n') {
                    pos_ = next;
                    advanceLine();
                    continue;
                }
                return makeError(lineError(line_, "stray backslash outside a string"));
            }
            PythonToken token;
            token.line = line_;
            token.column = static_cast<int>(pos_ - lineStart_);
            if (isNameStart(c)) {
                std::size_t start = pos_;
                while (pos_ < src_.size() && isNameChar(static_cast<unsigned char>(src_[pos_]))) {
                    ++pos_;
                }
                std::string_view word = src_.substr(start, pos_ - start);
                if (pos_ < src_.size() && (src_[pos_] == '\'' || src_[pos_] == '"') && isStringPrefix(word)) {
                    auto status = readString(token, start, word);
                    if (!status) {
                        return status.error();
                    }
                } else {
                    token.kind = PythonTokenKind::Name;
                    token.text = token.value = std::string(word);
                }
            } else if (c == '\'' || c == '"') {
                auto status = readString(token, pos_, {});
                if (!status) {
                    return status.error();
                }
            } else if (std::isdigit(c) || (c == '.' && pos_ + 1 < src_.size() &&
                                           std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])))) {
                std::size_t start = pos_;
                while (pos_ < src_.size()) {
                    unsigned char d = static_cast<unsigned char>(src_[pos_]);
                    bool exponentSign = (d == '+' || d == '-') && pos_ > start &&
                                        (src_[pos_ - 1] == 'e' || src_[pos_ - 1] == 'E') &&
                                        !(src_.substr(start, 2) == "0x" || src_.substr(start, 2) == "0X");
                    if (std::isalnum(d) || d == '_' || d == '.' || exponentSign) {
                        ++pos_;
                    } else {
                        break;
                    }
                }
                token.kind = PythonTokenKind::Number;
                token.text = token.value = std::string(src_.substr(start, pos_ - start));
            } else {
                static const char* const twoCharOperators[] = {
                    "==", "!=", "<=", ">=", "**", "//", "->", ":=", "+=", "-=", "*=", "/=", "<<", ">>", "|=", "&="};
                token.kind = PythonTokenKind::Operator;
                token.text = std::string(1, static_cast<char>(c));
                for (const char* op : twoCharOperators) {
                    if (src_.substr(pos_, 2) == op) {
                        token.text = op;
                        break;
                    }
                }
                pos_ += token.text.size();
                token.value = token.text;
                if (token.text == "(" || token.text == "[" || token.text == "{") {
                    ++depth;
                } else if ((token.text == ")" || token.text == "]" || token.text == "}") && depth > 0) {
                    --depth;
                }
            }
            current.tokens.push_back(std::move(token));
        }
        if (depth > 0) {
            return makeError(lineError(line_, "a bracket opened earlier is never closed"));
        }
        if (!current.tokens.empty()) {
            lines.push_back(std::move(current));
        }
        return lines;
    }

private:
    void advanceLine() {
        ++pos_;
        ++line_;
        lineStart_ = pos_;
    }

    Status readString(PythonToken& token, std::size_t tokenStart, std::string_view prefixWord) {
        token.kind = PythonTokenKind::String;
        for (char p : prefixWord) {
            token.prefix += static_cast<char>(std::tolower(static_cast<unsigned char>(p)));
        }
        const bool raw = token.prefix.find('r') != std::string::npos;
        const char quote = src_[pos_];
        const bool triple = src_.substr(pos_, 3) == std::string(3, quote);
        const std::size_t quoteLength = triple ? 3 : 1;
        const int startLine = line_;
        pos_ += quoteLength;
        std::size_t bodyStart = pos_;
        while (true) {
            if (pos_ >= src_.size()) {
                return makeError(lineError(startLine, "unterminated string"));
            }
            char c = src_[pos_];
            if (c == '\\') {
                if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '\n') {
                    pos_ += 1;
                    advanceLine();
                } else {
                    pos_ += 2;
                }
                continue;
            }
            if (c == '\n') {
                if (!triple) {
                    return makeError(lineError(startLine, "unterminated string"));
                }
                advanceLine();
                continue;
            }
            if (c == quote && (!triple || src_.substr(pos_, 3) == std::string(3, quote))) {
                break;
            }
            ++pos_;
        }
        std::string_view body = src_.substr(bodyStart, pos_ - bodyStart);
        pos_ += quoteLength;
        token.text = std::string(src_.substr(tokenStart, pos_ - tokenStart));
        if (raw) {
            token.value = std::string(body);
        } else {
            auto decoded = decodeEscapes(body, startLine);
            if (!decoded) {
                return decoded.error();
            }
            token.value = std::move(*decoded);
        }
        return Ok{};
    }

    std::string_view src_;
    std::size_t pos_ = 0;
    std::size_t lineStart_ = 0;
    int line_ = 1;
};

Result<nlohmann::json> parseNumber(const PythonToken& token) {
    std::string digits;
    for (char c : token.text) {
        if (c != '_') {
            digits += c;
        }
    }
    auto bad = [&] {
        return makeError(lineError(token.line, "'" + token.text + "' is not a number MKB_META can hold"));
    };
    if (digits.empty() || digits.back() == 'j' || digits.back() == 'J') {
        return bad();
    }
    int base = 10;
    std::string body = digits;
    if (digits.size() > 2 && digits[0] == '0' && std::isalpha(static_cast<unsigned char>(digits[1]))) {
        char marker = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[1])));
        base = marker == 'x' ? 16 : marker == 'o' ? 8 : marker == 'b' ? 2 : 0;
        if (base == 0) {
            return bad();
        }
        body = digits.substr(2);
    }
    const bool looksFloat = base == 10 && body.find_first_of(".eE") != std::string::npos;
    errno = 0;
    char* end = nullptr;
    if (looksFloat) {
        double value = std::strtod(body.c_str(), &end);
        if (end != body.c_str() + body.size() || errno == ERANGE) {
            return bad();
        }
        return nlohmann::json(value);
    }
    if (base == 10 && body.size() > 1 && body[0] == '0' && body.find_first_not_of('0') != std::string::npos) {
        return bad(); // Python 3 has no leading-zero decimals
    }
    long long value = std::strtoll(body.c_str(), &end, base);
    if (end != body.c_str() + body.size() || errno == ERANGE) {
        return bad();
    }
    return nlohmann::json(value);
}

class LiteralParser {
public:
    LiteralParser(const std::vector<PythonToken>& tokens, std::size_t begin, std::size_t end)
        : tokens_(tokens), pos_(begin), end_(end) {}

    Result<nlohmann::json> parseAll() {
        int lastLine =
            pos_ < end_ ? tokens_[pos_].line : (end_ > 0 && end_ <= tokens_.size() ? tokens_[end_ - 1].line : 1);
        if (pos_ >= end_) {
            return makeError(lineError(lastLine, "a value is missing"));
        }
        auto value = parseValue(0);
        if (!value) {
            return value;
        }
        if (pos_ < end_) {
            return makeError(unexpected(tokens_[pos_], "after the value"));
        }
        return value;
    }

private:
    std::string unexpected(const PythonToken& token, const std::string& where) {
        if (token.kind == PythonTokenKind::Operator) {
            return lineError(token.line, "operator '" + token.text + "' " + where +
                                             " is an expression, not a literal; write the value itself");
        }
        return lineError(token.line, "unexpected '" + token.text + "' " + where);
    }

    bool atOperator(const char* op) const {
        return pos_ < end_ && tokens_[pos_].kind == PythonTokenKind::Operator && tokens_[pos_].text == op;
    }

    int currentLine() const { return pos_ < end_ ? tokens_[pos_].line : tokens_[end_ - 1].line; }

    Result<nlohmann::json> parseValue(int depth) {
        if (depth > kMaxLiteralDepth) {
            return makeError(lineError(currentLine(), "values nested deeper than 64 levels"));
        }
        if (pos_ >= end_) {
            return makeError(lineError(currentLine(), "the value ends too early"));
        }
        const PythonToken& token = tokens_[pos_];
        switch (token.kind) {
        case PythonTokenKind::String:
            return parseStrings();
        case PythonTokenKind::Number:
            ++pos_;
            return parseNumber(token);
        case PythonTokenKind::Name: {
            ++pos_;
            if (token.text == "True") {
                return nlohmann::json(true);
            }
            if (token.text == "False") {
                return nlohmann::json(false);
            }
            if (token.text == "None") {
                return nlohmann::json(nullptr);
            }
            if (atOperator("(")) {
                return makeError(
                    lineError(token.line,
                              "call of '" + token.text + "(...)' is not allowed; MKB_META holds plain literals only"));
            }
            if (atOperator(".") || atOperator("[")) {
                return makeError(lineError(token.line, "'" + token.text + tokens_[pos_].text +
                                                           "...' refers to code; MKB_META holds plain literals only"));
            }
            return makeError(lineError(token.line, "name '" + token.text +
                                                       "' is not a literal; MKB_META holds plain literals only"));
        }
        case PythonTokenKind::Operator:
            if (token.text == "-" || token.text == "+") {
                ++pos_;
                if (pos_ < end_ && tokens_[pos_].kind == PythonTokenKind::Number) {
                    auto number = parseNumber(tokens_[pos_++]);
                    if (number && token.text == "-") {
                        if (number->is_number_integer()) {
                            return nlohmann::json(-number->get<long long>());
                        }
                        return nlohmann::json(-number->get<double>());
                    }
                    return number;
                }
                return makeError(unexpected(token, "before a non-number"));
            }
            if (token.text == "{") {
                return parseDict(depth);
            }
            if (token.text == "[") {
                return parseSequence(depth, "]");
            }
            if (token.text == "(") {
                return parseSequence(depth, ")");
            }
            return makeError(unexpected(token, "where a value belongs"));
        case PythonTokenKind::Newline:
            break;
        }
        return makeError(lineError(token.line, "a value is missing"));
    }

    Result<nlohmann::json> parseStrings() {
        std::string joined;
        while (pos_ < end_ && tokens_[pos_].kind == PythonTokenKind::String) {
            const PythonToken& token = tokens_[pos_++];
            if (token.prefix.find('f') != std::string::npos) {
                return makeError(lineError(token.line, "f-strings are code, not literals; write the text itself"));
            }
            if (token.prefix.find('b') != std::string::npos) {
                return makeError(lineError(token.line, "bytes literals are not supported in MKB_META; use a string"));
            }
            joined += token.value;
        }
        return nlohmann::json(std::move(joined));
    }

    Result<nlohmann::json> parseDict(int depth) {
        const int openLine = tokens_[pos_].line;
        ++pos_; // '{'
        nlohmann::json object = nlohmann::json::object();
        while (true) {
            if (pos_ >= end_) {
                return makeError(lineError(openLine, "the dict opened here is never closed"));
            }
            if (atOperator("}")) {
                ++pos_;
                return object;
            }
            const PythonToken& keyToken = tokens_[pos_];
            auto key = parseValue(depth + 1);
            if (!key) {
                return key;
            }
            if (atOperator(",") || atOperator("}")) {
                return makeError(lineError(keyToken.line, "sets are not supported; use a list"));
            }
            if (!key->is_string()) {
                return makeError(lineError(keyToken.line, "dict key " + key->dump() + " is not a string"));
            }
            if (!atOperator(":")) {
                if (pos_ >= end_) {
                    return makeError(lineError(openLine, "the dict opened here is never closed"));
                }
                return makeError(unexpected(tokens_[pos_], "after a dict key (expected ':')"));
            }
            ++pos_;
            auto value = parseValue(depth + 1);
            if (!value) {
                return value;
            }
            std::string name = key->get<std::string>();
            if (object.contains(name)) {
                return makeError(lineError(keyToken.line, "key '" + name + "' appears twice"));
            }
            object[name] = std::move(*value);
            if (atOperator(",")) {
                ++pos_;
            } else if (!atOperator("}")) {
                if (pos_ >= end_) {
                    return makeError(lineError(openLine, "the dict opened here is never closed"));
                }
                return makeError(unexpected(tokens_[pos_], "inside a dict"));
            }
        }
    }

    Result<nlohmann::json> parseSequence(int depth, const char* close) {
        const int openLine = tokens_[pos_].line;
        const bool tuple = std::string(close) == ")";
        ++pos_;
        nlohmann::json array = nlohmann::json::array();
        bool sawComma = false;
        while (true) {
            if (pos_ >= end_) {
                return makeError(lineError(openLine, std::string(tuple ? "the tuple" : "the list") +
                                                         " opened here is never closed"));
            }
            if (atOperator(close)) {
                ++pos_;
                if (tuple && array.size() == 1 && !sawComma) {
                    return array[0]; // (x) is x
                }
                return array;
            }
            auto value = parseValue(depth + 1);
            if (!value) {
                return value;
            }
            array.push_back(std::move(*value));
            if (atOperator(",")) {
                sawComma = true;
                ++pos_;
            } else if (!atOperator(close)) {
                if (pos_ >= end_) {
                    continue; // reported as never closed above
                }
                return makeError(unexpected(tokens_[pos_], tuple ? "inside a tuple" : "inside a list"));
            }
        }
    }

    const std::vector<PythonToken>& tokens_;
    std::size_t pos_;
    std::size_t end_;
};

bool isName(const PythonToken& token, const char* name) {
    return token.kind == PythonTokenKind::Name && token.text == name;
}
bool isOperator(const PythonToken& token, const char* op) {
    return token.kind == PythonTokenKind::Operator && token.text == op;
}

} // namespace

Result<std::vector<PythonLogicalLine>> tokenizePython(std::string_view source) {
    if (source.find('\r') == std::string_view::npos) {
        return Tokenizer(source).run();
    }
    // Python reads source with universal newlines: "\r\n" and a lone "\r" both end a line (old Mac files use "\r").
    std::string unified;
    unified.reserve(source.size());
    for (std::size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            unified += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') {
                ++i;
            }
        } else {
            unified += source[i];
        }
    }
    return Tokenizer(unified).run();
}

Result<nlohmann::json> parsePythonLiteral(const std::vector<PythonToken>& tokens, std::size_t begin, std::size_t end) {
    end = std::min(end, tokens.size());
    return LiteralParser(tokens, begin, end).parseAll();
}

Result<nlohmann::json> parsePythonLiteralText(std::string_view text) {
    auto lines = tokenizePython(text);
    if (!lines) {
        return lines.error();
    }
    std::vector<PythonToken> tokens;
    for (const PythonLogicalLine& line : *lines) {
        if (!tokens.empty()) {
            return makeError(lineError(line.line(), "a second statement follows the value"));
        }
        tokens = line.tokens;
    }
    return parsePythonLiteral(tokens, 0, tokens.size());
}

PythonModuleFacts scanPythonModule(const std::vector<PythonLogicalLine>& lines) {
    PythonModuleFacts facts;
    if (!lines.empty()) {
        const PythonLogicalLine& first = lines.front();
        bool allStrings = true;
        for (const PythonToken& token : first.tokens) {
            allStrings = allStrings && token.kind == PythonTokenKind::String &&
                         token.prefix.find_first_of("bf") == std::string::npos;
        }
        if (allStrings) {
            facts.hasDocstring = true;
            facts.docstringLine = first.line();
            for (const PythonToken& token : first.tokens) {
                facts.docstring += token.value;
            }
        }
    }
    for (const PythonLogicalLine& line : lines) {
        if (!line.atModuleLevel()) {
            continue;
        }
        const std::vector<PythonToken>& t = line.tokens;
        std::size_t defAt = isName(t[0], "async") && t.size() > 1 ? 1 : 0;
        if (isName(t[defAt], "def") && t.size() > defAt + 1 && t[defAt + 1].kind == PythonTokenKind::Name) {
            facts.topLevelFunctions.push_back(t[defAt + 1].text);
            continue;
        }
        bool mentionsMeta = false;
        for (const PythonToken& token : t) {
            mentionsMeta = mentionsMeta || isName(token, "MKB_META");
        }
        if (!mentionsMeta) {
            continue;
        }
        std::size_t equals = 0;
        if (isName(t[0], "MKB_META") && t.size() > 1 && isOperator(t[1], "=")) {
            equals = 1;
        } else if (isName(t[0], "MKB_META") && t.size() > 1 && isOperator(t[1], ":")) {
            for (std::size_t i = 2; i < t.size(); ++i) {
                if (isOperator(t[i], "=")) {
                    equals = i;
                    break;
                }
            }
        }
        if (equals == 0) {
            facts.metaProblems.push_back(lineError(line.line(), "MKB_META is used or changed outside its one literal "
                                                                "assignment; write all of it as `MKB_META = {...}`"));
            continue;
        }
        if (facts.hasMeta) {
            facts.metaProblems.push_back(lineError(line.line(), "MKB_META is assigned a second time (first at line " +
                                                                    std::to_string(facts.metaLine) + ")"));
            continue;
        }
        facts.hasMeta = true;
        facts.metaLine = line.line();
        facts.metaValueTokens.assign(t.begin() + static_cast<std::ptrdiff_t>(equals) + 1, t.end());
    }
    return facts;
}

} // namespace mkb
