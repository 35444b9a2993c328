// Command-line parsing for every mkb verb.
#include "app/cli/args.h"

#include "core/util/shell_words.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace mkb::cli {

std::optional<std::string> ParsedArgs::option(const std::string& name) const {
    auto it = options.find(name);
    if (it == options.end() || it->second.empty()) {
        return std::nullopt;
    }
    return it->second.back();
}

std::string ParsedArgs::optionOr(const std::string& name, const std::string& fallback) const {
    return option(name).value_or(fallback);
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
    auto it = options.find(name);
    return it == options.end() ? std::vector<std::string>{} : it->second;
}

Result<int> ParsedArgs::intOption(const std::string& name, int fallback, int minimum, int maximum) const {
    auto text = option(name);
    if (!text) {
        return fallback;
    }
    errno = 0;
    char* end = nullptr;
    long value = std::strtol(text->c_str(), &end, 10);
    if (errno != 0 || end == text->c_str() || *end != '\0' || value < minimum || value > maximum) {
        return makeError("--" + name + " takes a whole number from " + std::to_string(minimum) + " to " +
                         std::to_string(maximum) + ", not '" + *text + "'");
    }
    return static_cast<int>(value);
}

Result<double> ParsedArgs::doubleOption(const std::string& name, double fallback) const {
    auto text = option(name);
    if (!text) {
        return fallback;
    }
    errno = 0;
    char* end = nullptr;
    double value = std::strtod(text->c_str(), &end);
    if (errno != 0 || end == text->c_str() || *end != '\0') {
        return makeError("--" + name + " takes a number, not '" + *text + "'");
    }
    // strtod also reads "nan", "inf" and "infinity": no option means any of them.
    if (!std::isfinite(value)) {
        return makeError("--" + name + " takes a finite number, not '" + *text + "'");
    }
    return value;
}

Result<ParsedArgs> parseArgs(const std::vector<std::string>& args, const ArgSpec& spec) {
    ParsedArgs parsed;
    bool onlyPositionals = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (onlyPositionals || arg.size() < 2 || arg[0] != '-') {
            parsed.positionals.push_back(arg);
            continue;
        }
        if (arg == "--") {
            onlyPositionals = true;
            continue;
        }
        if (arg == "-h" || arg == "--help") {
            parsed.flags.insert("help");
            continue;
        }
        if (arg.rfind("--", 0) != 0) {
            return makeError("unknown option '" + arg + "' (options are spelled --name; see --help)");
        }
        std::string name = arg.substr(2);
        std::optional<std::string> inlineValue;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (spec.flags.count(name)) {
            if (inlineValue) {
                return makeError("--" + name + " takes no value");
            }
            parsed.flags.insert(name);
        } else if (spec.options.count(name)) {
            std::string value;
            if (inlineValue) {
                value = *inlineValue;
            } else if (i + 1 < args.size()) {
                value = args[++i];
            } else {
                return makeError("--" + name + " needs a value");
            }
            auto& slot = parsed.options[name];
            if (!slot.empty() && !spec.repeatable.count(name)) {
                return makeError("--" + name + " is given twice");
            }
            slot.push_back(value);
        } else {
            return makeError("unknown option '--" + name + "' (see --help)");
        }
    }
    return parsed;
}

std::string recordedCommandLine(const std::string& verb, const std::vector<std::string>& args) {
    std::vector<std::string> words{"mkb", verb};
    words.insert(words.end(), args.begin(), args.end());
    return shellCommandLine(words);
}

} // namespace mkb::cli
