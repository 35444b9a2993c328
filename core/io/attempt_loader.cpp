// Reads trials and submissions row by row into attempts and comparisons (see attempt_loader.h).
#include "core/io/attempt_loader.h"

#include "core/store/bulk_memory.h"

#include <sqlite3.h>

#include <string>
#include <utility>

namespace mkb::io {
namespace {

/// Room for count attempts in one block, marked for huge pages: 100,000 attempts are 40 MB written once.
void reserveAttempts(std::vector<analysis::Attempt>& attempts, std::size_t count) {
    attempts.reserve(count);
    adviseHugePages(attempts.data(), count * sizeof(analysis::Attempt));
}

} // namespace

Result<LoadedAttempts> loadAttempts(Store& store, const AttemptLoadOptions& options) {
    Result<std::size_t> count = store.countTrials(options.filter);
    if (!count) {
        return count.error();
    }
    LoadedAttempts loaded;
    auto attempts = std::make_shared<std::vector<analysis::Attempt>>();
    reserveAttempts(*attempts, *count);
    Status read = store.visitTrials(options.filter, options.columns, [&](const TrialRecord& trial) {
        if (options.keep && !options.keep(trial)) {
            return;
        }
        ++loaded.trials;
        if (analysis::fillsArm(trial)) {
            attempts->push_back(analysis::attemptFromTrial(trial));
        } else {
            loaded.armless.push_back(trial);
        }
    });
    if (!read) {
        return read.error();
    }
    if (options.withSubmissions) {
        // Attempts ascend by trial id and submissions by (trial id, index): one merge, no submission kept twice.
        auto next = attempts->begin();
        analysis::Attempt* last = nullptr;
        Status attached = visitSubmissionSummaries(store, [&](const SubmissionRecord& submission) {
            while (next != attempts->end() && next->trialId < submission.trialId) {
                ++next;
            }
            if (next == attempts->end() || next->trialId != submission.trialId) {
                return; // a trial left out of the selection, or one without a verdict
            }
            if (last && last != &*next) {
                analysis::settleFinalKernel(*last);
            }
            last = &*next;
            analysis::addSubmission(*next, submission);
        });
        if (!attached) {
            return attached.error();
        }
        if (last) {
            analysis::settleFinalKernel(*last);
        }
    }
    loaded.attempts = std::move(attempts);
    loaded.comparisons = analysis::buildComparisons(loaded.attempts, loaded.armless);
    if (options.withRetimings) {
        Result<std::vector<RetimingRecord>> retimings = store.liveRetimings();
        if (!retimings) {
            return retimings.error();
        }
        loaded.retimings = analysis::attachRetimings(loaded.comparisons, *retimings);
    }
    return loaded;
}

Status visitSubmissionSummaries(Store& store, const std::function<void(const SubmissionRecord&)>& visit) {
    static const char* const kQuery =
        "SELECT trial_id, idx, kernel_source, imported, correct, passed, speedup, stage, error, mismatch, compliant, "
        "compliance_rule, submission_eval_seconds, device_name FROM submissions ORDER BY trial_id, idx";
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(store.handle(), kQuery, -1, &statement, nullptr) != SQLITE_OK) {
        const std::string message = sqlite3_errmsg(store.handle());
        sqlite3_finalize(statement);
        return makeError("cannot read the submissions of " + store.path().string() + ": " + message +
                         "; check the store with `mkb db check`");
    }
    auto text = [&](int column, std::string& target) {
        const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
        if (bytes) {
            target.assign(bytes, static_cast<std::size_t>(sqlite3_column_bytes(statement, column)));
        } else {
            target.clear();
        }
    };
    SubmissionRecord submission; // refilled row after row: every field below is overwritten
    int step = SQLITE_ROW;
    while ((step = sqlite3_step(statement)) == SQLITE_ROW) {
        submission.trialId = sqlite3_column_int64(statement, 0);
        submission.index = sqlite3_column_int(statement, 1);
        text(2, submission.kernelSource);
        submission.verdict.imported = sqlite3_column_int(statement, 3) != 0;
        submission.verdict.correct = sqlite3_column_int(statement, 4) != 0;
        submission.verdict.passed = sqlite3_column_int(statement, 5) != 0;
        submission.verdict.speedupVsEager = sqlite3_column_double(statement, 6);
        text(7, submission.verdict.stage);
        text(8, submission.verdict.error);
        text(9, submission.verdict.mismatch);
        submission.verdict.compliant = sqlite3_column_int(statement, 10) != 0;
        text(11, submission.verdict.complianceRule);
        submission.evalSeconds = sqlite3_column_double(statement, 12);
        text(13, submission.verdict.deviceName);
        visit(submission);
    }
    const std::string message = step == SQLITE_DONE ? "" : sqlite3_errmsg(store.handle());
    sqlite3_finalize(statement);
    if (!message.empty()) {
        return makeError("reading the submissions of " + store.path().string() + " failed: " + message +
                         "; check the store with `mkb db check`");
    }
    return Ok{};
}

} // namespace mkb::io
