// The pieces the suite's markdown tables share (suite_report_markdown.h).
#include "core/suite/suite_report_markdown.h"

#include "core/suite/suite_report.h"
#include "core/util/shell_words.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace mkb {
namespace {

void replaceAll(std::string& text, const std::string& what, const std::string& with) {
    if (what.empty()) {
        return;
    }
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
        text.replace(at, what.size(), with);
    }
}

/// One absolute path of the command as the table shows it: relative to the suite when under it (the root itself by
/// its folder name), any other by its file name.
std::string shownPath(const std::string& word, const SuiteCheckReport& report) {
    const std::filesystem::path path = std::filesystem::path(word).lexically_normal();
    const std::filesystem::path root = report.suiteRoot.lexically_normal();
    if (!root.empty()) {
        if (path == root || path == root / "") {
            return root.has_filename() ? root.filename().string() : root.parent_path().filename().string();
        }
        const std::filesystem::path relative = path.lexically_relative(root);
        if (!relative.empty() && *relative.begin() != "..") {
            return relative.string();
        }
    }
    return path.has_filename() ? path.filename().string() : path.parent_path().filename().string();
}

} // namespace

std::string markdownCell(const std::string& text) {
    std::string out;
    for (char c : text) {
        out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
    }
    return out;
}

/// Problem names by their numbers, runs joined ("22–49", "03, 07–09"); a name without a number as it is.
std::string numberRanges(const std::vector<std::string>& names) {
    std::vector<int> numbers;
    std::string others;
    for (const std::string& name : names) {
        const std::string stem = name.substr(name.rfind('/') + 1);
        std::size_t digits = 0;
        while (digits < stem.size() && digits < 6 && std::isdigit(static_cast<unsigned char>(stem[digits]))) {
            ++digits;
        }
        if (digits > 0) {
            numbers.push_back(std::stoi(stem.substr(0, digits)));
        } else {
            others += (others.empty() ? "" : ", ") + name;
        }
    }
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    std::string text;
    for (std::size_t i = 0; i < numbers.size();) {
        std::size_t j = i;
        while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) {
            ++j;
        }
        text += (text.empty() ? "" : ", ") + formatFigure("%02.0f", numbers[i]);
        if (j > i) {
            text += "–" + formatFigure("%02.0f", numbers[j]);
        }
        i = j + 1;
    }
    return others.empty() ? text : (text.empty() ? others : text + ", " + others);
}

/// `text` with paths under the suite root made relative to it, and the store's path said as "the store".
std::string withoutMachinePaths(std::string text, const SuiteCheckReport& report) {
    replaceAll(text, report.storePath.string(), "the store");
    if (!report.suiteRoot.empty()) {
        replaceAll(text, (report.suiteRoot / "").string(), "");
    }
    return text;
}

/// The command that made the report, without this machine's absolute paths.
std::string shownCommand(const SuiteCheckReport& report) {
    if (report.commandWords.empty()) {
        return withoutMachinePaths(report.command, report);
    }
    std::vector<std::string> words;
    for (const std::string& word : report.commandWords) {
        const std::size_t equals = word.find('=');
        if (word.rfind("--", 0) == 0 && equals != std::string::npos && equals + 1 < word.size() &&
            word[equals + 1] == '/') {
            words.push_back(word.substr(0, equals + 1) + shownPath(word.substr(equals + 1), report));
        } else if (!word.empty() && word[0] == '/') {
            words.push_back(shownPath(word, report));
        } else {
            words.push_back(word);
        }
    }
    return shellCommandLine(words);
}

/// The heading's check-time line: the sum of the problems' recorded check times and the longest; "" when none has one.
std::string checkTimeLine(const SuiteCheckReport& report) {
    double total = 0;
    int timed = 0;
    const ProblemCheck* longest = nullptr;
    for (const ProblemCheck& check : report.problems) {
        if (check.checkSeconds) {
            total += *check.checkSeconds;
            ++timed;
            if (!longest || *check.checkSeconds > *longest->checkSeconds) {
                longest = &check;
            }
        }
    }
    if (!longest) {
        return "";
    }
    const int untimed = static_cast<int>(report.problems.size()) - timed;
    return "- check time: " + checkDuration(total) + " for " + std::to_string(timed) + " problem" +
           (timed == 1 ? "" : "s") + " (longest " + longest->problem.name() + ", " +
           checkDuration(*longest->checkSeconds) + ")" +
           (untimed > 0 ? "; " + std::to_string(untimed) + " checked before check times were recorded" : "") + "\n";
}

} // namespace mkb
