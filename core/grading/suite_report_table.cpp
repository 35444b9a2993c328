// The suite check as the generated markdown suite table (docs/suite.md); it names no path of the machine it ran on.
#include "core/grading/suite_report.h"

#include "core/catalog/problem_meta.h"
#include "core/util/shell_words.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <vector>

namespace mkb {
namespace {

std::string displayDsl(const std::string& dsl) {
    if (dsl == "triton") {
        return "Triton";
    }
    if (dsl == "cuda") {
        return "CUDA";
    }
    return dsl;
}

std::string cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
    }
    return out;
}

std::string ratioOrDash(const std::optional<double>& value) {
    return value && std::isfinite(*value) ? formatFigure("%.2f", *value) : "–";
}

void replaceAll(std::string& text, const std::string& what, const std::string& with) {
    if (what.empty()) {
        return;
    }
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
        text.replace(at, what.size(), with);
    }
}

/// The speedup with its 95% CI from the grading's timing draws ("2.81x [2.75, 2.86]"), the figure alone without one.
std::string speedupCell(const Verdict& verdict) {
    std::string text = formatFigure("%.2fx", verdict.speedupVsEager);
    if (verdict.speedupCiLow && verdict.speedupCiHigh && std::isfinite(*verdict.speedupCiLow) &&
        std::isfinite(*verdict.speedupCiHigh)) {
        text += " [" + formatFigure("%.2f", *verdict.speedupCiLow) + ", " +
                formatFigure("%.2f", *verdict.speedupCiHigh) + "]";
    }
    return text;
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

} // namespace

std::string flakinessMethod(const SuiteCheckReport& report) {
    if (report.gradings <= 1) {
        return "not checked";
    }
    std::string first = "each passing solution's full grading, then ";
    std::string repeats = std::to_string(report.gradings - 1);
    if (report.pooledFlakiness) {
        return first + repeats + " correctness-only gradings pooled into one evaluation (" + repeats + " x " +
               std::to_string(report.drawsPerGrading) +
               " correctness draws, each with a fresh seed; a grading counts as correct when all of its draws held)";
    }
    return first + repeats + " correctness-only gradings, each its own evaluation with fresh seeds";
}

std::string suiteTableMarkdown(const SuiteCheckReport& report) {
    std::ostringstream out;
    out << "# Problem suite\n\n";
    out << "Generated by `mkb suite check`; do not edit by hand. Speedup = eager PyTorch median / solution median "
           "(docs/guide/grading.md), with its 95% confidence interval over the grading's timing draws in brackets; IOU "
           "and MFU "
           "are achieved bandwidth and FLOP/s over the device's measured peaks (docs/metrics.md), from the grading's "
           "median "
           "time alone (no interval: the roofline is computed once per grading).\n\n";
    out << "- device: " << (report.deviceName.empty() ? report.device : report.deviceName + " (" + report.device + ")")
        << "\n";
    out << "- date: " << report.date << "\n";
    out << "- grader fingerprint: `" << report.graderFingerprint << "`\n";
    out << "- implementation boundary: " << report.boundary << " (docs/guide/boundaries.md)\n";
    out << "- peaks: " << (report.peaksNote.empty() ? "none" : withoutMachinePaths(report.peaksNote, report)) << "\n";
    out << "- command: `" << shownCommand(report) << "`\n";
    out << "- flakiness: " << flakinessMethod(report) << "\n";
    out << checkTimeLine(report);
    if (!report.unchecked.empty()) {
        out << "- **partial**: " << report.problems.size() << " of " << report.problems.size() + report.unchecked.size()
            << " problems checked; not yet checked: " << report.unchecked.size() << " ("
            << numberRanges(report.unchecked) << "; continue with --resume)\n";
    }
    out << "\n";
    out << "| problem | family | category | tags | eager ms |";
    for (const std::string& dsl : report.dsls) {
        out << " " << displayDsl(dsl) << " speedup | " << displayDsl(dsl) << " IOU / MFU |";
    }
    out << " validation |\n|---|---|---|---|---:|";
    for (std::size_t i = 0; i < report.dsls.size(); ++i) {
        out << "---:|---:|";
    }
    out << "---|\n";
    bool iouAboveOne = false;
    bool mfuAboveOne = false;
    for (const ProblemCheck& check : report.problems) {
        std::string tags;
        for (const std::string& tag : check.problem.meta.tags) {
            tags += (tags.empty() ? "" : ", ") + tag;
        }
        const ProblemValidation& v = check.validation;
        out << "| " << cell(check.problem.name()) << " | " << cell(check.problem.family) << " | "
            << cell(categoryOrUncategorised(check.problem.meta.category)) << " | " << cell(tags) << " | "
            << (v.eagerMedianMs ? formatFigure("%.3f", *v.eagerMedianMs) : "–") << " |";
        for (const std::string& dsl : report.dsls) {
            const SolutionCheck* found = nullptr;
            for (const SolutionCheck& solution : check.solutions) {
                if (solution.dsl == dsl) {
                    found = &solution;
                }
            }
            if (!found || !found->present) {
                out << " missing | – |";
            } else if (!found->verdict) {
                out << " not graded | – |";
            } else if (!found->verdict->passed) {
                out << " fail (" << cell(found->verdict->stage) << ") | – |";
            } else {
                const auto& roofline = found->verdict->roofline;
                iouAboveOne = iouAboveOne || (roofline && roofline->iou && *roofline->iou > 1.0);
                // Above 1 the FLOPs ran on a unit the probe did not measure: no rate to divide by, no MFU.
                std::string mfu = "–";
                if (roofline && roofline->mfu && *roofline->mfu > 1.0) {
                    mfuAboveOne = true;
                } else if (roofline) {
                    mfu = ratioOrDash(roofline->mfu);
                }
                out << " " << speedupCell(*found->verdict) << " | "
                    << (roofline ? ratioOrDash(roofline->iou) + " / " + mfu : "– / –") << " |";
            }
        }
        std::string validation;
        if (v.clean) {
            validation = "clean";
        } else {
            validation = std::to_string(v.issues.size()) + (v.issues.size() == 1 ? " issue" : " issues");
        }
        std::string repeats;
        for (const SolutionCheck& solution : check.solutions) {
            if (const auto& flakiness = solution.flakiness) {
                repeats += (repeats.empty() ? "" : ", ") + displayDsl(flakiness->dsl) + " " +
                           std::to_string(flakiness->held) + "/" + std::to_string(flakiness->gradings);
            }
        }
        if (!repeats.empty()) {
            validation += "; gradings correct: " + repeats;
        }
        out << " " << cell(validation) << " |\n";
    }
    if (iouAboveOne) {
        out << "\nIOU counts the bytes MKB_META[\"bytes\"] names, else every input and output byte once. Above 1, a "
               "kernel moved fewer bytes from memory than that count: it reads only the part of an input it needs "
               "(a gather from a large cache), or the L2 cache serves its repeated reads. Slightly above 1, its "
               "traffic is mostly reads, which memory serves a little faster than the copy the probe measures.\n";
    }
    if (mfuAboveOne) {
        out << "\nMFU divides by the probed matrix rate of the inputs' dominant floating dtype. A kernel whose FLOPs "
               "run on a unit the probe does not measure (the integer tensor cores of an int8 GEMM) comes out above "
               "1 against that rate; its MFU is shown as –.\n";
    }
    out << "\n" << suiteSummary(report) << "\n";
    bool anyIssue = !report.catalogIssues.empty();
    for (const ProblemCheck& check : report.problems) {
        anyIssue = anyIssue || !check.problems.empty();
    }
    if (anyIssue) {
        out << "\n## Issues\n\n";
        for (const std::string& issue : report.catalogIssues) {
            out << "- " << withoutMachinePaths(issue, report) << "\n";
        }
        for (const ProblemCheck& check : report.problems) {
            for (const std::string& issue : check.problems) {
                out << "- " << withoutMachinePaths(issue, report) << "\n";
            }
        }
    }
    return out.str();
}

} // namespace mkb
