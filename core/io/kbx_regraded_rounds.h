// Our regradings of a corpus's rounds beside the rounds' own verdicts (mkb regrade): each submission's newest
// regrading per boundary, the regraded rounds per boundary, and analysis::kbxAgreement over them.
#pragma once

#include "core/analysis/kbx_agreement.h"
#include "core/io/kbx_categories.h"
#include "core/records/regrading.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mkb::io {

/// The newest regrading (ids grow with time) of each submission under each boundary, keyed by (boundary, submission
/// id), of the trials keep accepts.
std::map<std::pair<std::string, std::int64_t>, RegradingRecord>
newestRegradings(std::vector<RegradingRecord> regradings, const std::function<bool(std::int64_t trialId)>& keep);

/// One regraded submission: the round analysis::kbxAgreement reads, with the trial, both verdicts whole and the
/// submission's index in its trial, for the rows that name it.
struct KbxRegradedSubmission {
    analysis::RegradedRound round;
    TrialRecord trial;
    int submissionIndex = 0;
    Verdict theirs;
    Verdict ours;
};

/// What the kbx-agreement report rests on: for each boundary regraded under, every regraded submission of the live
/// trials (model, when given) with its category, their verdict and ours, in submission-id order.
Result<std::map<std::string, std::vector<KbxRegradedSubmission>>>
loadKbxRegradedSubmissions(Store& store, const std::optional<std::string>& model, const CategoryOf& categoryOf);

/// loadKbxRegradedSubmissions' rounds alone.
Result<std::map<std::string, std::vector<analysis::RegradedRound>>>
loadKbxRegradedRounds(Store& store, const std::optional<std::string>& model, const CategoryOf& categoryOf);

/// analysis::kbxAgreement of one boundary's rounds.
struct KbxBoundaryAgreement {
    std::string boundary; // "mkb", "strict"
    std::vector<analysis::AgreementGroup> groups;
};

/// kbxAgreement per boundary over loadKbxRegradedRounds, boundaries by name; empty without regradings.
Result<std::vector<KbxBoundaryAgreement>> loadKbxAgreement(Store& store, const std::optional<std::string>& model,
                                                           const CategoryOf& categoryOf);

} // namespace mkb::io
