// Shell words: quoting a word or a command line so that a POSIX shell reads it back unchanged, and splitting such a
// line into its words again (how `mkb run` records its command line and the workbench re-reads it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// The word as a shell reads it back: unchanged when it holds only safe characters, else in single quotes.
std::string shellQuoted(std::string_view word);

/// The words joined by spaces, each shell-quoted.
std::string shellCommandLine(const std::vector<std::string>& words);

/// Splits a command line into words as a POSIX shell would, for quoting only: single quotes, double quotes (with
/// \" \\ \$ \` escapes) and backslash escapes; no expansion. An unterminated quote runs to the end of the line.
std::vector<std::string> shellWords(std::string_view line);

} // namespace mkb
