// The suite check in words: one line per problem as it is checked, and the closing summary.
#include "core/suite/suite_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace mkb {

std::string formatFigure(const char* pattern, double value) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

std::string checkDuration(double seconds) {
    return seconds < 10    ? formatFigure("%.1f s", seconds)
           : seconds < 120 ? formatFigure("%.0f s", seconds)
                           : formatFigure("%.1f min", seconds / 60);
}

std::string problemLine(const ProblemCheck& check, int gradings) {
    const ProblemValidation& v = check.validation;
    std::ostringstream line;
    line << (check.clean() ? "ok    " : "ISSUE ") << check.problem.name() << ": ";
    if (!v.error.empty()) {
        line << "validation failed";
    } else {
        line << (v.deterministic == true ? "deterministic" : "NOT deterministic");
        int tensors = 0;
        int responsive = 0;
        int unchecked = 0; // a step that could not run (memory) or broke its process: named in the issues
        for (const InputSensitivity& input : v.inputs) {
            if (input.tensor) {
                ++tensors;
                responsive += (input.changed == true || (input.exempt && input.changed == false)) ? 1 : 0;
                unchecked += !input.changed ? 1 : 0;
            }
        }
        const char* sensitivity = v.sensitive == true    ? "sensitive"
                                  : v.sensitive == false ? "NOT sensitive"
                                                         : "sensitivity not fully checked";
        line << ", " << sensitivity << " (" << responsive << "/" << tensors << " inputs"
             << (unchecked > 0 ? ", " + std::to_string(unchecked) + " not checked" : std::string())
             << (v.nearZero == true ? ", output near zero" : "") << ")";
        if (v.eagerMedianMs) {
            line << ", eager " << formatFigure("%.3f", *v.eagerMedianMs) << " ms"
                 << (v.eagerOk == false ? " (< target)" : "");
        }
    }
    for (const SolutionCheck& solution : check.solutions) {
        line << "; " << solution.dsl << " ";
        if (!solution.present) {
            line << (check.problem.meta.noSolution.count(solution.dsl) ? "none (declared)" : "missing");
        } else if (!solution.verdict) {
            line << "not graded";
        } else if (solution.verdict->passed) {
            line << "pass " << formatFigure("%.2fx", solution.verdict->speedupVsEager);
        } else {
            line << "FAIL (" << solution.verdict->stage << ")";
        }
    }
    std::string repeats;
    for (const SolutionCheck& solution : check.solutions) {
        if (const auto& flakiness = solution.flakiness) {
            repeats += (repeats.empty() ? "; flakiness " : ", ") + std::to_string(flakiness->held) + "/" +
                       std::to_string(flakiness->gradings) + " (" + flakiness->dsl +
                       (flakiness->sharedDraws ? ", shared"
                        : flakiness->pooled    ? ", pooled"
                                               : "") +
                       ")";
        }
    }
    if (!repeats.empty()) {
        line << repeats;
    } else if (gradings > 0) {
        line << "; flakiness not checked";
    }
    if (check.reused) {
        line << " [reused]";
    } else if (check.checkSeconds) {
        line << "; checked in " << checkDuration(*check.checkSeconds);
    }
    return line.str();
}

namespace {

/// The summary's validation part: "36 problems: 36 deterministic, 35 sensitive (1 issue: ...), eager >= 50 us: 36/36".
std::string validationCounts(const SuiteCheckReport& report) {
    const int total = static_cast<int>(report.problems.size());
    int deterministic = 0;
    int sensitive = 0;
    int eagerOk = 0;
    int eagerMeasured = 0;
    std::vector<std::string> sensitivityIssues;
    for (const ProblemCheck& check : report.problems) {
        const ProblemValidation& v = check.validation;
        deterministic += v.deterministic == true ? 1 : 0;
        if (v.sensitive == true) {
            ++sensitive;
        } else {
            std::string first;
            for (const std::string& issue : v.issues) {
                if (issue.find("input ") != std::string::npos || issue.find("near zero") != std::string::npos) {
                    first = issue;
                    break;
                }
            }
            sensitivityIssues.push_back(check.problem.name() + ": " +
                                        (first.empty() ? (v.error.empty() ? "not checked" : v.error) : first));
        }
        if (v.eagerMedianMs) {
            ++eagerMeasured;
            eagerOk += v.eagerOk == true ? 1 : 0;
        }
    }
    std::ostringstream out;
    out << total << " problems: " << deterministic << " deterministic, " << sensitive << " sensitive";
    if (!sensitivityIssues.empty()) {
        out << " (" << sensitivityIssues.size() << (sensitivityIssues.size() == 1 ? " issue: " : " issues, first: ")
            << sensitivityIssues.front() << ")";
    }
    out << ", eager >= " << formatFigure("%g", report.eagerTargetMs * 1000) << " us: " << eagerOk << "/" << total;
    if (eagerMeasured < total) {
        out << " (" << total - eagerMeasured << " not measured)";
    }
    return out.str();
}

} // namespace

std::string validationSummary(const SuiteCheckReport& report) {
    int clean = 0;
    for (const ProblemCheck& check : report.problems) {
        clean += check.clean() ? 1 : 0;
    }
    std::string text = validationCounts(report) + "; clean: " + std::to_string(clean) + "/" +
                       std::to_string(report.problems.size()) + " (validation only, no solution graded)";
    if (!report.catalogIssues.empty()) {
        text += "; " + std::to_string(report.catalogIssues.size()) + " malformed problem file(s)";
    }
    return text;
}

std::string suiteSummary(const SuiteCheckReport& report) {
    if (report.validateOnly) {
        return validationSummary(report);
    }
    const int total = static_cast<int>(report.problems.size());
    int flakinessClean = 0; // solutions whose every repeat held
    int solutionsTotal = 0;
    for (const ProblemCheck& check : report.problems) {
        for (const SolutionCheck& solution : check.solutions) {
            ++solutionsTotal;
            if (solution.flakiness && solution.flakiness->held == solution.flakiness->gradings &&
                solution.flakiness->gradings == report.gradings) {
                ++flakinessClean;
            }
        }
    }
    std::ostringstream out;
    out << validationCounts(report) << "; solutions:";
    bool firstDsl = true;
    for (const std::string& dsl : report.dsls) {
        int present = 0;
        int declaredNone = 0;
        int passed = 0;
        int beat = 0;
        for (const ProblemCheck& check : report.problems) {
            for (const SolutionCheck& solution : check.solutions) {
                if (solution.dsl != dsl) {
                    continue;
                }
                present += solution.present ? 1 : 0;
                declaredNone += !solution.present && check.problem.meta.noSolution.count(dsl) ? 1 : 0;
                if (solution.verdict && solution.verdict->passed) {
                    ++passed;
                    beat += solution.verdict->speedupVsEager > 1.0 ? 1 : 0;
                }
            }
        }
        out << (firstDsl ? " " : "; ") << dsl << " " << passed << "/" << total << " pass, " << beat << " beat eager";
        if (declaredNone > 0) {
            out << ", " << declaredNone << " declared without one";
        }
        if (present + declaredNone < total) {
            out << ", " << total - present - declaredNone << " missing";
        }
        firstDsl = false;
    }
    out << "; flakiness " << report.gradings << "/" << report.gradings << " on " << flakinessClean << "/"
        << solutionsTotal << " solutions";
    const auto eagerMoved = std::count_if(report.problems.begin(), report.problems.end(),
                                          [](const ProblemCheck& check) { return eagerSpread(check).moved(); });
    if (eagerMoved > 0) {
        out << "; eager moved by " << eagerMovedPercent() << " or more between its timings on " << eagerMoved
            << (eagerMoved == 1 ? " problem" : " problems");
    }
    if (!report.catalogIssues.empty()) {
        out << "; " << report.catalogIssues.size() << " malformed problem file(s)";
    }
    return out.str();
}

} // namespace mkb
