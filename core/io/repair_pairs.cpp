// Repair pairs from store trials: fixing edits found by core/analysis/refinement, dressed with sources and verdicts.
#include "core/io/repair_pairs.h"

#include "core/analysis/attempt.h"
#include "core/analysis/refinement.h"
#include "core/io/attempt_loader.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

namespace mkb {
namespace {

std::string problemName(int number, const std::string& slug) {
    char digits[16];
    std::snprintf(digits, sizeof digits, "%02d", number);
    return std::string(digits) + "_" + slug;
}

} // namespace

std::vector<RepairPair> repairPairs(const std::vector<TrialRecord>& trials,
                                    const std::vector<SubmissionRecord>& submissions,
                                    const analysis::AnalysisSettings& settings) {
    const std::vector<analysis::Attempt> attempts = analysis::attemptsFromTrials(trials, submissions);
    const std::vector<analysis::FixingEdit> edits = analysis::fixingEdits(attempts, settings);
    std::map<std::pair<std::int64_t, int>, const SubmissionRecord*> submissionAt;
    for (const SubmissionRecord& submission : submissions) {
        submissionAt[{submission.trialId, submission.index}] = &submission;
    }
    std::unordered_map<std::int64_t, const TrialRecord*> trialById;
    for (const TrialRecord& trial : trials) {
        trialById[trial.id] = &trial;
    }
    std::vector<RepairPair> pairs;
    pairs.reserve(edits.size());
    for (const analysis::FixingEdit& edit : edits) {
        RepairPair pair;
        pair.model = edit.model;
        pair.problem = problemName(edit.problemNumber, edit.problemSlug);
        pair.dsl = edit.dsl;
        pair.arm = edit.arm;
        pair.beforeIndex = edit.fromIndex;
        pair.afterIndex = edit.toIndex;
        pair.changedLineShare = edit.diff.changedShare;
        pair.fixKind = edit.kind == analysis::EditKind::StructuralRewrite ? "structural" : "local";
        if (auto trial = trialById.find(edit.trialId); trial != trialById.end()) {
            pair.family = trial->second->family;
            pair.coordinate = trial->second->coordinate;
        }
        if (auto before = submissionAt.find({edit.trialId, edit.fromIndex}); before != submissionAt.end()) {
            pair.beforeSource = before->second->kernelSource;
            pair.failure = before->second->verdict;
        }
        if (auto after = submissionAt.find({edit.trialId, edit.toIndex}); after != submissionAt.end()) {
            pair.afterSource = after->second->kernelSource;
        }
        pairs.push_back(std::move(pair));
    }
    return pairs;
}

Result<std::vector<RepairPair>> repairPairsFromStore(Store& store, const std::optional<std::string>& model,
                                                     const analysis::AnalysisSettings& settings) {
    TrialFilter filter;
    filter.model = model;
    auto trials = store.loadTrials(filter, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    auto summaries = io::loadSubmissionSummaries(store);
    if (!summaries) {
        return summaries.error();
    }
    // Find the repairs on the light submissions, then read full verdicts only for the trials that hold one.
    std::set<std::int64_t> repairedTrials;
    for (const analysis::FixingEdit& edit :
         analysis::fixingEdits(analysis::attemptsFromTrials(*trials, *summaries), settings)) {
        repairedTrials.insert(edit.trialId);
    }
    std::vector<TrialRecord> repaired;
    std::vector<SubmissionRecord> full;
    for (TrialRecord& trial : *trials) {
        if (!repairedTrials.count(trial.id)) {
            continue;
        }
        auto own = store.submissions(trial.id);
        if (!own) {
            return own.error();
        }
        for (SubmissionRecord& submission : *own) {
            full.push_back(std::move(submission));
        }
        repaired.push_back(std::move(trial));
    }
    return repairPairs(repaired, full, settings);
}

std::string repairPairJsonLine(const RepairPair& pair) {
    using json = nlohmann::ordered_json; // keys in the documented order, the grader's verdict in its own
    json verdict = nullptr;
    if (!pair.failure.json.empty()) {
        verdict = json::parse(pair.failure.json, nullptr, false);
        if (verdict.is_discarded()) {
            verdict = pair.failure.json; // kept verbatim when the grader's text is not JSON
        }
    }
    const json line = {{"model", pair.model},
                       {"problem", pair.problem},
                       {"family", pair.family},
                       {"dsl", pair.dsl},
                       {"arm", pair.arm},
                       {"coordinate", pair.coordinate},
                       {"before_index", pair.beforeIndex},
                       {"after_index", pair.afterIndex},
                       {"before_source", pair.beforeSource},
                       {"after_source", pair.afterSource},
                       {"failure_report",
                        {{"stage", pair.failure.stage},
                         {"error", pair.failure.error},
                         {"mismatch", pair.failure.mismatch},
                         {"verdict", verdict}}},
                       {"fix_changed_line_share", pair.changedLineShare},
                       {"fix_kind", pair.fixKind}};
    return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace mkb
