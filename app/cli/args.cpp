// The help every mkb verb prints around its option table, and the command line as recorded.
#include "app/cli/args.h"

#include "core/util/shell_words.h"

namespace mkb::cli {

std::string verbHelp(std::string_view introduction, const OptionTable& options, std::string_view rest) {
    std::string text(introduction);
    while (!text.empty() && text.back() == '\n') {
        text.pop_back();
    }
    text += "\n\noptions:\n" + optionsHelp(options);
    if (!rest.empty()) {
        text += "\n" + std::string(rest);
    }
    return text;
}

std::string recordedCommandLine(const std::string& verb, const std::vector<std::string>& args) {
    std::vector<std::string> words{"mkb", verb};
    words.insert(words.end(), args.begin(), args.end());
    return shellCommandLine(words);
}

} // namespace mkb::cli
