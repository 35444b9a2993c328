// Small text helpers shared by the catalog, the store and the CLI: file reading, UTF-8 checks, splitting.
#pragma once

#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// Reads a whole file as bytes; the error names the path.
Result<std::string> readFile(const std::filesystem::path& path);

/// Writes a file atomically (temporary file + rename); the error names the path.
Status writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

/// True when the bytes are well-formed UTF-8. On failure, badOffset receives the first bad byte's offset.
bool isValidUtf8(std::string_view bytes, std::size_t* badOffset = nullptr);

std::vector<std::string> splitString(std::string_view text, char separator);
std::string_view trimmed(std::string_view text);
bool startsWith(std::string_view text, std::string_view prefix);

/// Shell-style wildcard match (`*`, `?`, `[abc]`), used for problem selections like `p0*` or `attention/*`.
bool globMatch(std::string_view pattern, std::string_view text);

} // namespace mkb
