// One declaration per command-line option (name, kind, default, range, help): the parser, the options part of a
// verb's --help (and so its man page) and the writing of options back into arguments are all generated from it.
#pragma once

#include "core/util/result.h"

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace mkb {

enum class OptionKind {
    Flag,    // no value: --dry-run
    Text,    // any text
    Path,    // a file or folder (a Slurm job gets it made absolute)
    Choice,  // one of `choices`
    Integer, // a whole number within [minimum, maximum]
    Number,  // a finite number within [minimum, maximum] (above the minimum when aboveMinimum)
};

/// Everything there is to know about one option. Tables declare one with the makers below (flagOption, ...) and
/// the chained setters after them: integerOption("replicates", "N", "replicates per cell").withDefault(1).within(1,
/// 100).
struct OptionDeclaration {
    std::string name; // without the dashes: "wall-clock"
    OptionKind kind = OptionKind::Text;
    std::string valueName;    // after the name in the help: "S", "N", "DIR"
    std::string help;         // what it does; the default, range and "required" are added from below
    std::string defaultText;  // Text, Path, Choice: the value when it is not given ("" = none)
    double defaultNumber = 0; // Integer, Number: the value when it is not given
    double minimum = std::numeric_limits<double>::lowest();
    double maximum = std::numeric_limits<double>::max();
    bool aboveMinimum = false;        // Number: the minimum itself is refused ("a positive number")
    std::vector<std::string> choices; // Choice: the values accepted
    std::string defaultNote;          // the help's "(default: ...)" when the default is not a plain value
    bool required = false;            // the verb refuses to run without it (requireOptions)
    bool repeatable = false;          // may be given several times; every value is kept, in order
    bool alwaysWritten = false;       // optionArguments writes it even at its default, so a recorded line says it

    OptionDeclaration& withDefault(std::string text);
    OptionDeclaration& withDefault(double number);
    OptionDeclaration& within(double lowest, double highest);
    OptionDeclaration& above(double lowest);
    OptionDeclaration& defaultSaid(std::string note);
    OptionDeclaration& isRequired();
    OptionDeclaration& isRepeatable();
    OptionDeclaration& isAlwaysWritten();
};

OptionDeclaration flagOption(std::string name, std::string help);
OptionDeclaration textOption(std::string name, std::string valueName, std::string help);
OptionDeclaration pathOption(std::string name, std::string valueName, std::string help);
OptionDeclaration choiceOption(std::string name, std::string valueName, std::string help,
                               std::vector<std::string> choices);
OptionDeclaration integerOption(std::string name, std::string valueName, std::string help);
OptionDeclaration numberOption(std::string name, std::string valueName, std::string help);

using OptionTable = std::vector<OptionDeclaration>;

/// The declaration named `name`, or nullptr.
const OptionDeclaration* findOption(const OptionTable& table, const std::string& name);

/// The declarations of `names`, in the order given: one verb's actions each accept a part of its table.
OptionTable selectOptions(const OptionTable& table, const std::vector<std::string>& names);

/// A command line parsed against a table. Every value in it was checked against its declaration, so the typed
/// lookups cannot fail; a lookup of an option the table does not declare is a programmer error (it throws).
class ParsedOptions {
public:
    explicit ParsedOptions(OptionTable table = {}) : table_(std::move(table)) {}

    std::vector<std::string> positionals;
    bool help = false; // --help or -h was given

    bool given(const std::string& name) const; // a flag set, or an option with a value
    bool flag(const std::string& name) const;
    std::string text(const std::string& name) const;                 // the last value given, else the declared default
    std::optional<std::string> value(const std::string& name) const; // the last value given; nullopt when not given
    int integer(const std::string& name) const;
    double number(const std::string& name) const;
    std::vector<std::string> all(const std::string& name) const; // every value given, in order

    /// Records a value as parsing does: checked against its declaration, refused twice unless repeatable. A flag
    /// takes no value (pass "").
    Status set(const std::string& name, const std::string& value);

private:
    const OptionDeclaration& declared(const std::string& name) const;
    OptionTable table_;
    std::set<std::string> flags_;
    std::map<std::string, std::vector<std::string>> values_;
};

/// Parses --flag, --option VALUE, --option=VALUE, -h/--help, positionals and "--" (all after it positional). An
/// unknown option, a missing value, a value given twice for a non-repeatable option, or a value outside its
/// declaration (not a whole number, out of range, not one of the choices, nan) is refused naming the option and the
/// value.
Result<ParsedOptions> parseOptions(const OptionTable& table, const std::vector<std::string>& args);

/// The same, reading leniently (arguments recorded by an older version): unknown options and values that do not fit
/// are left out, as if not given.
ParsedOptions parseOptionsLeniently(const OptionTable& table, const std::vector<std::string>& args);

/// "--model is required" for the first required option not given (or given blank); ok when all are.
Status requireOptions(const OptionTable& table, const ParsedOptions& parsed);

/// Why `value` does not fit the declaration ("--replicates takes a whole number from 1 to 100, not '0'"), or "".
std::string optionValueProblem(const OptionDeclaration& option, const std::string& value);

/// The help lines of the table: "  --name VALUE   help (required; default X; A to B)", wrapped to `width` columns,
/// each description starting in one column, continuation lines indented under it.
std::string optionsHelp(const OptionTable& table, std::size_t width = 118);

/// A number as the help and written arguments show it: the shortest text that reads back to the same double.
std::string optionNumberText(double value);

/// A typed options struct bound to its table: each declared option names the field it fills. From it come the
/// struct's defaults, the struct from a parsed command line, and the arguments that parse back into the struct.
template <class Options>
using OptionField = std::variant<bool Options::*, int Options::*, double Options::*, std::string Options::*,
                                 std::vector<std::string> Options::*>;

template <class Options>
struct BoundOption {
    OptionDeclaration declaration;
    OptionField<Options> field;
};

template <class Options>
using BoundOptionTable = std::vector<BoundOption<Options>>;

template <class Options>
OptionTable declarationsOf(const BoundOptionTable<Options>& bound) {
    OptionTable table;
    for (const BoundOption<Options>& option : bound) {
        table.push_back(option.declaration);
    }
    return table;
}

/// The struct filled from parsed options (defaults where an option was not given).
template <class Options>
Options optionsFrom(const BoundOptionTable<Options>& bound, const ParsedOptions& parsed) {
    Options options{};
    for (const BoundOption<Options>& option : bound) {
        const std::string& name = option.declaration.name;
        std::visit(
            [&](auto field) {
                using Value = std::remove_cvref_t<decltype(options.*field)>;
                if constexpr (std::is_same_v<Value, bool>) {
                    options.*field = parsed.flag(name);
                } else if constexpr (std::is_same_v<Value, int>) {
                    options.*field = parsed.integer(name);
                } else if constexpr (std::is_same_v<Value, double>) {
                    options.*field = parsed.number(name);
                } else if constexpr (std::is_same_v<Value, std::string>) {
                    options.*field = parsed.text(name);
                } else {
                    options.*field = parsed.all(name);
                }
            },
            option.field);
    }
    return options;
}

/// The struct with every option at its declared default.
template <class Options>
Options optionDefaults(const BoundOptionTable<Options>& bound) {
    return optionsFrom(bound, parseOptionsLeniently(declarationsOf(bound), {}));
}

/// The arguments that parse back into `options`, in the table's order: a flag when set, an option when its value
/// differs from the default (or alwaysWritten says so; an empty text is never written), a repeatable one per value.
template <class Options>
std::vector<std::string> optionArguments(const BoundOptionTable<Options>& bound, const Options& options) {
    const Options defaults = optionDefaults(bound);
    std::vector<std::string> words;
    for (const BoundOption<Options>& option : bound) {
        const OptionDeclaration& declaration = option.declaration;
        const std::string dashed = "--" + declaration.name;
        std::visit(
            [&](auto field) {
                using Value = std::remove_cvref_t<decltype(options.*field)>;
                const Value& value = options.*field;
                const bool written = declaration.alwaysWritten || !(value == defaults.*field);
                if constexpr (std::is_same_v<Value, bool>) {
                    if (value) {
                        words.push_back(dashed);
                    }
                } else if constexpr (std::is_same_v<Value, int>) {
                    if (written) {
                        words.insert(words.end(), {dashed, std::to_string(value)});
                    }
                } else if constexpr (std::is_same_v<Value, double>) {
                    if (written) {
                        words.insert(words.end(), {dashed, optionNumberText(value)});
                    }
                } else if constexpr (std::is_same_v<Value, std::string>) {
                    if (written && !value.empty()) {
                        words.insert(words.end(), {dashed, value});
                    }
                } else {
                    for (const std::string& each : value) {
                        words.insert(words.end(), {dashed, each});
                    }
                }
            },
            option.field);
    }
    return words;
}

} // namespace mkb
