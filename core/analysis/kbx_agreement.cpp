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

std::string kbxDisagreementRule(bool theirsCorrect, const OurFailure& ours) {
    if (theirsCorrect == ours.correct) {
        return "";
    }
    if (ours.correct) {
        return "their failure: KernelBench-X's execution stage failed where ours passes";
    }
    const std::string& rule = ours.complianceRule;
    if (rule == "no_launch" || rule == "no_kernel" || rule == "launch_unused") {
        return "launch rule: KernelBench-X accepts a round that launches no kernel of the DSL";
    }
    if (rule == "eager_compute") {
        return "boundary: KernelBench-X allows torch compute in the wrapper; strict does not (eager_compute)";
    }
    if (!rule.empty()) {
        return "compliance: KernelBench-X has no " + rule + " rule";
    }
    const auto has = [&](const char* text) { return ours.error.find(text) != std::string::npos; };
    if (ours.timedOut) {
        return "time limit: the round ran past our grading limit";
    }
    if (has("does not parse")) {
        return "published code: the corpus's code does not parse, so KernelBench-X ran a text it did not publish";
    }
    if (has("in place; inputs must be left unchanged")) {
        return "in-place semantics: the round writes an input the task does not declare as an output";
    }
    if (has("float64 anchor") || ours.error.rfind("incorrect:", 0) == 0) {
        return "numerics: KernelBench-X's tolerance is looser than our float64-anchor allowance";
    }
    if (ours.error.rfind("solve raised", 0) == 0) {
        return "inputs: the round raises on our draws (scaled sizes, seeded values) or device, where it ran on "
               "KernelBench-X's test inputs";
    }
    return "other: " + ours.error.substr(0, 80);
}

} // namespace mkb::analysis
