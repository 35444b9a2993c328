// What every mkb verb shares on its command line: the help put together around its option table (the options
// themselves are declared and parsed by core/util/option_table.h), and the command line as recorded.
#pragma once

#include "core/util/option_table.h"

#include <string>
#include <string_view>
#include <vector>

namespace mkb::cli {

/// A verb's whole --help: the hand-written introduction (usage line and description), "options:" with every
/// option of the table as its declaration says it, then the hand-written rest (exit codes), a blank line between.
std::string verbHelp(std::string_view introduction, const OptionTable& options, std::string_view rest);

/// The command line as recorded in stores and reports: "mkb VERB ARGS...", each word shell-quoted, so that it reads
/// back (shellWords) into the same words.
std::string recordedCommandLine(const std::string& verb, const std::vector<std::string>& args);

} // namespace mkb::cli
