// Reading Python problem files as text, never running them: a small tokenizer and a parser for literal values.
#pragma once

#include "core/util/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace mkb {

enum class PythonTokenKind { Name, Number, String, Operator, Newline };

/// One token of Python source. Strings carry their decoded value; `column` is the byte column of the token's start.
struct PythonToken {
    PythonTokenKind kind = PythonTokenKind::Operator;
    std::string text;   // the token as written (for strings: as written, prefix and quotes included)
    std::string value;  // strings: the decoded contents; others: same as text
    std::string prefix; // strings: the lower-cased prefix ("", "r", "b", "f", "rb", ...)
    int line = 1;       // 1-based line of the token's first character
    int column = 0;
};

/// A logical line (a statement at any indentation): its tokens, the closing Newline token excluded.
struct PythonLogicalLine {
    std::vector<PythonToken> tokens;
    int line() const { return tokens.empty() ? 0 : tokens.front().line; }
    bool atModuleLevel() const { return !tokens.empty() && tokens.front().column == 0; }
};

/// Splits Python source into logical lines. The error names the line: "line 12: unterminated string".
Result<std::vector<PythonLogicalLine>> tokenizePython(std::string_view source);

/// Parses tokens [begin, end) as one Python literal (dict, list, tuple, str, int, float, True, False, None) into
/// JSON. Names, calls, operators, sets, bytes and f-strings are refused; the error names the line and what was found.
Result<nlohmann::json> parsePythonLiteral(const std::vector<PythonToken>& tokens, std::size_t begin, std::size_t end);

/// Convenience for tests and tools: tokenizes `text` and parses it as one literal.
Result<nlohmann::json> parsePythonLiteralText(std::string_view text);

/// What the catalog needs from a problem file's text.
struct PythonModuleFacts {
    bool hasDocstring = false; // the first statement is a (non-bytes, non-f) string literal
    std::string docstring;     // its decoded value
    int docstringLine = 0;
    std::vector<std::string> topLevelFunctions; // names of module-level `def`s
    bool hasMeta = false;                       // a module-level `MKB_META = ...` exists
    int metaLine = 0;
    std::vector<PythonToken> metaValueTokens; // the tokens after `=`
    std::vector<std::string> metaProblems;    // "line N: ..." for every other module-level use of MKB_META
};

/// Collects module-level facts from tokenized source.
PythonModuleFacts scanPythonModule(const std::vector<PythonLogicalLine>& lines);

} // namespace mkb
