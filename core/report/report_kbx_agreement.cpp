// Builds the kbx-agreement table from the store's regradings and the submissions' own verdicts.
#include "core/report/report_kbx_agreement.h"

#include "core/analysis/kbx_agreement.h"
#include "core/io/kbx_regraded_rounds.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace mkb::report {
namespace {

ReportCell intervalLow(const std::optional<analysis::Interval>& interval, int precision) {
    return interval ? numberCell(interval->low, precision) : nullCell();
}

ReportCell intervalHigh(const std::optional<analysis::Interval>& interval, int precision) {
    return interval ? numberCell(interval->high, precision) : nullCell();
}

/// A share's interval bound as a percentage, like the share beside it.
ReportCell shareBound(const std::optional<analysis::Interval>& interval, bool high) {
    return interval ? percentCell(high ? interval->high : interval->low) : nullCell();
}

/// A reason on one line, cut at 300 characters.
std::string oneLine(std::string text) {
    for (char& c : text) {
        if (c == '\n' || c == '\r' || c == '\t') {
            c = ' ';
        }
    }
    return text.size() > 300 ? text.substr(0, 300) + "…" : text;
}

} // namespace

Result<std::vector<ReportTable>> kbxAgreementTables(Store& store, const ReportOptions& options,
                                                    const std::function<std::string(const TrialRecord&)>& categoryOf) {
    auto submissions = io::loadKbxRegradedSubmissions(store, options.model, categoryOf);
    if (!submissions) {
        return submissions.error();
    }
    std::map<std::string, std::vector<analysis::RegradedRound>> roundsByBoundary;
    ReportTable disagreements{
        "kbx-disagreements",
        "Rounds where our verdict and theirs disagree on correctness, with both reasons",
        {"Boundary", "task", "Category", "round", "theirs", "ours", "their reason", "our reason", "KernelBench-X rule"},
        {},
        {},
        {}};
    std::map<std::pair<std::string, std::string>, std::pair<std::size_t, std::string>> ruleCounts; // -> count, words
    std::map<std::string, std::size_t> disagreementsByBoundary;
    for (const auto& [boundary, boundarySubmissions] : *submissions) {
        for (const io::KbxRegradedSubmission& submission : boundarySubmissions) {
            const analysis::RegradedRound& round = submission.round;
            roundsByBoundary[boundary].push_back(round);
            if (round.theirsCorrect == round.oursCorrect) {
                continue;
            }
            const Verdict& ours = submission.ours;
            const Verdict& theirs = submission.theirs;
            const std::string rule = analysis::kbxDisagreementRule(
                round.theirsCorrect, {ours.correct, ours.complianceRule, ours.error, ours.timedOut});
            const std::string ruleName = rule.substr(0, rule.find(':'));
            ruleCounts[{boundary, ruleName}].first += 1;
            ruleCounts[{boundary, ruleName}].second = rule;
            ++disagreementsByBoundary[boundary];
            const TrialRecord& trial = submission.trial;
            char number[16];
            std::snprintf(number, sizeof number, "%02d", trial.problemNumber);
            const std::string roundName = theirs.boundary == "kbx"
                                              ? "round_" + std::to_string(submission.submissionIndex - 1)
                                              : "submission " + std::to_string(submission.submissionIndex);
            disagreements.rows.push_back(
                {textCell(boundary), textCell(trial.family + "/" + number + "_" + trial.problemSlug),
                 textCell(round.category.empty() ? "uncategorised" : round.category), textCell(roundName),
                 textCell(round.theirsCorrect ? "correct" : "not correct"),
                 textCell(round.oursCorrect ? "correct" : "not correct"),
                 textCell(theirs.correct ? "" : oneLine(theirs.error)),
                 textCell(ours.correct ? "" : oneLine(ours.error)), textCell(rule)});
        }
    }
    if (roundsByBoundary.empty()) {
        return std::vector<ReportTable>{};
    }
    ReportTable table{"kbx-agreement",
                      "Our verdicts (mkb regrade) against the rounds' own, by category",
                      {"Boundary",           "Category",      "rounds",         "theirs correct", "theirs 95% low",
                       "theirs 95% high",    "ours correct",  "ours 95% low",   "ours 95% high",  "both",
                       "only theirs",        "only ours",     "neither",        "agreement",      "agreement 95% low",
                       "agreement 95% high", "speedup pairs", "ours/theirs GM", "GM 95% low",     "GM 95% high"},
                      {},
                      {},
                      {}};
    for (const auto& [boundary, rounds] : roundsByBoundary) {
        for (const analysis::AgreementGroup& group : analysis::kbxAgreement(rounds)) {
            table.rows.push_back({textCell(boundary),
                                  textCell(group.category.empty() ? "all" : group.category),
                                  countCell(group.rounds),
                                  percentCell(group.theirsCorrectShare),
                                  shareBound(group.theirsCorrectInterval, false),
                                  shareBound(group.theirsCorrectInterval, true),
                                  percentCell(group.oursCorrectShare),
                                  shareBound(group.oursCorrectInterval, false),
                                  shareBound(group.oursCorrectInterval, true),
                                  countCell(group.bothCorrect),
                                  countCell(group.onlyTheirs),
                                  countCell(group.onlyOurs),
                                  countCell(group.neither),
                                  percentCell(group.agreement),
                                  shareBound(group.agreementInterval, false),
                                  shareBound(group.agreementInterval, true),
                                  countCell(group.speedupPairs),
                                  numberCell(group.speedupRatioGeometricMean, 3),
                                  intervalLow(group.speedupRatioInterval, 3),
                                  intervalHigh(group.speedupRatioInterval, 3)});
        }
    }
    table.footnotes = {
        "Theirs: the verdict each round came with (KernelBench-X's call and execution checks for an imported corpus: "
        "correct = it ran and matched); ours: the newest mkb regrade verdict of that round under the boundary "
        "(docs/guide/kernelbenchx.md). Agreement: both correct or both not. Intervals: 95% percentile bootstrap over "
        "the rounds, seeded. ours/theirs GM: the geometric mean of our speedup over eager divided by theirs, over the "
        "rounds both call correct (below 1: our grader times the kernel slower against eager than they did)."};
    std::vector<ReportTable> tables;
    tables.push_back(std::move(table));
    if (!disagreements.rows.empty()) {
        disagreements.footnotes = {"Their reason: the error their harness recorded; ours: the grader's, whose stage "
                                   "and rule docs/grader-protocol.md describes."};
        tables.push_back(std::move(disagreements));
        ReportTable rules{"kbx-disagreement-rules",
                          "Why the two graders disagree: the KernelBench-X rule behind each disagreement, per boundary",
                          {"Boundary", "rule", "rounds", "of the disagreements", "what differs"},
                          {},
                          {},
                          {}};
        for (const auto& [key, count] : ruleCounts) {
            const double share = double(count.first) / double(disagreementsByBoundary[key.first]);
            rules.rows.push_back({textCell(key.first), textCell(key.second), countCell(count.first),
                                  percentCell(std::optional<double>(share)),
                                  textCell(count.second.substr(std::min(count.second.size(), key.second.size() + 2)))});
        }
        rules.footnotes = {"Read from our reason (the grader's stage and compliance rule) for each disagreeing round; "
                           "docs/kernelbenchx-regrade.md discusses each rule on the real corpus."};
        tables.push_back(std::move(rules));
    }
    return tables;
}

} // namespace mkb::report
