// Per-category agreement between our verdicts and KernelBench-X's on the same rounds, with bootstrap intervals.
#include "core/analysis/kbx_agreement.h"

#include <cmath>
#include <map>

namespace mkb::analysis {
namespace {

AgreementGroup groupOf(const std::string& category, const std::vector<const RegradedRound*>& rounds) {
    AgreementGroup group;
    group.category = category;
    group.rounds = rounds.size();
    std::vector<std::vector<double>> indicators; // agree, theirs correct, ours correct
    std::vector<double> ratios;
    for (const RegradedRound* round : rounds) {
        group.theirsCorrect += round->theirsCorrect;
        group.oursCorrect += round->oursCorrect;
        if (round->theirsCorrect && round->oursCorrect) {
            ++group.bothCorrect;
            if (round->theirsSpeedup && round->oursSpeedup && *round->theirsSpeedup > 0 && *round->oursSpeedup > 0) {
                ratios.push_back(*round->oursSpeedup / *round->theirsSpeedup);
            }
        } else if (round->theirsCorrect) {
            ++group.onlyTheirs;
        } else if (round->oursCorrect) {
            ++group.onlyOurs;
        } else {
            ++group.neither;
        }
        const bool agree = round->theirsCorrect == round->oursCorrect;
        indicators.push_back({agree ? 1.0 : 0.0, round->theirsCorrect ? 1.0 : 0.0, round->oursCorrect ? 1.0 : 0.0});
    }
    if (group.rounds > 0) {
        const double count = static_cast<double>(group.rounds);
        const std::vector<std::optional<Interval>> intervals = meanBootstrapCis(indicators, 3);
        group.agreement = double(group.bothCorrect + group.neither) / count;
        group.agreementInterval = intervals[0];
        group.theirsCorrectShare = double(group.theirsCorrect) / count;
        group.theirsCorrectInterval = intervals[1];
        group.oursCorrectShare = double(group.oursCorrect) / count;
        group.oursCorrectInterval = intervals[2];
    }
    group.speedupPairs = ratios.size();
    group.speedupRatioGeometricMean = geometricMean(ratios);
    if (ratios.size() >= 2) {
        group.speedupRatioInterval = geometricMeanBootstrapCi(ratios);
    }
    return group;
}

} // namespace

std::vector<AgreementGroup> kbxAgreement(const std::vector<RegradedRound>& rounds) {
    std::vector<const RegradedRound*> all;
    std::map<std::string, std::vector<const RegradedRound*>> byCategory;
    for (const RegradedRound& round : rounds) {
        all.push_back(&round);
        byCategory[round.category.empty() ? std::string("uncategorised") : round.category].push_back(&round);
    }
    std::vector<AgreementGroup> groups{groupOf("", all)};
    for (const auto& [category, members] : byCategory) {
        groups.push_back(groupOf(category, members));
    }
    return groups;
}

} // namespace mkb::analysis
