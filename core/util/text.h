// Small text helpers shared by the catalog, the store and the CLI: file reading, UTF-8 checks, splitting.
#pragma once

#include "core/util/result.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// The most bytes readFile takes unless told otherwise: records, configs and journals are a few MB at most.
inline constexpr std::size_t kDefaultReadLimitBytes = 16u << 20;

/// Reads a whole regular file as bytes, at most maxBytes of them. It never blocks and never grows without bound: a
/// folder, FIFO, socket or device (also behind a symbolic link, e.g. to /dev/zero) is refused before reading, and so is
/// a file over the limit. Each error names the path, what it is, and the limit.
Result<std::string> readFile(const std::filesystem::path& path, std::size_t maxBytes = kDefaultReadLimitBytes);

/// An errno value in words for a message about a path: strerror's text, except that ELOOP says it is a symbolic link
/// that never reaches a file, and what to do.
std::string errnoInWords(int error);

/// What a file of this st_mode is, in words ("a folder", "a FIFO (named pipe)", "a character device", ...).
std::string fileKindInWords(unsigned int mode);

/// Text made safe to quote inside a one-line message: control characters (newline, tab, escape, DEL, C1 controls,
/// U+2028/U+2029) become visible escapes such as "\n" or "\x1b", and bytes that are not UTF-8 become "\xNN".
std::string safeOneLine(std::string_view text);

/// Writes a file atomically (temporary file + rename) as writeOutputFile does: through a symbolic link to its target,
/// never over a folder, FIFO, socket or device; the error names the path and what to do.
Status writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

/// True when the bytes are well-formed UTF-8. On failure, badOffset receives the first bad byte's offset.
bool isValidUtf8(std::string_view bytes, std::size_t* badOffset = nullptr);

std::vector<std::string> splitString(std::string_view text, char separator);
std::string_view trimmed(std::string_view text);
bool startsWith(std::string_view text, std::string_view prefix);

/// Shell-style wildcard match (`*`, `?`, `[abc]`), used for problem selections like `p0*` or `attention/*`.
bool globMatch(std::string_view pattern, std::string_view text);

} // namespace mkb
