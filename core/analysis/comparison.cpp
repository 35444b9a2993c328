// Assembles transfer cells from trials: which solo is the source, which the base, which attempt carries the skill.
#include "core/analysis/comparison.h"

#include "core/protocol/arms.h"

#include <map>
#include <set>
#include <tuple>

namespace mkb::analysis {

namespace {

constexpr const char* kSoloPrefix = "solo_";
constexpr const char* kSkillSuffix = "_skill";

struct ProblemKey {
    std::string model;
    int problemNumber = 0;
    auto operator<=>(const ProblemKey&) const = default;
};

struct ProblemTrials {
    std::string slug;
    std::string family;
    std::set<int> replicates;
    std::set<std::pair<std::string, std::string>> directions;
    std::map<std::pair<int, std::string>, const TrialRecord*> byReplicateAndArm;
    std::map<std::pair<int, std::string>, std::shared_ptr<const Attempt>> attempts; // built once per trial
};

bool holdsVerdict(const TrialRecord& trial) {
    return trial.status == TrialStatus::Finished || trial.status == TrialStatus::Skipped;
}

} // namespace

std::optional<std::pair<std::string, std::string>> parseSkillArm(const std::string& arm, const std::string& targetDsl) {
    const std::string suffix = kSkillSuffix;
    if (arm.size() <= suffix.size() || arm.compare(arm.size() - suffix.size(), suffix.size(), suffix) != 0) {
        return std::nullopt;
    }
    const std::string pair = arm.substr(0, arm.size() - suffix.size());
    if (!targetDsl.empty() && pair.size() > targetDsl.size() + 1 &&
        pair.compare(pair.size() - targetDsl.size(), targetDsl.size(), targetDsl) == 0 &&
        pair[pair.size() - targetDsl.size() - 1] == '2') {
        return std::make_pair(pair.substr(0, pair.size() - targetDsl.size() - 1), targetDsl);
    }
    // Otherwise the protocol's own parser decides (it refuses ambiguous splits).
    auto parsed = parseArm(arm);
    if (!parsed.ok() || !parsed->isSkill()) {
        return std::nullopt;
    }
    return std::make_pair(parsed->sourceDsl, parsed->dsl);
}

std::vector<Comparison> buildComparisons(const std::vector<TrialRecord>& trials) {
    std::map<ProblemKey, ProblemTrials> problems;
    for (const TrialRecord& trial : trials) {
        ProblemTrials& problem = problems[ProblemKey{trial.model, trial.problemNumber}];
        if (problem.slug.empty()) {
            problem.slug = trial.problemSlug;
        }
        if (problem.family.empty()) {
            problem.family = trial.family;
        }
        problem.replicates.insert(trial.replicate);
        if (auto direction = parseSkillArm(trial.arm, trial.dsl)) {
            problem.directions.insert(*direction);
        }
        if (trial.archived || !holdsVerdict(trial)) {
            continue;
        }
        const TrialRecord*& slot = problem.byReplicateAndArm[{trial.replicate, trial.arm}];
        if (!slot || slot->id < trial.id) {
            slot = &trial;
        }
    }

    std::vector<Comparison> comparisons;
    for (auto& [key, problem] : problems) {
        auto attemptFor = [&problem](int replicate, const std::string& arm) -> std::shared_ptr<const Attempt> {
            auto found = problem.byReplicateAndArm.find({replicate, arm});
            if (found == problem.byReplicateAndArm.end()) {
                return nullptr;
            }
            std::shared_ptr<const Attempt>& attempt = problem.attempts[{replicate, arm}];
            if (!attempt) {
                attempt = std::make_shared<const Attempt>(attemptFromTrial(*found->second));
            }
            return attempt;
        };
        for (const auto& [sourceDsl, targetDsl] : problem.directions) {
            for (int replicate : problem.replicates) {
                Comparison comparison;
                comparison.model = key.model;
                comparison.problemNumber = key.problemNumber;
                comparison.problemSlug = problem.slug;
                comparison.family = problem.family;
                comparison.replicate = replicate;
                comparison.sourceDsl = sourceDsl;
                comparison.targetDsl = targetDsl;
                comparison.direction = sourceDsl + "2" + targetDsl;
                comparison.source = attemptFor(replicate, kSoloPrefix + sourceDsl);
                comparison.base = attemptFor(replicate, kSoloPrefix + targetDsl);
                comparison.skill = attemptFor(replicate, comparison.direction + kSkillSuffix);
                comparisons.push_back(std::move(comparison));
            }
        }
    }
    // problems is ordered by (model, problem) and directions/replicates by value, so comparisons already are sorted.
    return comparisons;
}

std::vector<Comparison> resolvedComparisons(const std::vector<Comparison>& comparisons) {
    std::vector<Comparison> resolved;
    for (const Comparison& comparison : comparisons) {
        if (comparison.resolved()) {
            resolved.push_back(comparison);
        }
    }
    return resolved;
}

} // namespace mkb::analysis
