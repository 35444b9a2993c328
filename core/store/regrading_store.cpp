// The store's regradings: our verdicts on stored submissions graded again, one row per submission, boundary, grader
// and problem, each beside (never in place of) the submission's own verdict.
#include "core/store/store.h"

#include "core/store/store_impl.h"
#include "core/store/verdict_columns.h"

#include <string>
#include <vector>

namespace mkb {

Result<std::int64_t> Store::insertRegrading(const RegradingRecord& record) {
    return impl_
        ->query("INSERT INTO regradings (submission_id, grader_fingerprint, problem_fingerprint, kernel_sha256, "
                "kernel_source, created_at, " +
                    verdictColumnList(VerdictView::Full) + ") VALUES (?, ?, ?, ?, ?, ?, " + verdictPlaceholders() +
                    ") RETURNING id",
                "saving a regrading of submission #" + std::to_string(record.submissionId))
        .bind(record.submissionId, record.graderFingerprint, record.problemFingerprint, record.kernelSha256,
              record.kernelSource, orNow(record.createdAt), record.verdict)
        .returnedId();
}

Result<std::vector<RegradingRecord>> Store::regradings(bool withKernels) {
    return impl_
        ->query("SELECT r.id, r.submission_id, s.trial_id, s.idx, r.grader_fingerprint, r.problem_fingerprint, "
                "r.kernel_sha256, " +
                    std::string(withKernels ? "r.kernel_source" : "''") + ", r.created_at, " +
                    verdictColumnList(VerdictView::Full, "r.") +
                    " FROM regradings AS r JOIN submissions AS s ON s.id = r.submission_id ORDER BY r.submission_id, "
                    "r.id",
                "loading the regradings")
        .rows([](const Statement& row) {
            RegradingRecord record;
            record.id = row.int64(0);
            record.submissionId = row.int64(1);
            record.trialId = row.int64(2);
            record.submissionIndex = row.integer(3);
            record.graderFingerprint = row.text(4);
            record.problemFingerprint = row.text(5);
            record.kernelSha256 = row.text(6);
            record.kernelSource = row.text(7);
            record.createdAt = row.text(8);
            record.verdict = readVerdict(row, 9, VerdictView::Full);
            return record;
        });
}

} // namespace mkb
