// The verdict columns shared by `submissions` and `final_verdicts`, declared once: each column's name, the loads that
// read it, how a Verdict field is bound to it and read back. Not for use outside core/store.
#pragma once

#include "core/records/verdict.h"
#include "core/store/statement.h"

#include <string>
#include <vector>

namespace mkb::store_detail {

/// Which verdict columns a load reads.
enum class VerdictView {
    Full,          // every column, the grader's JSON included
    Lean,          // every column but the JSON (TrialDetail::Lean)
    Metrics,       // what every metric reads: passed, speedup and its CI (TrialDetail::Metrics)
    MetricsDetail, // Metrics plus imported, correct, compliance, outliers, quant, roofline, device, GPU time
};

struct VerdictColumn {
    const char* name;
    unsigned views; // a bit per VerdictView beyond Full (which reads every column): see verdict_columns.cpp
    void (*bind)(Statement& statement, int parameter, const Verdict& verdict);
    /// Reads the column into verdict; a column of a group (quant, roofline) after the group's first fills the group
    /// only when the first one made it present.
    void (*read)(const Statement& row, int column, Verdict& verdict);
};

/// Every verdict column, in schema order.
const std::vector<VerdictColumn>& verdictColumnTable();
int verdictColumnCount();
/// The columns a view reads, in schema order.
const std::vector<const VerdictColumn*>& verdictColumnsOf(VerdictView view);
/// "prefix.a, prefix.b, …" for the columns of a view.
std::string verdictColumnList(VerdictView view, const std::string& prefix = "");
/// "?, ?, …", one per verdict column.
std::string verdictPlaceholders();

/// Binds every verdict column starting at parameter index first.
void bindVerdict(Statement& statement, int first, const Verdict& verdict);
/// Reads the columns of view starting at result column first; the fields of other columns keep their defaults.
Verdict readVerdict(const Statement& row, int first, VerdictView view);
/// readVerdict into a default-constructed verdict where it lies (optional::emplace()): a bulk reader saves moving the
/// large record once per row.
void readVerdictInto(const Statement& row, int first, VerdictView view, Verdict& verdict);

} // namespace mkb::store_detail
