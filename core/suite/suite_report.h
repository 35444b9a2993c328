// The renderings of a suite check: one line per problem and the summary in words (suite_report_text.cpp), the JSON
// report (suite_report_json.cpp) and the generated markdown suite table (suite_report_table.cpp).
#pragma once

#include "core/suite/suite_check.h"

#include <string>

namespace mkb {

/// One line per problem: validation figures, each solution's outcome and speedup, flakiness.
std::string problemLine(const ProblemCheck& check, int gradings);

/// The closing summary ("36 problems: 36 deterministic, 35 sensitive (1 issue: ...), ...").
std::string suiteSummary(const SuiteCheckReport& report);

/// The JSON report's "flakiness_scope": every passing solution is repeated, each solution's repeats beside its verdict.
/// Reports without it repeated only the first DSL's solution and are not resumed.
inline constexpr const char* kFlakinessEverySolution = "every_solution";

/// Everything machine-readably: the grader's own validation and verdict objects inside.
std::string suiteReportJson(const SuiteCheckReport& report);

/// How the flakiness gradings were made, in words (the table's heading line).
std::string flakinessMethod(const SuiteCheckReport& report);

/// The markdown suite table (generated; docs/suite.md): problem, family, tags, eager ms, speedup and IOU/MFU per
/// DSL, validation, with device, date, grader fingerprint and the command in its heading.
std::string suiteTableMarkdown(const SuiteCheckReport& report);

/// The markdown validation table of a `--validate-only` check (docs/kernelbenchx.md): per problem its category,
/// precision, eager ms, whether it is deterministic, sensitive and above the eager floor, and why not; then the totals
/// per category, the problems below the floor with their eager times, and every issue. Names no path of the machine.
std::string validationTableMarkdown(const SuiteCheckReport& report);

/// The closing summary of a `--validate-only` check ("178 problems: 178 deterministic, 170 sensitive, ...").
std::string validationSummary(const SuiteCheckReport& report);

/// From this max / min ratio of a problem's eager medians up, the table says that eager moved between its timings:
/// its speedups can move that much from one run to the next, more than their intervals (one evaluation's draws) say.
inline constexpr double kEagerMovedRatio = 1.2;

/// Eager PyTorch's median in each of a problem's timings: the validation's and each graded solution's own evaluation
/// (each speedup divides its evaluation's eager median). Fewer than two timings: timings < 2 and no range.
struct EagerSpread {
    int timings = 0;
    double lowMs = 0.0;
    double highMs = 0.0;
    double ratio() const { return lowMs > 0.0 ? highMs / lowMs : 1.0; }
    bool moved() const { return timings >= 2 && ratio() >= kEagerMovedRatio; }
};
EagerSpread eagerSpread(const ProblemCheck& check);
/// kEagerMovedRatio as the table and the summary say it ("20%").
std::string eagerMovedPercent();

/// printf-style formatting of one figure, as the renderings print them ("%.3f").
std::string formatFigure(const char* pattern, double value);

/// A problem's check time as the line and the table's heading give it: "0.5 s", "41 s", "7.6 min".
std::string checkDuration(double seconds);

} // namespace mkb
