// The one reader of JSON that comes from outside the process (files, grader and agent replies): nesting depth is
// bounded before nlohmann parses, and a failure says why (too deep, or the syntax error with its line and column).
#pragma once

#include "core/util/result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace mkb {

/// Deepest nesting of arrays and objects accepted from outside. MetaKernelBench's records, the grader's verdicts and
/// agent replies nest a handful of levels; 100k levels crashed the recursive code that walks a parsed value.
inline constexpr std::size_t kMaxJsonDepth = 256;

/// Ok when the text nests arrays and objects (outside strings) at most maxDepth deep; otherwise an error giving the
/// depth reached and the line and column where it was exceeded. Linear in the text, allocates nothing.
Status checkJsonDepth(std::string_view text, std::size_t maxDepth = kMaxJsonDepth);

/// Parses text from outside the process (Json is nlohmann::json or nlohmann::ordered_json). The error is one line
/// giving the cause: "nested deeper than 256 levels at line L, column C" or "syntax error at line L, column C: …".
template <typename Json = nlohmann::json>
Result<Json> parseJsonInput(std::string_view text, std::size_t maxDepth = kMaxJsonDepth);

/// parseJsonInput for files written by Python's json module, which by default writes float('nan') and the infinities
/// as the bare tokens NaN, Infinity and -Infinity (not JSON). Those tokens, outside strings, parse as non-finite
/// doubles, so a reader can name the field that holds one instead of failing on the whole file; errors keep the
/// line and column of the text as written. *readPythonTokens, when given, says whether the text held any of them
/// (then it is not JSON as written, and a reader that keeps the text should keep the parsed value's dump instead).
Result<nlohmann::json> parsePythonJsonInput(std::string_view text, bool* readPythonTokens = nullptr,
                                            std::size_t maxDepth = kMaxJsonDepth);

/// Drop-in for Json::parse(text, nullptr, false) on input from outside: a discarded value when the text is too deep
/// or not JSON, so a caller's existing is_discarded() check covers the depth bound too.
template <typename Json = nlohmann::json>
Json parseJsonInputOrDiscarded(std::string_view text, std::size_t maxDepth = kMaxJsonDepth);

/// Reads a file through readFile (core/util/text.h) and parses it; the error starts with the file's path.
Result<nlohmann::json> readJsonFile(const std::filesystem::path& path, std::size_t maxDepth = kMaxJsonDepth);

} // namespace mkb
