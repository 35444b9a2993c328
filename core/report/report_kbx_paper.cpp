// Lays out analysis::kbxPaperFindings as report rows: shares and η² as percentages, speedups with three decimals.
#include "core/report/report_kbx_paper.h"

#include "core/analysis/attempt.h"
#include "core/analysis/kbx_paper.h"

#include <map>
#include <utility>

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
        "KernelBench-X's own); intervals: 95% percentile bootstrap over the items counted in n, seeded. Paper: "
        "KernelBench-X's "
        "published figure, over every evaluation of every method; an imported corpus holds only the transitions in "
        "which something changed, so rates are not expected to match (docs/guide/kernelbenchx.md). A finding the data "
        "cannot give has no number and says what it needs."};
    return table;
}

Result<std::vector<ReportTable>>
kbxPaperRegradedTables(Store& store, const ReportOptions& options,
                       const std::function<std::string(const TrialRecord&)>& categoryOf) {
    auto regradings = store.regradings();
    if (!regradings) {
        return regradings.error();
    }
    std::map<std::string, std::map<std::int64_t, const RegradingRecord*>> newest; // boundary -> submission -> newest
    for (const RegradingRecord& record : *regradings) {
        const RegradingRecord*& slot = newest[record.verdict.boundary][record.submissionId];
        if (!slot || slot->id < record.id) {
            slot = &record;
        }
    }
    if (newest.empty()) {
        return std::vector<ReportTable>{};
    }
    TrialFilter filter;
    filter.model = options.model;
    auto trials = store.loadTrials(filter, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    std::vector<ReportTable> tables;
    for (const auto& [boundary, bySubmission] : newest) {
        std::vector<analysis::Attempt> attempts;
        std::size_t rounds = 0;
        std::size_t leftOut = 0;
        for (const TrialRecord& trial : *trials) {
            if (trial.archived) {
                continue;
            }
            auto submissions = store.submissions(trial.id);
            if (!submissions) {
                return submissions.error();
            }
            analysis::Attempt attempt = analysis::attemptFromTrial(trial);
            attempt.category = categoryOf(trial);
            attempt.submissions.clear();
            std::optional<Verdict> last;
            std::size_t trialRounds = 0;
            for (SubmissionRecord& submission : *submissions) {
                if (submission.index < 1) {
                    continue;
                }
                const auto ours = bySubmission.find(submission.id);
                if (ours == bySubmission.end()) {
                    ++trialRounds; // counted below only when the trial was regraded at all
                    continue;
                }
                submission.verdict = ours->second->verdict;
                analysis::addSubmission(attempt, submission);
                last = submission.verdict;
            }
            if (!last) {
                continue; // no round of this trial was regraded under the boundary
            }
            leftOut += trialRounds;
            rounds += attempt.submissions.size();
            attempt.graded = true;
            attempt.imported = last->imported;
            attempt.correct = last->correct;
            attempt.passed = last->passed;
            attempt.speedup = last->passed ? last->speedupVsEager : 0.0;
            attempts.push_back(std::move(attempt));
        }
        if (attempts.empty()) {
            continue;
        }
        const analysis::AttemptSet set(attempts);
        ReportTable table = kbxPaperTable({{"all", &set}}, "group");
        table.id = "kbx-paper-" + boundary;
        table.title = "KernelBench-X's findings under our grader (mkb regrade, boundary " + boundary + ")";
        table.footnotes.insert(
            table.footnotes.begin(),
            "The same findings with our verdicts in place of the rounds' own: " + std::to_string(rounds) +
                " regraded rounds of " + std::to_string(attempts.size()) + " trials; " + std::to_string(leftOut) +
                (leftOut == 1 ? " round" : " rounds") + " of those trials not regraded under " + boundary +
                (leftOut == 1 ? " is" : " are") + " left out.");
        tables.push_back(std::move(table));
    }
    return tables;
}

} // namespace mkb::report
