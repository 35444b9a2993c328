// The store's trial readers: one trial whole, every trial of a filter whole, and the bulk lean and metrics loads that
// merge three scans in trial id order (trials, final verdicts, skills) instead of joining them per row.
#include "core/store/store.h"

#include "core/store/bulk_memory.h"
#include "core/store/store_impl.h"
#include "core/store/trial_columns.h"
#include "core/store/verdict_columns.h"
#include "core/util/text.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace mkb {
namespace {

/// The full select: every trial column, the model's name, the skill's text and the whole final verdict.
const std::string& fullTrialSelect() {
    static const std::string sql = trialSelectList(TrialView::Full) + ", s.text, fv.trial_id, " +
                                   verdictColumnList(VerdictView::Full, "fv.") +
                                   " FROM trials t JOIN models m ON m.id = t.model_id "
                                   "LEFT JOIN final_verdicts fv ON fv.trial_id = t.id "
                                   "LEFT JOIN skills s ON s.trial_id = t.id ";
    return sql;
}

/// Fills trial in place from fullTrialSelect() (records are large; building them where they live saves a move per row).
void readFullTrial(const Statement& row, TrialRecord& trial) {
    trial.id = row.int64(0);
    trial.model = row.text(1);
    const int skill = readTrialColumns(row, 2, TrialView::Full, trial);
    if (!row.isNull(skill)) {
        trial.skillText = row.text(skill);
        trial.skillWritten = !trimmed(*trial.skillText).empty();
    }
    if (!row.isNull(skill + 1)) {
        readVerdictInto(row, skill + 2, VerdictView::Full, trial.finalVerdict.emplace());
    }
}

/// What a bulk load reads: which trial and verdict columns, and whether the skill flags.
struct BulkColumns {
    TrialView trials;
    VerdictView verdicts;
    bool skills;
};

BulkColumns bulkColumns(TrialDetail detail, const MetricColumns& columns) {
    if (detail == TrialDetail::Metrics) {
        return {columns.usage ? TrialView::MetricsUsage : TrialView::Metrics,
                columns.verdictDetail ? VerdictView::MetricsDetail : VerdictView::Metrics, columns.skillWritten};
    }
    return {TrialView::Lean, VerdictView::Lean, true};
}

/// The bulk load: the trials of filter in id order with their final verdicts and skill flags merged in by trial id.
/// Each row is read into the record recordFor() returns (a new one, or one refilled row after row: every field the
/// columns cover is overwritten), which is then handed to visit.
template <typename RecordFor, typename Visit>
Status scanTrials(Store::Impl& impl, const TrialFilter& filter, const BulkColumns& columns,
                  const std::string& operation, RecordFor&& recordFor, Visit&& visit) {
    auto names = impl.modelNamesById(operation);
    if (!names) {
        return names.error();
    }
    const std::unordered_map<std::int64_t, std::string>& modelNames = *names;
    std::vector<std::pair<std::int64_t, bool>> skillWritten; // (trial id, non-blank), sorted by trial id
    if (columns.skills) {
        auto skills = impl.skillsWrittenByTrial(operation);
        if (!skills) {
            return skills.error();
        }
        skillWritten = std::move(skills).value();
    }
    Query trials = impl.query(
        trialSelectList(columns.trials) + "FROM trials t " + trialFilterWhere(filter) + "ORDER BY t.id", operation);
    bindTrialFilter(trials, filter);
    Query verdicts =
        impl.query("SELECT trial_id, " + verdictColumnList(columns.verdicts) + " FROM final_verdicts ORDER BY trial_id",
                   operation + " (final verdicts)");
    RowsByTrialId verdictOf(verdicts);
    if (Status ready = verdicts.status(); !ready) {
        return ready;
    }
    auto nextSkill = skillWritten.begin();
    Status read = trials.forEach([&](const Statement& row) {
        TrialRecord& trial = recordFor();
        trial.id = row.int64(0);
        if (auto found = modelNames.find(row.int64(1)); found != modelNames.end()) {
            trial.model = found->second;
        } else {
            trial.model.clear();
        }
        readTrialColumns(row, 2, columns.trials, trial);
        trial.lean = true;
        if (const Statement* verdict = verdictOf.rowOf(trial.id)) {
            readVerdictInto(*verdict, 1, columns.verdicts, trial.finalVerdict.emplace());
        } else {
            trial.finalVerdict.reset();
        }
        while (nextSkill != skillWritten.end() && nextSkill->first < trial.id) {
            ++nextSkill;
        }
        trial.skillWritten = nextSkill != skillWritten.end() && nextSkill->first == trial.id && nextSkill->second;
        visit(trial);
    });
    if (!read) {
        return read;
    }
    return verdicts.status();
}

} // namespace

Result<std::vector<TrialRecord>> Store::loadTrials(const TrialFilter& filter, TrialDetail detail,
                                                   const MetricColumns& columns) {
    if (detail != TrialDetail::Full) {
        return loadLeanTrials(filter, detail, columns);
    }
    std::vector<TrialRecord> trials;
    {
        // Reserving up front avoids moving 100k large records through repeated reallocations.
        Result<std::size_t> count = countTrials(filter);
        if (!count) {
            return count.error();
        }
        trials.reserve(*count);
        adviseHugePages(trials.data(), trials.capacity() * sizeof(TrialRecord));
    }
    Query rows = impl_->query(fullTrialSelect() + trialFilterWhere(filter) + "ORDER BY t.id", "loading trials");
    bindTrialFilter(rows, filter);
    if (Status read = rows.forEach([&](const Statement& row) { readFullTrial(row, trials.emplace_back()); }); !read) {
        return read.error();
    }
    return trials;
}

Result<std::vector<TrialRecord>> Store::loadLeanTrials(const TrialFilter& filter, TrialDetail detail,
                                                       const MetricColumns& columns) {
    std::vector<TrialRecord> trials;
    {
        // Reserving up front avoids moving 100k large records through repeated reallocations.
        Result<std::size_t> count = countTrials(filter);
        if (!count) {
            return count.error();
        }
        trials.reserve(*count);
        adviseHugePages(trials.data(), trials.capacity() * sizeof(TrialRecord));
    }
    Status read = scanTrials(
        *impl_, filter, bulkColumns(detail, columns), "loading trials",
        [&]() -> TrialRecord& { return trials.emplace_back(); }, [](const TrialRecord&) {});
    if (!read) {
        return read.error();
    }
    return trials;
}

Status Store::visitTrials(const TrialFilter& filter, const MetricColumns& columns,
                          const std::function<void(const TrialRecord&)>& visit) {
    TrialRecord trial; // refilled row after row: its strings keep their buffers
    return scanTrials(
        *impl_, filter, bulkColumns(TrialDetail::Metrics, columns), "reading trials",
        [&]() -> TrialRecord& { return trial; }, visit);
}

Result<std::size_t> Store::countTrials(const TrialFilter& filter) {
    Query count = impl_->query("SELECT count(*) FROM trials t " + trialFilterWhere(filter), "counting trials");
    bindTrialFilter(count, filter);
    Result<std::int64_t> counted = count.returnedId();
    if (!counted) {
        return counted.error();
    }
    return static_cast<std::size_t>(*counted);
}

Result<TrialRecord> Store::loadTrial(std::int64_t trialId) {
    const std::string operation = "loading trial #" + std::to_string(trialId);
    Result<std::optional<TrialRecord>> trial =
        impl_->query(fullTrialSelect() + "WHERE t.id = ?", operation).bind(trialId).firstRow([](const Statement& row) {
            TrialRecord read;
            readFullTrial(row, read);
            return read;
        });
    if (!trial) {
        return trial.error();
    }
    if (!*trial) {
        return impl_->failure(operation, "no such trial");
    }
    return std::move(**trial);
}

Result<std::vector<std::pair<std::int64_t, bool>>> Store::Impl::skillsWrittenByTrial(const std::string& operation) {
    std::vector<std::pair<std::int64_t, bool>> written;
    // A SKILL.md counts as written when it holds more than white space (the one definition; analysis reads the flag).
    Status read =
        query("SELECT trial_id, text FROM skills", operation + " (skills)").forEach([&](const Statement& row) {
            written.emplace_back(row.int64(0), !trimmed(row.view(1)).empty());
        });
    if (!read) {
        return read.error();
    }
    std::sort(written.begin(), written.end());
    return written;
}

} // namespace mkb
