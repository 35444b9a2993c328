// Report writers: Markdown layout, CSV quoting (RFC 4180), LaTeX escaping and booktabs frame, JSON validity.
#include "core/report/report_writers.h"

#include <QtTest>

#include <nlohmann/json.hpp>

using namespace mkb::report;

namespace {

Report sampleReport() {
    Report report;
    report.title = "Sample";
    report.notes = {"selection: 3 trials"};
    ReportTable table;
    table.id = "sample_1";
    table.title = "Rates & shares: 50% of $x_1$ {a} ~b^ \\c #1 ΔGM η²";
    table.columns = {"group", "count", "share", "value"};
    table.rows.push_back({textCell("a, \"quoted\" | piped"), countCell(3), percentCell(0.5), numberCell(1.23456, 2)});
    table.rows.push_back({textCell("line\nbreak"), countCell(0), percentCell(std::nullopt), nullCell()});
    report.tables.push_back(table);
    return report;
}

} // namespace

class TestReportWriters : public QObject {
    Q_OBJECT

private slots:
    void displayTextFormatsEachCellKind() {
        QCOMPARE(displayText(countCell(7)), std::string("7"));
        QCOMPARE(displayText(percentCell(0.4567)), std::string("45.7%"));
        QCOMPARE(displayText(percentCell(-0.05)), std::string("-5.0%"));
        QCOMPARE(displayText(numberCell(2.0 / 3.0, 3)), std::string("0.667"));
        QCOMPARE(displayText(numberCell(-0.0001, 1)), std::string("0.0")); // no "-0.0"
        QCOMPARE(displayText(nullCell()), std::string("—"));
        QCOMPARE(displayText(numberCell(std::nullopt, 1)), std::string("—"));
    }

    void markdownHasTitleNotesHeaderAlignmentAndEscapedPipes() {
        const std::string md = toMarkdown(sampleReport());
        QVERIFY(md.rfind("# Sample\n", 0) == 0);
        QVERIFY(md.find("- selection: 3 trials\n") != std::string::npos);
        QVERIFY(md.find("| group | count | share | value |\n| --- | ---: | ---: | ---: |\n") != std::string::npos);
        QVERIFY(md.find("| a, \"quoted\" \\| piped | 3 | 50.0% | 1.23 |") != std::string::npos);
        QVERIFY(md.find("| line break | 0 | — | — |") != std::string::npos);
    }

    void csvQuotesCommasQuotesAndNewlinesAndEndsLinesInCrlf() {
        const std::string csv = toCsv(sampleReport());
        QVERIFY(csv.find("group,count,share,value\r\n") != std::string::npos);
        QVERIFY(csv.find("\"a, \"\"quoted\"\" | piped\",3,0.500,1.23\r\n") != std::string::npos);
        QVERIFY(csv.find("\"line\nbreak\",0,,\r\n") != std::string::npos);
        QCOMPARE(csvField("plain"), std::string("plain"));
        QCOMPARE(csvField("a\"b"), std::string("\"a\"\"b\""));
        QCOMPARE(csvField("cr\rhere"), std::string("\"cr\rhere\""));
    }

    void latexEscapesEverySpecialCharacter() {
        QCOMPARE(latexEscape("& % $ # _ { } ~ ^ \\"),
                 std::string("\\& \\% \\$ \\# \\_ \\{ \\} \\textasciitilde{} \\textasciicircum{} \\textbackslash{}"));
        QCOMPARE(latexEscape("ΔGM η²"), std::string("\\ensuremath{\\Delta}GM \\ensuremath{\\eta}\\textsuperscript{2}"));
    }

    void latexWrapsEachTableInBooktabsWithCaptionAndLabel() {
        const std::string tex = toLatex(sampleReport());
        QVERIFY(tex.find("\\begin{table}[htbp]") != std::string::npos);
        QVERIFY(tex.find("\\caption{Rates \\& shares: 50\\% of \\$x\\_1\\$ \\{a\\} \\textasciitilde{}b"
                         "\\textasciicircum{} \\textbackslash{}c \\#1 \\ensuremath{\\Delta}GM "
                         "\\ensuremath{\\eta}\\textsuperscript{2}}") != std::string::npos);
        QVERIFY(tex.find("\\label{tab:mkb-sample\\_1}") != std::string::npos);
        QVERIFY(tex.find("\\begin{tabular}{lrrr}\n\\toprule\ngroup & count & share & value \\\\\n\\midrule\n") !=
                std::string::npos);
        QVERIFY(tex.find("a, \"quoted\" | piped & 3 & 50.0\\% & 1.23 \\\\") != std::string::npos);
        QVERIFY(tex.find("line break & 0 & --- & --- \\\\") != std::string::npos);
        QVERIFY(tex.find("\\bottomrule\n\\end{tabular}\n\\end{table}") != std::string::npos);
    }

    void jsonIsValidWithTypedCells() {
        const nlohmann::json json = nlohmann::json::parse(toJson(sampleReport()));
        QCOMPARE(json["title"].get<std::string>(), std::string("Sample"));
        const auto& table = json["tables"][0];
        QCOMPARE(table["id"].get<std::string>(), std::string("sample_1"));
        QCOMPARE(table["columns"].size(), std::size_t(4));
        QCOMPARE(table["rows"][0][0].get<std::string>(), std::string("a, \"quoted\" | piped"));
        QCOMPARE(table["rows"][0][1].get<double>(), 3.0);
        QCOMPARE(table["rows"][0][2].get<double>(), 0.5);
        QVERIFY(table["rows"][1][2].is_null());
        QVERIFY(table["rows"][1][3].is_null());
    }

    // report: JSON keys in the documented order (title, notes, tables; id, title, columns, rows)
    void jsonKeysFollowTheDocumentedOrder() {
        const nlohmann::ordered_json json = nlohmann::ordered_json::parse(toJson(sampleReport()));
        std::vector<std::string> keys;
        for (const auto& item : json.items()) {
            keys.push_back(item.key());
        }
        QCOMPARE(keys, (std::vector<std::string>{"title", "notes", "tables"}));
        keys.clear();
        for (const auto& item : json["tables"][0].items()) {
            keys.push_back(item.key());
        }
        QCOMPARE(keys, (std::vector<std::string>{"id", "title", "columns", "rows"}));
    }

    void parseReportFormatNamesTheBadValue() {
        QVERIFY(parseReportFormat("md").ok());
        QVERIFY(parseReportFormat("latex").ok());
        auto bad = parseReportFormat("xml");
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find("'xml'") != std::string::npos);
        QVERIFY(bad.error().message.find('\n') == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestReportWriters)
#include "tst_report_writers.moc"
