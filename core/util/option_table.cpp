// Parsing a command line against an option table, checking each value, and printing the table as help.
#include "core/util/option_table.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace mkb {
namespace {

std::string dashed(const std::string& name) {
    return "--" + name;
}

std::string wholeNumberText(double value) {
    return std::to_string(static_cast<long long>(value));
}

bool hasMinimum(const OptionDeclaration& option) {
    return option.minimum > std::numeric_limits<double>::lowest();
}

bool hasMaximum(const OptionDeclaration& option) {
    return option.maximum < std::numeric_limits<double>::max();
}

std::string joinedChoices(const std::vector<std::string>& choices) {
    std::string text;
    for (std::size_t i = 0; i < choices.size(); ++i) {
        text += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    }
    return text;
}

/// The range a number option accepts, in words: "from 1 to 100", "above 0", "of at least 3".
std::string numberRange(const OptionDeclaration& option) {
    const bool whole = option.kind == OptionKind::Integer;
    auto shown = [&](double value) { return whole ? wholeNumberText(value) : optionNumberText(value); };
    if (option.aboveMinimum && hasMinimum(option)) {
        return "above " + shown(option.minimum) + (hasMaximum(option) ? " up to " + shown(option.maximum) : "");
    }
    if (hasMinimum(option) && hasMaximum(option)) {
        return "from " + shown(option.minimum) + " to " + shown(option.maximum);
    }
    if (hasMinimum(option)) {
        return "of at least " + shown(option.minimum);
    }
    if (hasMaximum(option)) {
        return "of at most " + shown(option.maximum);
    }
    return "";
}

/// The parenthesis after an option's help: what is required, its default and range.
std::string helpFacts(const OptionDeclaration& option) {
    std::vector<std::string> facts;
    if (option.required) {
        facts.emplace_back("required");
    }
    if (option.repeatable) {
        facts.emplace_back("repeatable");
    }
    if (!option.defaultNote.empty()) {
        facts.push_back("default: " + option.defaultNote);
    } else if (option.kind == OptionKind::Integer) {
        facts.push_back("default " + wholeNumberText(option.defaultNumber));
    } else if (option.kind == OptionKind::Number) {
        facts.push_back("default " + optionNumberText(option.defaultNumber));
    } else if (option.kind != OptionKind::Flag && !option.defaultText.empty()) {
        facts.push_back("default " + option.defaultText);
    }
    if (option.kind == OptionKind::Integer || option.kind == OptionKind::Number) {
        if (std::string range = numberRange(option); !range.empty()) {
            facts.push_back(range.rfind("from ", 0) == 0 ? range.substr(5) : range);
        }
    }
    if (facts.empty()) {
        return "";
    }
    std::string text = " (";
    for (std::size_t i = 0; i < facts.size(); ++i) {
        text += (i == 0 ? "" : "; ") + facts[i];
    }
    return text + ")";
}

/// Words of `text` wrapped into lines of at most `width` characters (a longer word gets a line of its own).
std::vector<std::string> wrapped(const std::string& text, std::size_t width) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        end = end == std::string::npos ? text.size() : end;
        const std::string word = text.substr(start, end - start);
        start = end + 1;
        if (word.empty()) {
            continue;
        }
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) {
        lines.push_back(line);
    }
    return lines;
}

std::string termOf(const OptionDeclaration& option) {
    return "  " + dashed(option.name) + (option.valueName.empty() ? "" : " " + option.valueName);
}

Result<ParsedOptions> parse(const OptionTable& table, const std::vector<std::string>& args, bool lenient) {
    ParsedOptions parsed(table);
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
            parsed.help = true;
            continue;
        }
        if (arg.rfind("--", 0) != 0) {
            if (lenient) {
                continue;
            }
            return makeError("unknown option '" + arg + "' (options are spelled --name; see --help)");
        }
        std::string name = arg.substr(2);
        std::optional<std::string> inlineValue;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const OptionDeclaration* option = findOption(table, name);
        if (!option) {
            if (!lenient) {
                return makeError("unknown option '--" + name + "' (see --help)");
            }
            if (!inlineValue && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
                ++i; // an option this version does not know: its value goes with it
            }
            continue;
        }
        std::string value;
        if (option->kind == OptionKind::Flag) {
            if (inlineValue) {
                if (lenient) {
                    continue;
                }
                return makeError(dashed(name) + " takes no value");
            }
        } else if (inlineValue) {
            value = *inlineValue;
        } else if (i + 1 < args.size()) {
            value = args[++i];
        } else {
            if (lenient) {
                continue;
            }
            return makeError(dashed(name) + " needs a value");
        }
        if (Status recorded = parsed.set(name, value); !recorded && !lenient) {
            return recorded.error();
        }
    }
    return parsed;
}

} // namespace

OptionDeclaration& OptionDeclaration::withDefault(std::string text) {
    defaultText = std::move(text);
    return *this;
}

OptionDeclaration& OptionDeclaration::withDefault(double number) {
    defaultNumber = number;
    return *this;
}

OptionDeclaration& OptionDeclaration::within(double lowest, double highest) {
    minimum = lowest;
    maximum = highest;
    return *this;
}

OptionDeclaration& OptionDeclaration::above(double lowest) {
    minimum = lowest;
    aboveMinimum = true;
    return *this;
}

OptionDeclaration& OptionDeclaration::defaultSaid(std::string note) {
    defaultNote = std::move(note);
    return *this;
}

OptionDeclaration& OptionDeclaration::isRequired() {
    required = true;
    return *this;
}

OptionDeclaration& OptionDeclaration::isRepeatable() {
    repeatable = true;
    return *this;
}

OptionDeclaration& OptionDeclaration::isAlwaysWritten() {
    alwaysWritten = true;
    return *this;
}

namespace {

OptionDeclaration declaration(std::string name, OptionKind kind, std::string valueName, std::string help) {
    OptionDeclaration option;
    option.name = std::move(name);
    option.kind = kind;
    option.valueName = std::move(valueName);
    option.help = std::move(help);
    return option;
}

} // namespace

OptionDeclaration flagOption(std::string name, std::string help) {
    return declaration(std::move(name), OptionKind::Flag, "", std::move(help));
}

OptionDeclaration textOption(std::string name, std::string valueName, std::string help) {
    return declaration(std::move(name), OptionKind::Text, std::move(valueName), std::move(help));
}

OptionDeclaration pathOption(std::string name, std::string valueName, std::string help) {
    return declaration(std::move(name), OptionKind::Path, std::move(valueName), std::move(help));
}

OptionDeclaration choiceOption(std::string name, std::string valueName, std::string help,
                               std::vector<std::string> choices) {
    OptionDeclaration option = declaration(std::move(name), OptionKind::Choice, std::move(valueName), std::move(help));
    option.choices = std::move(choices);
    return option;
}

OptionDeclaration integerOption(std::string name, std::string valueName, std::string help) {
    return declaration(std::move(name), OptionKind::Integer, std::move(valueName), std::move(help));
}

OptionDeclaration numberOption(std::string name, std::string valueName, std::string help) {
    return declaration(std::move(name), OptionKind::Number, std::move(valueName), std::move(help));
}

const OptionDeclaration* findOption(const OptionTable& table, const std::string& name) {
    auto it =
        std::find_if(table.begin(), table.end(), [&](const OptionDeclaration& option) { return option.name == name; });
    return it == table.end() ? nullptr : &*it;
}

OptionTable selectOptions(const OptionTable& table, const std::vector<std::string>& names) {
    OptionTable selected;
    for (const std::string& name : names) {
        const OptionDeclaration* option = findOption(table, name);
        if (!option) {
            throw std::logic_error("option --" + name + " is not declared in this verb's table");
        }
        selected.push_back(*option);
    }
    return selected;
}

std::string optionNumberText(double value) {
    char buffer[64];
    auto written = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, written.ptr);
}

std::string optionValueProblem(const OptionDeclaration& option, const std::string& value) {
    const std::string name = dashed(option.name);
    switch (option.kind) {
    case OptionKind::Flag:
        return value.empty() ? "" : name + " takes no value";
    case OptionKind::Text:
    case OptionKind::Path:
        return "";
    case OptionKind::Choice:
        if (std::find(option.choices.begin(), option.choices.end(), value) == option.choices.end()) {
            return name + " takes " + joinedChoices(option.choices) + ", not '" + value + "'";
        }
        return "";
    case OptionKind::Integer: {
        errno = 0;
        char* end = nullptr;
        const long long number = std::strtoll(value.c_str(), &end, 10);
        if (errno != 0 || end == value.c_str() || *end != '\0' || static_cast<double>(number) < option.minimum ||
            static_cast<double>(number) > option.maximum) {
            const std::string range = numberRange(option);
            return name + " takes a whole number" + (range.empty() ? "" : " " + range) + ", not '" + value + "'";
        }
        return "";
    }
    case OptionKind::Number: {
        errno = 0;
        char* end = nullptr;
        const double number = std::strtod(value.c_str(), &end);
        if (errno != 0 || end == value.c_str() || *end != '\0') {
            return name + " takes a number, not '" + value + "'";
        }
        // strtod also reads "nan", "inf" and "infinity": no option means any of them.
        if (!std::isfinite(number)) {
            return name + " takes a finite number, not '" + value + "'";
        }
        const bool belowRange = option.aboveMinimum ? number <= option.minimum : number < option.minimum;
        if (belowRange || number > option.maximum) {
            const bool positive = option.aboveMinimum && option.minimum == 0 && !hasMaximum(option);
            return name + (positive ? " takes a positive number" : " takes a number " + numberRange(option)) +
                   ", not '" + value + "'";
        }
        return "";
    }
    }
    return "";
}

const OptionDeclaration& ParsedOptions::declared(const std::string& name) const {
    if (const OptionDeclaration* option = findOption(table_, name)) {
        return *option;
    }
    throw std::logic_error("option --" + name + " is not declared in this verb's table");
}

bool ParsedOptions::given(const std::string& name) const {
    declared(name);
    return flags_.count(name) > 0 || values_.count(name) > 0;
}

bool ParsedOptions::flag(const std::string& name) const {
    declared(name);
    return flags_.count(name) > 0;
}

std::string ParsedOptions::text(const std::string& name) const {
    const OptionDeclaration& option = declared(name);
    auto it = values_.find(name);
    if (it != values_.end() && !it->second.empty()) {
        return it->second.back();
    }
    if (option.kind == OptionKind::Integer) {
        return wholeNumberText(option.defaultNumber);
    }
    return option.kind == OptionKind::Number ? optionNumberText(option.defaultNumber) : option.defaultText;
}

std::optional<std::string> ParsedOptions::value(const std::string& name) const {
    declared(name);
    auto it = values_.find(name);
    return it == values_.end() || it->second.empty() ? std::nullopt : std::optional<std::string>(it->second.back());
}

int ParsedOptions::integer(const std::string& name) const {
    const OptionDeclaration& option = declared(name);
    auto it = values_.find(name);
    return it == values_.end() ? static_cast<int>(option.defaultNumber)
                               : static_cast<int>(std::strtoll(it->second.back().c_str(), nullptr, 10));
}

double ParsedOptions::number(const std::string& name) const {
    const OptionDeclaration& option = declared(name);
    auto it = values_.find(name);
    return it == values_.end() ? option.defaultNumber : std::strtod(it->second.back().c_str(), nullptr);
}

std::vector<std::string> ParsedOptions::all(const std::string& name) const {
    declared(name);
    auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Status ParsedOptions::set(const std::string& name, const std::string& value) {
    const OptionDeclaration* option = findOption(table_, name);
    if (!option) {
        return makeError("unknown option '--" + name + "' (see --help)");
    }
    if (std::string problem = optionValueProblem(*option, value); !problem.empty()) {
        return makeError(problem);
    }
    if (option->kind == OptionKind::Flag) {
        flags_.insert(name);
        return Ok{};
    }
    std::vector<std::string>& slot = values_[name];
    if (!slot.empty() && !option->repeatable) {
        return makeError(dashed(name) + " is given twice");
    }
    slot.push_back(value);
    return Ok{};
}

Result<ParsedOptions> parseOptions(const OptionTable& table, const std::vector<std::string>& args) {
    return parse(table, args, false);
}

ParsedOptions parseOptionsLeniently(const OptionTable& table, const std::vector<std::string>& args) {
    return std::move(parse(table, args, true)).value();
}

Status requireOptions(const OptionTable& table, const ParsedOptions& parsed) {
    for (const OptionDeclaration& option : table) {
        if (!option.required) {
            continue;
        }
        const std::string value = parsed.text(option.name);
        if (!parsed.given(option.name) || value.find_first_not_of(" \t\r\n") == std::string::npos) {
            return makeError(dashed(option.name) + " is required");
        }
    }
    return Ok{};
}

std::string optionsHelp(const OptionTable& table, std::size_t width) {
    std::size_t column = 0;
    for (const OptionDeclaration& option : table) {
        column = std::max(column, termOf(option).size() + 2);
    }
    column = std::min<std::size_t>(column, 26);
    const std::size_t textWidth = width > column + 20 ? width - column : 20;
    std::string text;
    for (const OptionDeclaration& option : table) {
        const std::string term = termOf(option);
        const std::vector<std::string> lines = wrapped(option.help + helpFacts(option), textWidth);
        bool first = true;
        if (term.size() + 2 > column) {
            text += term + "\n"; // a long term stands alone; its description follows, indented under the others'
            first = false;
        }
        for (const std::string& line : lines) {
            text += (first ? term + std::string(column - term.size(), ' ') : std::string(column, ' ')) + line + "\n";
            first = false;
        }
    }
    return text;
}

} // namespace mkb
