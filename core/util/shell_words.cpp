// Shell quoting and splitting of command lines.
#include "core/util/shell_words.h"

namespace mkb {

std::string shellQuoted(std::string_view word) {
    const bool plain = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                               "0123456789-_./:=,+@%") == std::string_view::npos;
    if (plain) {
        return std::string(word);
    }
    std::string quoted = "'";
    for (char c : word) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

std::string shellCommandLine(const std::vector<std::string>& words) {
    std::string line;
    for (const std::string& word : words) {
        line += (line.empty() ? "" : " ") + shellQuoted(word);
    }
    return line;
}

std::vector<std::string> shellWords(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (inWord) {
                words.push_back(word);
                word.clear();
                inWord = false;
            }
            continue;
        }
        inWord = true;
        if (c == '\'') {
            for (++i; i < line.size() && line[i] != '\''; ++i) {
                word += line[i];
            }
        } else if (c == '"') {
            for (++i; i < line.size() && line[i] != '"'; ++i) {
                const bool escape = line[i] == '\\' && i + 1 < line.size() &&
                                    std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos;
                word += escape ? line[++i] : line[i];
            }
        } else if (c == '\\' && i + 1 < line.size()) {
            word += line[++i];
        } else {
            word += c;
        }
    }
    if (inWord) {
        words.push_back(word);
    }
    return words;
}

} // namespace mkb
