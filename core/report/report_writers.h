// Renders a report model (report_model.h) as Markdown, CSV (RFC 4180), LaTeX booktabs tables or JSON.
#pragma once

#include "core/report/report_model.h"
#include "core/util/result.h"

#include <string>

namespace mkb::report {

enum class ReportFormat { Markdown, Csv, Latex, Json };

/// "md" (or "markdown"), "csv", "latex" (or "tex"), "json".
Result<ReportFormat> parseReportFormat(const std::string& text);

/// A cell as display text: numbers with their decimals, percentages with "%", null as "—".
std::string displayText(const ReportCell& cell);

/// "# title", the notes, then per table "## title" and a pipe table (numbers right-aligned; '|' escaped).
std::string toMarkdown(const Report& report);
/// One block per table: a row holding the title, the header row, the data rows; blocks are separated by an empty
/// line. Fields with a comma, quote, CR or LF are quoted with quotes doubled; lines end in CRLF. Numbers are plain
/// (percent cells as the share in [0, 1]), null cells are empty.
std::string toCsv(const Report& report);
/// One table environment per table with \caption and \label{tab:mkb-<id>} around a booktabs tabular; text is escaped
/// (& % $ # _ { } ~ ^ \ and the few non-ASCII symbols the tables use).
std::string toLatex(const Report& report);
/// {"title", "notes", "tables": [{"id", "title", "columns", "rows"}]}; cells are strings, numbers (percent cells as the
/// share) or null.
std::string toJson(const Report& report);

std::string renderReport(const Report& report, ReportFormat format);

/// CSV field quoting of RFC 4180.
std::string csvField(const std::string& text);
/// LaTeX escaping of text for use in a tabular cell or caption.
std::string latexEscape(const std::string& text);

} // namespace mkb::report
