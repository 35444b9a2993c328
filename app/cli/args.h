// A small command-line parser: --flag, --option VALUE, --option=VALUE and positionals, with clear errors.
#pragma once

#include "core/util/result.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mkb::cli {

struct ArgSpec {
    std::set<std::string> flags;      // options without a value, e.g. "json", "dry-run"
    std::set<std::string> options;    // options that take a value, e.g. "problems", "dsls"
    std::set<std::string> repeatable; // options that may be given several times (subset of options)
};

class ParsedArgs {
public:
    std::vector<std::string> positionals;
    std::set<std::string> flags;
    std::map<std::string, std::vector<std::string>> options;

    bool has(const std::string& flag) const { return flags.count(flag) > 0; }
    bool wantsHelp() const { return has("help"); }
    std::optional<std::string> option(const std::string& name) const;
    std::string optionOr(const std::string& name, const std::string& fallback) const;
    std::vector<std::string> all(const std::string& name) const;
    /// Integer option; the error names the option and the bad value.
    Result<int> intOption(const std::string& name, int fallback, int minimum, int maximum) const;
    /// Number option; nan, inf and text that is not wholly a number are refused with the option and value named.
    Result<double> doubleOption(const std::string& name, double fallback) const;
};

/// Parses args against the spec. `--help`/`-h` is always accepted.
Result<ParsedArgs> parseArgs(const std::vector<std::string>& args, const ArgSpec& spec);

/// The command line as recorded in stores and reports: "mkb VERB ARGS...", each word shell-quoted, so that it reads
/// back (shellWords) into the same words.
std::string recordedCommandLine(const std::string& verb, const std::vector<std::string>& args);

} // namespace mkb::cli
