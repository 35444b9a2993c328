// The store's submissions: the feedback evaluations of an attempt, each with its kernel source and full verdict.
#include "core/store/store.h"

#include "core/store/store_impl.h"
#include "core/store/verdict_columns.h"

#include <string>
#include <vector>

namespace mkb {

Result<std::int64_t> Store::addSubmission(const SubmissionRecord& submission) {
    return impl_
        ->query("INSERT INTO submissions (trial_id, idx, kernel_source, submission_eval_seconds, created_at, " +
                    verdictColumnList(VerdictView::Full) + ") VALUES (?, ?, ?, ?, ?, " + verdictPlaceholders() +
                    ") RETURNING id",
                "saving submission " + std::to_string(submission.index) + " of trial #" +
                    std::to_string(submission.trialId))
        .bind(submission.trialId, submission.index, submission.kernelSource, submission.evalSeconds,
              orNow(submission.createdAt), submission.verdict)
        .returnedId();
}

Result<std::vector<SubmissionRecord>> Store::submissions(std::int64_t trialId) {
    return impl_
        ->query("SELECT id, trial_id, idx, kernel_source, submission_eval_seconds, created_at, " +
                    verdictColumnList(VerdictView::Full) + " FROM submissions WHERE trial_id = ? ORDER BY idx",
                "loading the submissions of trial #" + std::to_string(trialId))
        .bind(trialId)
        .rows([](const Statement& row) {
            SubmissionRecord submission;
            submission.id = row.int64(0);
            submission.trialId = row.int64(1);
            submission.index = row.integer(2);
            submission.kernelSource = row.text(3);
            submission.evalSeconds = row.real(4);
            submission.createdAt = row.text(5);
            submission.verdict = readVerdict(row, 6, VerdictView::Full);
            return submission;
        });
}

Status Store::visitSubmissionSummaries(const std::function<void(const SubmissionRecord&)>& visit) {
    SubmissionRecord submission; // refilled row after row: every field below is overwritten
    Status read =
        impl_
            ->query("SELECT trial_id, idx, kernel_source, imported, correct, passed, speedup, stage, error, mismatch, "
                    "compliant, compliance_rule, submission_eval_seconds, device_name, device FROM submissions "
                    "ORDER BY trial_id, idx",
                    "reading the submissions")
            .forEach([&](const Statement& row) {
                submission.trialId = row.int64(0);
                submission.index = row.integer(1);
                row.assignText(2, submission.kernelSource);
                submission.verdict.imported = row.boolean(3);
                submission.verdict.correct = row.boolean(4);
                submission.verdict.passed = row.boolean(5);
                submission.verdict.speedupVsEager = row.real(6);
                row.assignText(7, submission.verdict.stage);
                row.assignText(8, submission.verdict.error);
                row.assignText(9, submission.verdict.mismatch);
                submission.verdict.compliant = row.boolean(10);
                row.assignText(11, submission.verdict.complianceRule);
                submission.evalSeconds = row.real(12);
                row.assignText(13, submission.verdict.deviceName);
                row.assignText(14, submission.verdict.device);
                visit(submission);
            });
    if (!read) {
        return makeError(read.error().message + "; check the store with `mkb db check --store " + quoted(impl_->path) +
                         "`");
    }
    return Ok{};
}

} // namespace mkb
