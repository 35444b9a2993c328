// The trial column table, the selects and the insert built from it, and the bulk readers' filter clause.
#include "core/store/trial_columns.h"

#include "core/store/store_impl.h"

namespace mkb::store_detail {
namespace {

// TrialColumn::views bits; TrialView::Full reads every column with a reader.
constexpr unsigned kLean = 1;    // TrialDetail::Lean
constexpr unsigned kMetrics = 2; // TrialDetail::Metrics
constexpr unsigned kUsage = 4;   // TrialDetail::Metrics with MetricColumns::usage
constexpr unsigned kEveryLoad = kLean | kMetrics;
constexpr unsigned kLeanAndUsage = kLean | kUsage;

using Q = Query;
using S = Statement;
using T = TrialRecord;

} // namespace

const std::vector<TrialColumn>& trialColumnTable() {
    static const std::vector<TrialColumn> table = {
        {"model_id", 0, "(SELECT id FROM models WHERE name = ?)", [](Q& q, const T& t) { q.bind(t.model); }, nullptr},
        {"suite", kLean, "?", [](Q& q, const T& t) { q.bind(t.suite); },
         [](const S& r, int i, T& t) { r.assignText(i, t.suite); }},
        {"problem_number", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.problemNumber); },
         [](const S& r, int i, T& t) { t.problemNumber = r.integer(i); }},
        {"problem_slug", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.problemSlug); },
         [](const S& r, int i, T& t) { r.assignText(i, t.problemSlug); }},
        {"family", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.family); },
         [](const S& r, int i, T& t) { r.assignText(i, t.family); }},
        {"problem_id", 0, "(SELECT id FROM problems WHERE suite = ? AND number = ? AND fingerprint = ?)",
         [](Q& q, const T& t) { q.bind(t.suite, t.problemNumber, t.problemFingerprint); }, nullptr},
        {"replicate", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.replicate); },
         [](const S& r, int i, T& t) { t.replicate = r.integer(i); }},
        {"arm", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.arm); },
         [](const S& r, int i, T& t) { r.assignText(i, t.arm); }},
        {"dsl", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.dsl); },
         [](const S& r, int i, T& t) { r.assignText(i, t.dsl); }},
        {"coordinate", kLean, "?", [](Q& q, const T& t) { q.bind(t.coordinate); },
         [](const S& r, int i, T& t) { r.assignText(i, t.coordinate); }},
        {"source_trial_id", kLean, "?", [](Q& q, const T& t) { q.bind(t.sourceTrialId); },
         [](const S& r, int i, T& t) { t.sourceTrialId = r.optionalInt64(i); }},
        {"status", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(std::string(toString(t.status))); },
         [](const S& r, int i, T& t) {
             t.status = trialStatusFromString(std::string(r.view(i))).value_or(TrialStatus::InfrastructureError);
         }},
        {"error", kLean, "?", [](Q& q, const T& t) { q.bind(t.error); },
         [](const S& r, int i, T& t) { r.assignText(i, t.error); }},
        {"skipped", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.skipped); },
         [](const S& r, int i, T& t) { t.skipped = r.boolean(i); }},
        {"timed_out", kLean, "?", [](Q& q, const T& t) { q.bind(t.timedOut); },
         [](const S& r, int i, T& t) { t.timedOut = r.boolean(i); }},
        {"archived", kEveryLoad, "?", [](Q& q, const T& t) { q.bind(t.archived); },
         [](const S& r, int i, T& t) { t.archived = r.boolean(i); }},
        {"archived_at", 0, "?",
         [](Q& q, const T& t) { q.bind(t.archived ? std::optional<std::string>(orNow(t.archivedAt)) : std::nullopt); },
         [](const S& r, int i, T& t) { r.assignText(i, t.archivedAt); }},
        {"input_tokens", kLeanAndUsage, "?", [](Q& q, const T& t) { q.bind(t.usage.inputTokens); },
         [](const S& r, int i, T& t) { t.usage.inputTokens = r.optionalInt64(i); }},
        {"cache_tokens", kLeanAndUsage, "?", [](Q& q, const T& t) { q.bind(t.usage.cacheTokens); },
         [](const S& r, int i, T& t) { t.usage.cacheTokens = r.optionalInt64(i); }},
        {"output_tokens", kLeanAndUsage, "?", [](Q& q, const T& t) { q.bind(t.usage.outputTokens); },
         [](const S& r, int i, T& t) { t.usage.outputTokens = r.optionalInt64(i); }},
        {"cost_usd", kLeanAndUsage, "?", [](Q& q, const T& t) { q.bind(t.usage.costUsd); },
         [](const S& r, int i, T& t) { t.usage.costUsd = r.optionalReal(i); }},
        {"agent_seconds", kLeanAndUsage, "?", [](Q& q, const T& t) { q.bind(t.usage.agentSeconds); },
         [](const S& r, int i, T& t) { t.usage.agentSeconds = r.optionalReal(i); }},
        {"problem_fingerprint", 0, "?", [](Q& q, const T& t) { q.bind(t.problemFingerprint); },
         [](const S& r, int i, T& t) { r.assignText(i, t.problemFingerprint); }},
        {"grader_fingerprint", 0, "?", [](Q& q, const T& t) { q.bind(t.graderFingerprint); },
         [](const S& r, int i, T& t) { r.assignText(i, t.graderFingerprint); }},
        {"source_skill_sha256", 0, "?", [](Q& q, const T& t) { q.bind(t.sourceSkillSha256); },
         [](const S& r, int i, T& t) { r.assignText(i, t.sourceSkillSha256); }},
        {"started_at", kLean, "?", [](Q& q, const T& t) { q.bind(orNow(t.startedAt)); },
         [](const S& r, int i, T& t) { r.assignText(i, t.startedAt); }},
        {"finished_at", kLean, "?", [](Q& q, const T& t) { q.bind(nullIfEmpty(t.finishedAt)); },
         [](const S& r, int i, T& t) { r.assignText(i, t.finishedAt); }},
        {"invocation_id", kLean, "?",
         [](Q& q, const T& t) {
             q.bind(t.invocationId != 0 ? std::optional<std::int64_t>(t.invocationId) : std::nullopt);
         },
         [](const S& r, int i, T& t) { t.invocationId = r.int64(i); }},
        {"origin", 0, "?", [](Q& q, const T& t) { q.bind(t.origin); },
         [](const S& r, int i, T& t) { r.assignText(i, t.origin); }},
    };
    return table;
}

const std::vector<const TrialColumn*>& trialColumnsOf(TrialView view) {
    const auto select = [](unsigned bits) {
        std::vector<const TrialColumn*> columns;
        for (const TrialColumn& column : trialColumnTable()) {
            if (column.read && (bits == 0 || (column.views & bits) != 0)) {
                columns.push_back(&column);
            }
        }
        return columns;
    };
    static const std::vector<const TrialColumn*> full = select(0);
    static const std::vector<const TrialColumn*> lean = select(kLean);
    static const std::vector<const TrialColumn*> metrics = select(kMetrics);
    static const std::vector<const TrialColumn*> metricsUsage = select(kMetrics | kUsage);
    switch (view) {
    case TrialView::Full:
        return full;
    case TrialView::Lean:
        return lean;
    case TrialView::Metrics:
        return metrics;
    case TrialView::MetricsUsage:
        break;
    }
    return metricsUsage;
}

std::string trialSelectList(TrialView view) {
    std::string sql = view == TrialView::Full ? "SELECT t.id, m.name" : "SELECT t.id, t.model_id";
    for (const TrialColumn* column : trialColumnsOf(view)) {
        sql += std::string(", t.") + column->name;
    }
    return sql + " ";
}

int readTrialColumns(const Statement& row, int first, TrialView view, TrialRecord& trial) {
    int column = first;
    for (const TrialColumn* read : trialColumnsOf(view)) {
        read->read(row, column++, trial);
    }
    return column;
}

const std::string& trialInsertSql() {
    static const std::string sql = [] {
        std::string names;
        std::string values;
        for (const TrialColumn& column : trialColumnTable()) {
            names += (names.empty() ? "" : ", ") + std::string(column.name);
            values += (values.empty() ? "" : ", ") + std::string(column.insertValue);
        }
        return "INSERT INTO trials (" + names + ") VALUES (" + values + ") RETURNING id";
    }();
    return sql;
}

void bindTrialInsert(Query& query, const TrialRecord& trial) {
    for (const TrialColumn& column : trialColumnTable()) {
        column.bind(query, trial);
    }
}

std::string trialFilterWhere(const TrialFilter& filter) {
    return std::string("WHERE (?1 IS NULL OR t.model_id = (SELECT id FROM models WHERE name = ?1)) ") +
           "AND (?2 IS NULL OR t.suite = ?2) " + (filter.includeArchived ? "" : "AND t.archived = 0 ");
}

void bindTrialFilter(Query& query, const TrialFilter& filter) {
    query.bind(filter.model, filter.suite);
}

} // namespace mkb::store_detail
