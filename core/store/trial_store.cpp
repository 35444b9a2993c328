// The store's trial writes and lookups: inserting a trial, its status and outcome (final verdict, usage, skill),
// archiving, and the importer's look-ups of live and archived trials.
#include "core/store/store.h"

#include "core/store/store_impl.h"
#include "core/store/trial_columns.h"
#include "core/store/verdict_columns.h"
#include "core/util/sha256.h"
#include "core/util/utc_time.h"

#include <string>

namespace mkb {

Result<std::int64_t> Store::insertTrial(const TrialRecord& trial) {
    const std::string operation = "inserting trial " + trial.coordinate + " of model '" + trial.model + "'";
    if (trial.model.empty()) {
        return impl_->failure(operation, "the trial names no model");
    }
    std::int64_t trialId = 0;
    Status inserted = transaction([&]() -> Status {
        if (Result<int> ensured =
                impl_
                    ->query("INSERT INTO models (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                            operation)
                    .bind(trial.model, utcNowIso())
                    .run();
            !ensured) {
            return ensured.error();
        }
        Query insert = impl_->query(trialInsertSql(), operation);
        bindTrialInsert(insert, trial);
        Result<std::int64_t> id = insert.returnedId();
        if (!id) {
            if (insert.failedWith(SQLITE_CONSTRAINT_UNIQUE)) {
                return impl_->failure(operation, "a live trial already holds model '" + trial.model + "', problem " +
                                                     trial.suite + "/" + std::to_string(trial.problemNumber) +
                                                     ", replicate " + std::to_string(trial.replicate) + ", arm " +
                                                     trial.arm + " (archive it first)");
            }
            return id.error();
        }
        trialId = *id;
        return Ok{};
    });
    if (!inserted) {
        return inserted.error();
    }
    return trialId;
}

Status Store::updateTrialStatus(std::int64_t trialId, TrialStatus status, const std::string& error) {
    const std::string operation = "updating the status of trial #" + std::to_string(trialId);
    return impl_->runChangingRow(impl_->query("UPDATE trials SET status = ?, error = ? WHERE id = ?", operation)
                                     .bind(std::string(toString(status)), error, trialId),
                                 operation, "no such trial");
}

Status Store::finishTrial(std::int64_t trialId, const TrialOutcome& outcome) {
    return writeTrialOutcome(trialId, outcome, /*historyImport=*/false);
}

Result<std::int64_t> Store::insertFinishedTrial(const TrialRecord& trial, const TrialOutcome& outcome) {
    std::int64_t trialId = 0;
    Status written = transaction([&]() -> Status {
        Result<std::int64_t> inserted = insertTrial(trial);
        if (!inserted) {
            return inserted.error();
        }
        trialId = *inserted;
        return writeTrialOutcome(trialId, outcome, /*historyImport=*/true);
    });
    if (!written) {
        return written.error();
    }
    return trialId;
}

Status Store::writeTrialOutcome(std::int64_t trialId, const TrialOutcome& outcome, bool historyImport) {
    const std::string operation = "finishing trial #" + std::to_string(trialId);
    return transaction([&]() -> Status {
        struct TrialState {
            bool archived;
            bool hasVerdict;
        };
        Result<std::optional<TrialState>> state =
            impl_
                ->query("SELECT archived, EXISTS (SELECT 1 FROM final_verdicts WHERE trial_id = ?1) FROM trials "
                        "WHERE id = ?1",
                        operation)
                .bind(trialId)
                .firstRow([](const Statement& row) {
                    return TrialState{row.boolean(0), row.boolean(1)};
                });
        if (!state) {
            return state.error();
        }
        if (!*state) {
            return impl_->failure(operation, "no such trial");
        }
        if ((*state)->archived && !historyImport) {
            return impl_->failure(operation, "the trial is archived; insert a new trial instead");
        }
        if ((*state)->hasVerdict) {
            return impl_->failure(operation, "the trial already holds a final verdict; archive it and insert a new "
                                             "trial to redo it");
        }
        const std::string finishedAt = orNow(outcome.finishedAt);
        if (Result<int> updated =
                impl_
                    ->query("UPDATE trials SET status = ?, error = ?, timed_out = ?, skipped = ?, input_tokens = ?, "
                            "cache_tokens = ?, output_tokens = ?, cost_usd = ?, agent_seconds = ?, finished_at = ? "
                            "WHERE id = ?",
                            operation)
                    .bind(std::string(toString(outcome.status)), outcome.error, outcome.timedOut, outcome.skipped,
                          outcome.usage.inputTokens, outcome.usage.cacheTokens, outcome.usage.outputTokens,
                          outcome.usage.costUsd, outcome.usage.agentSeconds, finishedAt, trialId)
                    .run();
            !updated) {
            return updated.error();
        }
        if (outcome.verdict) {
            if (Result<int> inserted = impl_
                                           ->query("INSERT INTO final_verdicts (trial_id, recorded_at, " +
                                                       verdictColumnList(VerdictView::Full) + ") VALUES (?, ?, " +
                                                       verdictPlaceholders() + ")",
                                                   operation + " (its final verdict)")
                                           .bind(trialId, finishedAt, *outcome.verdict)
                                           .run();
                !inserted) {
                return inserted.error();
            }
        }
        if (outcome.skillText) {
            if (Result<int> inserted =
                    impl_
                        ->query("INSERT INTO skills (trial_id, text, sha256, created_at) VALUES (?, ?, ?, ?)",
                                operation + " (its skill)")
                        .bind(trialId, *outcome.skillText, sha256Hex(*outcome.skillText), finishedAt)
                        .run();
                !inserted) {
                return inserted.error();
            }
        }
        return Ok{};
    });
}

Status Store::archiveTrial(std::int64_t trialId) {
    const std::string operation = "archiving trial #" + std::to_string(trialId);
    Result<int> changed =
        impl_->query("UPDATE trials SET archived = 1, archived_at = ? WHERE id = ? AND archived = 0", operation)
            .bind(utcNowIso(), trialId)
            .run();
    if (!changed) {
        return changed.error();
    }
    if (*changed == 0) {
        Result<std::int64_t> exists =
            impl_->query("SELECT count(*) FROM trials WHERE id = ?", operation).bind(trialId).returnedId();
        if (!exists || *exists == 0) {
            return impl_->failure(operation, "no such trial");
        }
        // Already archived: archiving is idempotent and keeps the first archived_at.
    }
    return Ok{};
}

Result<std::optional<LiveTrialRef>> Store::liveTrialAt(const std::string& model, const std::string& suite,
                                                       int problemNumber, int replicate, const std::string& arm) {
    return impl_
        ->query("SELECT t.id, t.origin, t.source_trial_id FROM trials t JOIN models m ON m.id = t.model_id "
                "WHERE m.name = ? AND t.suite = ? AND t.problem_number = ? AND t.replicate = ? AND t.arm = ? "
                "AND t.archived = 0",
                "looking up the live trial of model '" + model + "', problem " + suite + "/" +
                    std::to_string(problemNumber) + ", replicate " + std::to_string(replicate) + ", arm " + arm)
        .bind(model, suite, problemNumber, replicate, arm)
        .firstRow([](const Statement& row) {
            return LiveTrialRef{row.int64(0), row.text(1), row.optionalInt64(2)};
        });
}

Result<bool> Store::hasArchivedOrigin(const std::string& model, const std::string& suite, const std::string& origin) {
    Result<std::int64_t> exists =
        impl_
            ->query("SELECT EXISTS (SELECT 1 FROM trials t JOIN models m ON m.id = t.model_id "
                    "WHERE t.origin = ? AND t.origin != '' AND m.name = ? AND t.suite = ? AND t.archived = 1)",
                    "looking up archived trials of model '" + model + "'")
            .bind(origin, model, suite)
            .returnedId();
    if (!exists) {
        return exists.error();
    }
    return *exists != 0;
}

Status Store::setSourceTrial(std::int64_t trialId, std::int64_t sourceTrialId) {
    const std::string operation =
        "linking trial #" + std::to_string(trialId) + " to its source trial #" + std::to_string(sourceTrialId);
    return impl_->runChangingRow(
        impl_->query("UPDATE trials SET source_trial_id = ? WHERE id = ?", operation).bind(sourceTrialId, trialId),
        operation, "no such trial");
}

} // namespace mkb
