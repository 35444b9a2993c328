// The regraded rounds: the newest regrading of each live submission per boundary, joined to the submission's own
// verdict, in the order the kbx-agreement report reads them (boundary, then submission id).
#include "core/io/kbx_regraded_rounds.h"

namespace mkb::io {
namespace {

std::optional<double> correctSpeedup(const Verdict& verdict) {
    if (verdict.correct && verdict.speedupVsEager > 0) {
        return verdict.speedupVsEager;
    }
    return std::nullopt;
}

} // namespace

std::map<std::pair<std::string, std::int64_t>, RegradingRecord>
newestRegradings(std::vector<RegradingRecord> regradings, const std::function<bool(std::int64_t trialId)>& keep) {
    std::map<std::pair<std::string, std::int64_t>, RegradingRecord> newest;
    for (RegradingRecord& record : regradings) {
        if (!keep(record.trialId)) {
            continue;
        }
        const std::pair<std::string, std::int64_t> key{record.verdict.boundary, record.submissionId};
        auto slot = newest.find(key);
        if (slot == newest.end()) {
            newest.emplace(key, std::move(record));
        } else if (slot->second.id < record.id) {
            slot->second = std::move(record);
        }
    }
    return newest;
}

Result<std::map<std::string, std::vector<KbxRegradedSubmission>>>
loadKbxRegradedSubmissions(Store& store, const std::optional<std::string>& model, const CategoryOf& categoryOf) {
    auto regradings = store.regradings();
    if (!regradings) {
        return regradings.error();
    }
    std::map<std::string, std::vector<KbxRegradedSubmission>> roundsByBoundary;
    if (regradings->empty()) {
        return roundsByBoundary;
    }
    TrialFilter filter;
    filter.model = model;
    auto trials = store.loadTrials(filter, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    std::map<std::int64_t, const TrialRecord*> liveTrials;
    for (const TrialRecord& trial : *trials) {
        if (!trial.archived) {
            liveTrials[trial.id] = &trial;
        }
    }
    const auto newest = newestRegradings(std::move(*regradings),
                                         [&liveTrials](std::int64_t trialId) { return liveTrials.count(trialId) > 0; });
    std::map<std::int64_t, std::map<std::int64_t, Verdict>> theirsByTrial; // trial -> submission id -> verdict
    for (const auto& [key, record] : newest) {
        auto submissions = theirsByTrial.find(record.trialId);
        if (submissions == theirsByTrial.end()) {
            auto loaded = store.submissions(record.trialId);
            if (!loaded) {
                return loaded.error();
            }
            std::map<std::int64_t, Verdict> verdicts;
            for (SubmissionRecord& submission : *loaded) {
                verdicts[submission.id] = std::move(submission.verdict);
            }
            submissions = theirsByTrial.emplace(record.trialId, std::move(verdicts)).first;
        }
        const auto theirs = submissions->second.find(record.submissionId);
        if (theirs == submissions->second.end()) {
            continue;
        }
        KbxRegradedSubmission submission;
        submission.trial = *liveTrials[record.trialId];
        submission.round.category = categoryOf(submission.trial);
        submission.round.theirsCorrect = theirs->second.correct;
        submission.round.oursCorrect = record.verdict.correct;
        submission.round.theirsSpeedup = correctSpeedup(theirs->second);
        submission.round.oursSpeedup = correctSpeedup(record.verdict);
        submission.submissionIndex = record.submissionIndex;
        submission.theirs = theirs->second;
        submission.ours = record.verdict;
        roundsByBoundary[key.first].push_back(std::move(submission));
    }
    return roundsByBoundary;
}

Result<std::map<std::string, std::vector<analysis::RegradedRound>>>
loadKbxRegradedRounds(Store& store, const std::optional<std::string>& model, const CategoryOf& categoryOf) {
    auto submissions = loadKbxRegradedSubmissions(store, model, categoryOf);
    if (!submissions) {
        return submissions.error();
    }
    std::map<std::string, std::vector<analysis::RegradedRound>> roundsByBoundary;
    for (const auto& [boundary, boundarySubmissions] : *submissions) {
        std::vector<analysis::RegradedRound>& rounds = roundsByBoundary[boundary];
        for (const KbxRegradedSubmission& submission : boundarySubmissions) {
            rounds.push_back(submission.round);
        }
    }
    return roundsByBoundary;
}

Result<std::vector<KbxBoundaryAgreement>> loadKbxAgreement(Store& store, const std::optional<std::string>& model,
                                                           const CategoryOf& categoryOf) {
    auto rounds = loadKbxRegradedRounds(store, model, categoryOf);
    if (!rounds) {
        return rounds.error();
    }
    std::vector<KbxBoundaryAgreement> agreement;
    for (const auto& [boundary, boundaryRounds] : *rounds) {
        agreement.push_back({boundary, analysis::kbxAgreement(boundaryRounds)});
    }
    return agreement;
}

} // namespace mkb::io
