// Assembles transfer cells from trials: which solo is the source, which the base, which attempt carries the skill.
#include "core/analysis/comparison.h"

#include "core/vocabulary/arms.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace mkb::analysis {

namespace {

constexpr const char* kSoloPrefix = "solo_";
constexpr const char* kSkillSuffix = "_skill";

/// (model, problem number) as views into the trials: hashed while reading, so no key is copied per trial.
struct ProblemKey {
    std::string_view model;
    int problemNumber = 0;
    bool operator==(const ProblemKey&) const = default;
};

struct ProblemKeyHash {
    std::size_t operator()(const ProblemKey& key) const {
        return std::hash<std::string_view>{}(key.model) * 31u + static_cast<std::size_t>(key.problemNumber);
    }
};

/// One arm name seen among a problem's trials, and the DSL of the trial that introduced it.
struct ArmSeen {
    std::string name;
    std::string dsl;
};

/// The trials of one (model, problem). Arms are interned per problem (a handful), so a slot is two small integers.
struct ProblemTrials {
    std::string model;
    int problemNumber = 0;
    std::string slug;
    std::string family;
    std::string category;
    std::vector<ArmSeen> arms;
    std::vector<int> replicates; // sorted and made unique before use
    std::set<std::pair<std::string, std::string>> directions;
    std::unordered_map<std::uint64_t, std::size_t> trialAt; // (replicate, arm index) -> index of the filling trial
};

std::uint64_t slotKey(int replicate, std::size_t armIndex) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(replicate)) << 32) | armIndex;
}

/// What the builder reads of one trial, whether it comes as a TrialRecord or as an Attempt: pointers into the caller's
/// data, so viewing a trial copies nothing.
struct TrialKey {
    std::int64_t id = 0;
    const std::string* model = nullptr;
    int problemNumber = 0;
    const std::string* slug = nullptr;
    const std::string* family = nullptr;
    const std::string* category = nullptr;
    int replicate = 1;
    const std::string* arm = nullptr;
    const std::string* dsl = nullptr;
    bool fillsArm = false; // live and holding a verdict (Finished or Skipped)
    // The boundary its arm is graded under (Comparison::armsShareBoundary's), null when it has none; only set where
    // the attempt is at hand (keyOf(const Attempt&)).
    const std::string* boundary = nullptr;
};

TrialKey keyOf(const TrialRecord& trial) {
    return TrialKey{trial.id,        &trial.model,    trial.problemNumber, &trial.problemSlug, &trial.family,
                    &trial.category, trial.replicate, &trial.arm,          &trial.dsl,         fillsArm(trial)};
}

/// attemptsFromTrials keeps exactly the trials that fill an arm.
TrialKey keyOf(const Attempt& attempt) {
    return TrialKey{attempt.trialId,
                    &attempt.model,
                    attempt.problemNumber,
                    &attempt.problemSlug,
                    &attempt.family,
                    &attempt.category,
                    attempt.replicate,
                    &attempt.arm,
                    &attempt.dsl,
                    true,
                    !attempt.skipped && !attempt.boundary.empty() ? &attempt.boundary : nullptr};
}

/// Boundaries interned as small numbers while the trials are read in order, so that a comparison's boundary check
/// reads no attempt: its three arms lie far apart in a vector of large records, and reading them once per comparison
/// cost the 100,000-trial load about 8 ms of cache misses.
class BoundaryIds {
public:
    static constexpr int kNone = -1;
    int of(const std::string* boundary) {
        if (!boundary) {
            return kNone;
        }
        for (std::size_t i = 0; i < seen_.size(); ++i) {
            if (seen_[i] == *boundary) {
                return static_cast<int>(i);
            }
        }
        seen_.push_back(*boundary);
        return static_cast<int>(seen_.size() - 1);
    }

private:
    std::vector<std::string> seen_; // a handful: "legacy", "mkb", "strict"
};

/// Comparison::armsShareBoundary over interned boundaries: every arm that has one has the same.
bool idsShareBoundary(std::initializer_list<int> ids) {
    int first = BoundaryIds::kNone;
    for (int id : ids) {
        if (id == BoundaryIds::kNone) {
            continue;
        }
        if (first == BoundaryIds::kNone) {
            first = id;
        } else if (id != first) {
            return false;
        }
    }
    return true;
}

/// The index of the trial's arm in problem.arms; a new arm (or a known arm written in another DSL) is parsed for the
/// direction it names once.
std::size_t internArm(ProblemTrials& problem, const TrialKey& trial) {
    for (std::size_t i = 0; i < problem.arms.size(); ++i) {
        if (problem.arms[i].name == *trial.arm) {
            if (problem.arms[i].dsl != *trial.dsl) {
                if (auto direction = parseSkillArm(*trial.arm, *trial.dsl)) {
                    problem.directions.insert(*direction);
                }
            }
            return i;
        }
    }
    if (auto direction = parseSkillArm(*trial.arm, *trial.dsl)) {
        problem.directions.insert(*direction);
    }
    problem.arms.push_back(ArmSeen{*trial.arm, *trial.dsl});
    return problem.arms.size() - 1;
}

std::optional<std::size_t> findArm(const ProblemTrials& problem, const std::string& name) {
    for (std::size_t i = 0; i < problem.arms.size(); ++i) {
        if (problem.arms[i].name == name) {
            return i;
        }
    }
    return std::nullopt;
}

/// The cells of buildComparisons over count trials: keyAt(i) views trial i, attemptOf(i) gives its shared attempt
/// (asked once per filled slot). With keyedBoundaries, each key's boundary is its attempt's and the boundary check is
/// taken from the keys; otherwise from the arms (Comparison::noteBoundaryCheck).
template <typename KeyAt, typename AttemptOf>
std::vector<Comparison> assembleComparisons(std::size_t count, const KeyAt& keyAt, const AttemptOf& attemptOf,
                                            bool keyedBoundaries = false) {
    std::vector<ProblemTrials> problems;
    std::unordered_map<ProblemKey, std::size_t, ProblemKeyHash> problemAt; // index into problems
    ProblemTrials* current = nullptr; // trials usually come in runs of one problem: skip the map lookup then
    TrialKey currentTrial;
    std::vector<std::int64_t> idOf(count, 0);
    BoundaryIds boundaryIds;
    std::vector<int> boundaryIdOf(keyedBoundaries ? count : 0, BoundaryIds::kNone);
    for (std::size_t index = 0; index < count; ++index) {
        const TrialKey trial = keyAt(index);
        idOf[index] = trial.id;
        if (keyedBoundaries) {
            boundaryIdOf[index] = boundaryIds.of(trial.boundary);
        }
        if (!current || currentTrial.problemNumber != trial.problemNumber || *currentTrial.model != *trial.model) {
            auto [found, inserted] =
                problemAt.try_emplace(ProblemKey{*trial.model, trial.problemNumber}, problems.size());
            if (inserted) {
                ProblemTrials& added = problems.emplace_back();
                added.model = *trial.model;
                added.problemNumber = trial.problemNumber;
            }
            current = &problems[found->second]; // an emplace_back above may move problems: always re-pointed here
        }
        currentTrial = trial;
        ProblemTrials& problem = *current;
        if (problem.slug.empty()) {
            problem.slug = *trial.slug;
        }
        if (problem.family.empty()) {
            problem.family = *trial.family;
        }
        if (problem.category.empty()) {
            problem.category = *trial.category;
        }
        if (problem.replicates.empty() || problem.replicates.back() != trial.replicate) {
            problem.replicates.push_back(trial.replicate);
        }
        const std::size_t arm = internArm(problem, trial);
        if (!trial.fillsArm) {
            continue;
        }
        auto [slot, inserted] = problem.trialAt.try_emplace(slotKey(trial.replicate, arm), index);
        if (!inserted && idOf[slot->second] < trial.id) {
            slot->second = index;
        }
    }

    // Comparisons come sorted by model, problem, direction, replicate: problems are visited in (model, problem) order,
    // and directions and replicates are kept sorted.
    std::vector<std::size_t> problemOrder(problems.size());
    std::size_t comparisonCount = 0;
    for (std::size_t i = 0; i < problems.size(); ++i) {
        problemOrder[i] = i;
        ProblemTrials& problem = problems[i];
        std::sort(problem.replicates.begin(), problem.replicates.end());
        problem.replicates.erase(std::unique(problem.replicates.begin(), problem.replicates.end()),
                                 problem.replicates.end());
        comparisonCount += problem.directions.size() * problem.replicates.size();
    }
    std::sort(problemOrder.begin(), problemOrder.end(), [&](std::size_t left, std::size_t right) {
        const ProblemTrials& a = problems[left];
        const ProblemTrials& b = problems[right];
        return std::tie(a.model, a.problemNumber) < std::tie(b.model, b.problemNumber);
    });
    std::vector<Comparison> comparisons;
    comparisons.reserve(comparisonCount);
    std::vector<std::shared_ptr<const Attempt>> attempts(count); // one shared attempt per filling trial
    for (std::size_t problemIndex : problemOrder) {
        ProblemTrials& problem = problems[problemIndex];
        int boundaryId = BoundaryIds::kNone; // the keyed boundary of the arm attemptFor last returned
        auto attemptFor = [&](int replicate, std::optional<std::size_t> arm) -> std::shared_ptr<const Attempt> {
            boundaryId = BoundaryIds::kNone;
            if (!arm) {
                return nullptr;
            }
            auto found = problem.trialAt.find(slotKey(replicate, *arm));
            if (found == problem.trialAt.end()) {
                return nullptr;
            }
            std::shared_ptr<const Attempt>& attempt = attempts[found->second];
            if (!attempt) {
                attempt = attemptOf(found->second);
            }
            if (keyedBoundaries && attempt) {
                boundaryId = boundaryIdOf[found->second];
            }
            return attempt;
        };
        for (const auto& [sourceDsl, targetDsl] : problem.directions) {
            const std::string direction = sourceDsl + "2" + targetDsl;
            const std::optional<std::size_t> sourceArm = findArm(problem, kSoloPrefix + sourceDsl);
            const std::optional<std::size_t> baseArm = findArm(problem, kSoloPrefix + targetDsl);
            const std::optional<std::size_t> skillArm = findArm(problem, direction + kSkillSuffix);
            for (int replicate : problem.replicates) {
                Comparison& comparison = comparisons.emplace_back();
                comparison.model = problem.model;
                comparison.problemNumber = problem.problemNumber;
                comparison.problemSlug = problem.slug;
                comparison.family = problem.family;
                comparison.category = problem.category;
                comparison.replicate = replicate;
                comparison.sourceDsl = sourceDsl;
                comparison.targetDsl = targetDsl;
                comparison.direction = direction;
                comparison.source = attemptFor(replicate, sourceArm);
                const int sourceBoundary = boundaryId;
                comparison.base = attemptFor(replicate, baseArm);
                const int baseBoundary = boundaryId;
                comparison.skill = attemptFor(replicate, skillArm);
                if (keyedBoundaries) {
                    comparison.boundaryCheck = Comparison::BoundaryCheck{
                        comparison.source.get(), comparison.base.get(), comparison.skill.get(),
                        idsShareBoundary({sourceBoundary, baseBoundary, boundaryId})};
                } else {
                    comparison.noteBoundaryCheck();
                }
            }
        }
    }
    return comparisons;
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
    return assembleComparisons(
        trials.size(), [&trials](std::size_t index) { return keyOf(trials[index]); },
        [&trials](std::size_t index) { return std::make_shared<const Attempt>(attemptFromTrial(trials[index])); });
}

std::vector<Comparison> buildComparisons(const std::vector<TrialRecord>& trials,
                                         const std::shared_ptr<const std::vector<Attempt>>& attempts) {
    // attempts pair up with the trials that hold a verdict, in order; anything else is not what attemptsFromTrials
    // made of these trials, and the attempts are built afresh instead.
    std::vector<std::size_t> attemptOfTrial(trials.size(), 0);
    std::size_t next = 0;
    bool paired = attempts != nullptr;
    for (std::size_t index = 0; paired && index < trials.size(); ++index) {
        const TrialRecord& trial = trials[index];
        if (!fillsArm(trial)) {
            continue;
        }
        paired = next < attempts->size() && (*attempts)[next].trialId == trial.id;
        attemptOfTrial[index] = next++;
    }
    if (!paired || next != attempts->size()) {
        return buildComparisons(trials);
    }
    return assembleComparisons(
        trials.size(), [&trials](std::size_t index) { return keyOf(trials[index]); },
        [&](std::size_t index) {
            // Aliasing: the comparison shares ownership of the whole vector and points at one of its attempts.
            return std::shared_ptr<const Attempt>(attempts, &(*attempts)[attemptOfTrial[index]]);
        });
}

std::vector<Comparison> buildComparisons(const std::shared_ptr<const std::vector<Attempt>>& attempts,
                                         const std::vector<TrialRecord>& armless) {
    static const std::vector<Attempt> none;
    const std::vector<Attempt>& filled = attempts ? *attempts : none;
    // Both lists ascend by trial id; merged, they are the selection's trials in id order.
    std::vector<std::size_t> order; // below filled.size(): an attempt; else armless[entry - filled.size()]
    order.reserve(filled.size() + armless.size());
    std::size_t nextAttempt = 0;
    std::size_t nextArmless = 0;
    while (nextAttempt < filled.size() || nextArmless < armless.size()) {
        const bool takeAttempt = nextArmless == armless.size() ||
                                 (nextAttempt < filled.size() && filled[nextAttempt].trialId < armless[nextArmless].id);
        order.push_back(takeAttempt ? nextAttempt++ : filled.size() + nextArmless++);
    }
    return assembleComparisons(
        order.size(),
        [&](std::size_t index) {
            const std::size_t entry = order[index];
            return entry < filled.size() ? keyOf(filled[entry]) : keyOf(armless[entry - filled.size()]);
        },
        [&](std::size_t index) -> std::shared_ptr<const Attempt> {
            const std::size_t entry = order[index];
            if (entry >= filled.size()) {
                return nullptr; // not reached: an armless trial fills no slot
            }
            return std::shared_ptr<const Attempt>(attempts, &filled[entry]);
        },
        /*keyedBoundaries=*/true);
}

// The boundary of an arm that holds a verdict, else null; a skipped skill arm was never graded and has none of its
// own. Nothing here allocates or copies a shared pointer (see Comparison::boundaryCheck).
static const std::string* armBoundary(const std::shared_ptr<const Attempt>& arm) {
    return arm && !arm->skipped && !arm->boundary.empty() ? &arm->boundary : nullptr;
}

// The first arm boundary in source, base, skill order; null when no arm holds one.
static const std::string* firstArmBoundary(const Comparison& comparison) {
    for (const std::shared_ptr<const Attempt>* arm : {&comparison.source, &comparison.base, &comparison.skill}) {
        if (const std::string* boundary = armBoundary(*arm)) {
            return boundary;
        }
    }
    return nullptr;
}

bool Comparison::armsShareBoundary() const {
    const std::string* first = firstArmBoundary(*this);
    if (!first) {
        return true;
    }
    for (const std::shared_ptr<const Attempt>* arm : {&source, &base, &skill}) {
        if (const std::string* boundary = armBoundary(*arm); boundary && *boundary != *first) {
            return false;
        }
    }
    return true;
}

void Comparison::noteBoundaryCheck() {
    boundaryCheck = BoundaryCheck{source.get(), base.get(), skill.get(), armsShareBoundary()};
}

std::string Comparison::boundary() const {
    const std::string* first = firstArmBoundary(*this);
    return first && sameBoundary() ? *first : std::string();
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

namespace mkb::analysis {

namespace {

std::optional<PairedTiming> timingOf(const RetimingResult& result, const std::string& a, const std::string& b) {
    std::optional<RetimedPair> pair = result.pair(a, b);
    if (!pair || !(pair->ratio > 0) || !(pair->ciLow > 0) || !(pair->ciHigh > 0)) {
        return std::nullopt;
    }
    return PairedTiming{pair->ratio, pair->ciLow, pair->ciHigh, pair->n};
}

/// The record names this trial for an arm: it must be the arm's live trial. An arm the record did not time matches.
bool sameTrial(const std::optional<std::int64_t>& recorded, const std::shared_ptr<const Attempt>& arm) {
    return !recorded || (arm && arm->trialId == *recorded);
}

} // namespace

CellRetiming cellRetiming(const RetimingRecord& record) {
    CellRetiming retiming;
    retiming.recordId = record.id;
    retiming.deviceName = record.result.deviceName;
    retiming.rounds = record.result.rounds;
    retiming.skillOverBase = timingOf(record.result, "base", "skill");
    retiming.sourceOverBase = timingOf(record.result, "base", "source");
    retiming.baseOverEager = timingOf(record.result, "eager", "base");
    retiming.skillOverEager = timingOf(record.result, "eager", "skill");
    retiming.sourceOverEager = timingOf(record.result, "eager", "source");
    return retiming;
}

RetimingAttachment attachRetimings(std::vector<Comparison>& comparisons, const std::vector<RetimingRecord>& records) {
    if (records.empty()) {
        return {}; // a store without re-timings: no index over its (perhaps 100,000) cells
    }
    using Key = std::tuple<std::string_view, int, int, std::string_view, std::string_view>;
    std::map<Key, Comparison*> byCell;
    for (Comparison& comparison : comparisons) {
        byCell[{comparison.model, comparison.problemNumber, comparison.replicate, comparison.sourceDsl,
                comparison.targetDsl}] = &comparison;
    }
    RetimingAttachment attachment;
    std::map<Comparison*, const RetimingRecord*> chosen; // the newest usable record per cell
    for (const RetimingRecord& record : records) {
        if (record.archived || !record.result.ok) {
            continue;
        }
        auto found =
            byCell.find({record.model, record.problemNumber, record.replicate, record.sourceDsl, record.targetDsl});
        if (found == byCell.end()) {
            ++attachment.unmatched;
            continue;
        }
        const Comparison& comparison = *found->second;
        const bool namesTrials = record.sourceTrialId || record.baseTrialId || record.skillTrialId;
        if (!namesTrials || !sameTrial(record.sourceTrialId, comparison.source) ||
            !sameTrial(record.baseTrialId, comparison.base) || !sameTrial(record.skillTrialId, comparison.skill)) {
            ++attachment.stale;
            continue;
        }
        const RetimingRecord*& slot = chosen[found->second];
        if (slot) {
            ++attachment.stale; // an older live record of the same cell: superseded
            if (slot->id > record.id) {
                continue;
            }
        }
        slot = &record;
    }
    for (const auto& [comparison, record] : chosen) {
        comparison->retiming = std::make_shared<const CellRetiming>(cellRetiming(*record));
        ++attachment.attached;
    }
    return attachment;
}

ComparisonView viewOf(const std::vector<Comparison>& comparisons) {
    ComparisonView view;
    view.reserve(comparisons.size());
    for (const Comparison& comparison : comparisons) {
        view.push_back(&comparison);
    }
    return view;
}

} // namespace mkb::analysis
