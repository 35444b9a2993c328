// Lays out analysis::kbxPaperFindings as report rows: shares and η² as percentages, speedups with three decimals.
#include "core/io/report_kbx_paper.h"

#include "core/analysis/kbx_paper.h"

namespace mkb::report {
namespace {

ReportCell valueCell(analysis::FindingUnit unit, std::optional<double> value) {
    if (!value) {
        return nullCell();
    }
    return unit == analysis::FindingUnit::Speedup ? numberCell(*value, 3) : percentCell(*value);
}

} // namespace

ReportTable kbxPaperTable(const std::vector<FindingsGroup>& groups, const std::string& groupColumn) {
    const std::vector<std::string> columns{groupColumn, "finding",  "ours",  "n",   "over",
                                           "95% low",   "95% high", "paper", "note"};
    ReportTable table{"kbx-paper", "KernelBench-X's findings from the data, beside the paper", columns, {}, {}, {}};
    for (const FindingsGroup& group : groups) {
        for (const analysis::PaperFinding& finding : analysis::kbxPaperFindings(*group.attempts)) {
            std::vector<ReportCell> row;
            row.push_back(textCell(group.key));
            row.push_back(textCell(finding.finding));
            row.push_back(valueCell(finding.unit, finding.value));
            row.push_back(countCell(finding.n));
            row.push_back(textCell(finding.basis));
            row.push_back(finding.interval ? valueCell(finding.unit, finding.interval->low) : nullCell());
            row.push_back(finding.interval ? valueCell(finding.unit, finding.interval->high) : nullCell());
            row.push_back(textCell(finding.paper));
            row.push_back(textCell(finding.note));
            table.rows.push_back(std::move(row));
        }
    }
    table.footnotes = {
        "Ours: from the selection's attempts and their rounds, as their verdicts say (an imported corpus: "
        "KernelBench-X's own); intervals: 95% percentile bootstrap over the items counted in n, seeded. Paper: KernelBench-X's "
        "published figure, over every evaluation of every method; an imported corpus holds only the transitions in "
        "which something changed, so rates are not expected to match (docs/guide/kernelbenchx.md). A finding the data "
        "cannot give has no number and says what it needs."};
    return table;
}

} // namespace mkb::report
