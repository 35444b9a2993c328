// The report writers: Markdown, CSV, LaTeX booktabs and JSON renderings of the same report model.
#include "core/report/report_writers.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <utility>

namespace mkb::report {
namespace {

std::string fixed(double value, int precision) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", precision, value);
    std::string result = text;
    if (result == "-0" || result.find_first_not_of("-0.") == std::string::npos) {
        // "-0.0" reads as a sign where there is no value; print zero plainly.
        if (!result.empty() && result[0] == '-') {
            result.erase(0, 1);
        }
    }
    return result;
}

/// A column holds numbers when its first non-null cell is a number or percentage.
bool numericColumn(const ReportTable& table, std::size_t column) {
    for (const auto& row : table.rows) {
        if (column < row.size() && row[column].kind != CellKind::Null) {
            return row[column].kind != CellKind::Text;
        }
    }
    return false;
}

std::string markdownEscape(const std::string& text) {
    std::string escaped;
    for (char c : text) {
        if (c == '|') {
            escaped += "\\|";
        } else if (c == '\n' || c == '\r') {
            escaped += ' ';
        } else {
            escaped += c;
        }
    }
    return escaped;
}

std::string csvValue(const ReportCell& cell) {
    switch (cell.kind) {
    case CellKind::Text:
        return cell.text;
    case CellKind::Number:
        return fixed(cell.number, cell.precision);
    case CellKind::Percent:
        return fixed(cell.number, cell.precision + 2);
    case CellKind::Null:
        return "";
    }
    return "";
}

nlohmann::ordered_json jsonValue(const ReportCell& cell) {
    switch (cell.kind) {
    case CellKind::Text:
        return cell.text;
    case CellKind::Number:
    case CellKind::Percent:
        return cell.number;
    case CellKind::Null:
        return nullptr;
    }
    return nullptr;
}

void appendCsvRow(std::string& out, const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        out += (i ? "," : "") + csvField(fields[i]);
    }
    out += "\r\n";
}

} // namespace

Result<ReportFormat> parseReportFormat(const std::string& text) {
    if (text == "md" || text == "markdown") {
        return ReportFormat::Markdown;
    }
    if (text == "csv") {
        return ReportFormat::Csv;
    }
    if (text == "latex" || text == "tex") {
        return ReportFormat::Latex;
    }
    if (text == "json") {
        return ReportFormat::Json;
    }
    return makeError("unknown report format '" + text + "' in --format; use md, csv, latex or json");
}

std::string displayText(const ReportCell& cell) {
    switch (cell.kind) {
    case CellKind::Text:
        return cell.text;
    case CellKind::Number:
        return fixed(cell.number, cell.precision);
    case CellKind::Percent:
        return fixed(cell.number * 100.0, cell.precision) + "%";
    case CellKind::Null:
        return "—";
    }
    return "";
}

std::string toMarkdown(const Report& report) {
    std::string out = "# " + markdownEscape(report.title) + "\n\n";
    for (const std::string& note : report.notes) {
        out += "- " + markdownEscape(note) + "\n";
    }
    for (const ReportTable& table : report.tables) {
        out += "\n## " + markdownEscape(table.title) + "\n\n|";
        for (const std::string& column : table.columns) {
            out += " " + markdownEscape(column) + " |";
        }
        out += "\n|";
        for (std::size_t i = 0; i < table.columns.size(); ++i) {
            out += numericColumn(table, i) ? " ---: |" : " --- |";
        }
        out += "\n";
        for (const auto& row : table.rows) {
            out += "|";
            for (const ReportCell& cell : row) {
                out += " " + markdownEscape(displayText(cell)) + " |";
            }
            out += "\n";
        }
        if (table.rows.empty()) {
            out += "\n_No rows: the selection holds nothing this table counts._\n";
        }
        for (const std::string& footnote : table.footnotes) {
            out += "\n_" + markdownEscape(footnote) + "_\n";
        }
    }
    return out;
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) {
        return text;
    }
    std::string quoted = "\"";
    for (char c : text) {
        quoted += c;
        if (c == '"') {
            quoted += '"';
        }
    }
    return quoted + "\"";
}

std::string toCsv(const Report& report) {
    std::string out;
    for (std::size_t t = 0; t < report.tables.size(); ++t) {
        const ReportTable& table = report.tables[t];
        if (t) {
            out += "\r\n";
        }
        appendCsvRow(out, {table.title});
        appendCsvRow(out, table.columns);
        for (const auto& row : table.rows) {
            std::vector<std::string> fields;
            fields.reserve(row.size());
            for (const ReportCell& cell : row) {
                fields.push_back(csvValue(cell));
            }
            appendCsvRow(out, fields);
        }
        for (const std::string& footnote : table.footnotes) {
            appendCsvRow(out, {footnote});
        }
    }
    return out;
}

std::string latexEscape(const std::string& text) {
    static const std::pair<const char*, const char*> kSymbols[] = {{"Δ", "\\ensuremath{\\Delta}"},
                                                                   {"η", "\\ensuremath{\\eta}"},
                                                                   {"δ", "\\ensuremath{\\delta}"},
                                                                   {"²", "\\textsuperscript{2}"},
                                                                   {"—", "---"},
                                                                   {"–", "--"},
                                                                   {"≥", "\\ensuremath{\\geq}"},
                                                                   {"≤", "\\ensuremath{\\leq}"},
                                                                   {"→", "\\ensuremath{\\to}"},
                                                                   {"×", "\\ensuremath{\\times}"},
                                                                   {"−", "\\ensuremath{-}"},
                                                                   {"§", "\\S{}"}};
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        bool replaced = false;
        if (static_cast<unsigned char>(c) >= 0x80) {
            for (const auto& [symbol, latex] : kSymbols) {
                const std::string_view view(symbol);
                if (text.compare(i, view.size(), view) == 0) {
                    out += latex;
                    i += view.size();
                    replaced = true;
                    break;
                }
            }
        }
        if (replaced) {
            continue;
        }
        switch (c) {
        case '&':
        case '%':
        case '$':
        case '#':
        case '_':
        case '{':
        case '}':
            out += '\\';
            out += c;
            break;
        case '~':
            out += "\\textasciitilde{}";
            break;
        case '^':
            out += "\\textasciicircum{}";
            break;
        case '\\':
            out += "\\textbackslash{}";
            break;
        case '\n':
        case '\r':
            out += ' ';
            break;
        default:
            out += c;
        }
        ++i;
    }
    return out;
}

std::string toLatex(const Report& report) {
    std::string out = "% " + latexEscape(report.title) + " (requires \\usepackage{booktabs})\n";
    for (const std::string& note : report.notes) {
        out += "% " + latexEscape(note) + "\n";
    }
    for (const ReportTable& table : report.tables) {
        out += "\n\\begin{table}[htbp]\n\\centering\n\\caption{" + latexEscape(table.title) + "}\n\\label{tab:mkb-" +
               latexEscape(table.id) + "}\n\\begin{tabular}{";
        for (std::size_t i = 0; i < table.columns.size(); ++i) {
            out += numericColumn(table, i) ? "r" : "l";
        }
        out += "}\n\\toprule\n";
        for (std::size_t i = 0; i < table.columns.size(); ++i) {
            out += (i ? " & " : "") + latexEscape(table.columns[i]);
        }
        out += " \\\\\n\\midrule\n";
        for (const auto& row : table.rows) {
            for (std::size_t i = 0; i < row.size(); ++i) {
                out += (i ? " & " : "") + latexEscape(displayText(row[i]));
            }
            out += " \\\\\n";
        }
        out += "\\bottomrule\n\\end{tabular}\n";
        for (const std::string& footnote : table.footnotes) {
            out += "\\par\\smallskip{\\footnotesize " + latexEscape(footnote) + "}\n";
        }
        out += "\\end{table}\n";
    }
    return out;
}

std::string toJson(const Report& report) {
    // ordered_json keeps the documented key order (title, notes, tables; id, title, columns, rows).
    nlohmann::ordered_json tables = nlohmann::ordered_json::array();
    for (const ReportTable& table : report.tables) {
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (const auto& row : table.rows) {
            nlohmann::ordered_json cells = nlohmann::ordered_json::array();
            for (const ReportCell& cell : row) {
                cells.push_back(jsonValue(cell));
            }
            rows.push_back(std::move(cells));
        }
        nlohmann::ordered_json entry = {
            {"id", table.id}, {"title", table.title}, {"columns", table.columns}, {"rows", rows}};
        if (!table.footnotes.empty()) {
            entry["footnotes"] = table.footnotes;
        }
        if (table.timing) {
            const TableTiming& timing = *table.timing;
            entry["timing"] = {{"rule", timing.rule},
                               {"resolved", timing.resolved},
                               {"with_retiming", timing.withRetiming},
                               {"judged_paired", timing.paired},
                               {"fell_back", timing.fellBack},
                               {"within_noise", timing.withinNoise}};
        }
        tables.push_back(std::move(entry));
    }
    const nlohmann::ordered_json document = {{"title", report.title}, {"notes", report.notes}, {"tables", tables}};
    return document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string renderReport(const Report& report, ReportFormat format) {
    switch (format) {
    case ReportFormat::Markdown:
        return toMarkdown(report);
    case ReportFormat::Csv:
        return toCsv(report);
    case ReportFormat::Latex:
        return toLatex(report);
    case ReportFormat::Json:
        return toJson(report);
    }
    return toMarkdown(report);
}

} // namespace mkb::report
