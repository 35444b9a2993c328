// The columns of `trials`, declared once: each column's name, the loads that read it, the value an insert gives it and
// how a TrialRecord field is bound to it and read back; plus the bulk readers' filter clause. Adding a trial column
// is one row of the table in trial_columns.cpp (and its migration step). Not for use outside core/store.
#pragma once

#include "core/records/trial.h"
#include "core/store/statement.h"
#include "core/store/store.h"

#include <string>
#include <vector>

namespace mkb::store_detail {

/// Which trial columns a load reads (beyond t.id and the model, which every select starts with).
enum class TrialView {
    Full,         // every field (loadTrial, loadTrials(Full))
    Lean,         // TrialDetail::Lean: no fingerprints, archivedAt or origin
    Metrics,      // TrialDetail::Metrics without usage
    MetricsUsage, // TrialDetail::Metrics with MetricColumns::usage
};

struct TrialColumn {
    const char* name;        // the column of `trials`
    unsigned views;          // a bit per TrialView beyond Full, which reads every column that has a reader
    const char* insertValue; // the SQL an insert gives the column: "?" or a sub-select over its parameters
    void (*bind)(Query& query, const TrialRecord& trial);               // binds insertValue's parameters, in order
    void (*read)(const Statement& row, int column, TrialRecord& trial); // null for a column no load reads
};

/// Every column of `trials` but id, in schema order.
const std::vector<TrialColumn>& trialColumnTable();
/// The columns a view reads, in schema order.
const std::vector<const TrialColumn*>& trialColumnsOf(TrialView view);

/// "SELECT t.id, <model>, <the view's columns> " where model is m.name for Full (the caller joins models as m) and
/// t.model_id otherwise; no FROM clause.
std::string trialSelectList(TrialView view);
/// Reads the view's columns starting at result column first into trial, overwriting every field they cover (one
/// record may be refilled row after row); returns the column after the last one read.
int readTrialColumns(const Statement& row, int first, TrialView view, TrialRecord& trial);

/// The INSERT of a trial row RETURNING its id; bindTrialInsert binds its parameters.
const std::string& trialInsertSql();
void bindTrialInsert(Query& query, const TrialRecord& trial);

/// The WHERE clause of the bulk trial readers over `trials t`; bind the model's name (or NULL) and the suite (or NULL)
/// as its parameters 1 and 2 (bindTrialFilter).
std::string trialFilterWhere(const TrialFilter& filter);
void bindTrialFilter(Query& query, const TrialFilter& filter);

/// Steps a query whose rows ascend by the trial id in column 0 alongside trials taken in ascending id order: the merge
/// of final verdicts (or any per-trial rows) with the trials, written once.
class RowsByTrialId {
public:
    explicit RowsByTrialId(Query& query) : query_(query), more_(query.next()) {}
    /// The row of trialId, or null when there is none; rows of smaller ids are passed over.
    const Statement* rowOf(std::int64_t trialId) {
        while (more_ && query_.row().int64(0) < trialId) {
            more_ = query_.next();
        }
        return more_ && query_.row().int64(0) == trialId ? &query_.row() : nullptr;
    }

private:
    Query& query_;
    bool more_;
};

} // namespace mkb::store_detail
