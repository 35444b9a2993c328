// Cells of the transfer protocol (DESIGN §6): source, base and skill attempts of one (model, problem, direction,
// replicate), and the builder that assembles them from store trials.
#pragma once

#include "core/analysis/attempt.h"
#include "core/records/retiming.h"
#include "core/records/trial.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// One paired ratio of a re-timing (DESIGN §5.5): the second kernel's speedup over the first, with its 95% CI.
struct PairedTiming {
    double ratio = 1;
    double ciLow = 1;
    double ciHigh = 1;
    int n = 0; // rounds
    /// The CI contains 1: the re-timing cannot tell the two kernels apart.
    bool withinNoise() const { return ciLow <= 1 && ciHigh >= 1; }
};

/// The paired re-timing attached to a cell: the ratios the outcome rule and the standing read. A pair is absent when
/// the re-timing did not time both of its kernels.
struct CellRetiming {
    std::int64_t recordId = 0;
    std::string deviceName;
    int rounds = 0;
    std::optional<PairedTiming> skillOverBase;   // time(base) / time(skill): r of DESIGN §8
    std::optional<PairedTiming> sourceOverBase;  // time(base) / time(source): the source standing
    std::optional<PairedTiming> baseOverEager;   // time(eager) / time(base)
    std::optional<PairedTiming> skillOverEager;  // time(eager) / time(skill)
    std::optional<PairedTiming> sourceOverEager; // time(eager) / time(source)
};

struct Comparison {
    std::string model;
    int problemNumber = 0;
    std::string problemSlug;
    std::string family;
    std::string category; // KernelBench-X category of the problem ("" = uncategorised)
    int replicate = 1;
    std::string sourceDsl;
    std::string targetDsl;
    std::string direction; // "<source>2<target>"

    // Shared, immutable attempts: a solo serves as source in one direction and as base in the other, and copies of a
    // comparison (groupings, filters) stay cheap. Null when the arm holds no verdict.
    std::shared_ptr<const Attempt> source; // solo_<source>
    std::shared_ptr<const Attempt> base;   // solo_<target>
    std::shared_ptr<const Attempt> skill;  // <source>2<target>_skill

    /// The cell's live paired re-timing, when one matches its current trials (attachRetimings); null otherwise.
    std::shared_ptr<const CellRetiming> retiming;

    /// sameBoundary()'s answer for the arms it was taken on, noted by buildComparisons. The metrics ask resolved()
    /// of every comparison many times, and reading three attempts far apart in memory each time cost the overview of
    /// 100,000 trials about 0.2 s; arms set afterwards (or by hand) no longer match it and are checked afresh.
    struct BoundaryCheck {
        const Attempt* source = nullptr;
        const Attempt* base = nullptr;
        const Attempt* skill = nullptr;
        bool same = true; // true for no arms at all, as the check itself finds
    };
    BoundaryCheck boundaryCheck;
    /// Notes sameBoundary()'s answer for the current arms in boundaryCheck.
    void noteBoundaryCheck();

    /// All three arms hold a verdict (Finished or Skipped), whatever boundary each was graded under.
    bool armsFilled() const { return source && base && skill; }
    /// The arms that hold a verdict were graded under one implementation boundary (a skipped skill arm has none).
    bool sameBoundary() const {
        return boundaryCheck.source == source.get() && boundaryCheck.base == base.get() &&
                       boundaryCheck.skill == skill.get()
                   ? boundaryCheck.same
                   : armsShareBoundary();
    }
    /// All three arms hold a verdict graded under one boundary: the comparison can be judged.
    bool resolved() const { return armsFilled() && sameBoundary(); }
    /// All three arms hold a verdict, but under different boundaries: never paired, "not comparable", and counted.
    bool notComparable() const { return armsFilled() && !sameBoundary(); }
    /// The one boundary of the arms' verdicts; "" when none holds one or they differ.
    std::string boundary() const;
    /// sameBoundary() read from the arms themselves.
    bool armsShareBoundary() const;
    /// The skill arm was skipped because its source wrote no skill.
    bool skillSkipped() const { return skill && skill->skipped; }
    /// The source handed over a skill, i.e. the skill arm ran (MetaKernelBench's "skill present").
    bool sourceWroteSkill() const { return skill && !skill->skipped; }
    /// What the skill arm contributes to every contrast: the base when the skill arm was skipped.
    /// Only call on a resolved comparison.
    const Attempt& skillOutcome() const { return skillSkipped() ? *base : *skill; }
};

/// Comparisons picked out of a larger vector (a group, a filter) without copying them.
using ComparisonView = std::vector<const Comparison*>;

/// All of `comparisons`, as a view (pointers into the vector, in its order).
ComparisonView viewOf(const std::vector<Comparison>& comparisons);

/// Parses "<a>2<b>_skill" into {a, b}; targetDsl (the trial's dsl) settles DSL ids that contain a '2'; without it, or
/// when it does not fit, mkb::parseArm decides. nullopt when the arm is not a valid skill arm.
std::optional<std::pair<std::string, std::string>> parseSkillArm(const std::string& arm,
                                                                 const std::string& targetDsl = "");

/// One comparison per (model, problem, direction, replicate) where the direction is known from some skill-arm trial of
/// that model and problem and the replicate from any of its trials. Archived trials and trials without a verdict
/// (running, infrastructure error, interrupted) fill no arm, so their cells stay unresolved. When one coordinate has
/// several live trials, the one with the highest id wins. Sorted by model, problem, direction, replicate.
std::vector<Comparison> buildComparisons(const std::vector<TrialRecord>& trials);

/// The same comparisons with their arms taken from attempts, which must be attemptsFromTrials(trials, ...) of these
/// trials (submissions attached or not), instead of building every attempt a second time. The comparisons share
/// ownership of the vector. Attempts that do not pair up with the trials are ignored and the arms built afresh.
std::vector<Comparison> buildComparisons(const std::vector<TrialRecord>& trials,
                                         const std::shared_ptr<const std::vector<Attempt>>& attempts);

/// The same comparisons for a caller that never held the trials together (mkb report reads them row by row): attempts
/// are attemptsFromTrials of the selection, and armless holds the selection's other trials (archived, or running,
/// errored or interrupted), both in ascending trial id. For trials in id order the result equals
/// buildComparisons(trials). The comparisons share ownership of attempts.
std::vector<Comparison> buildComparisons(const std::shared_ptr<const std::vector<Attempt>>& attempts,
                                         const std::vector<TrialRecord>& armless);

/// What attachRetimings did: comparisons that received a re-timing, and records not used because a trial they timed
/// is no longer the cell's live trial (stale), or because they match no comparison of the selection.
struct RetimingAttachment {
    std::size_t attached = 0;
    std::size_t stale = 0;
    std::size_t unmatched = 0;
};

/// The CellRetiming of one record (its pairs looked up by label "source", "base", "skill", "eager").
CellRetiming cellRetiming(const RetimingRecord& record);

/// Attaches to each comparison the newest live, successful re-timing of its cell: same model, problem, replicate and
/// direction, and every trial id the record names equal to the trial in that arm now (a record naming a trial that
/// was since redone is stale and not used). Archived and failed records are skipped.
RetimingAttachment attachRetimings(std::vector<Comparison>& comparisons, const std::vector<RetimingRecord>& records);

/// The resolved comparisons, in order.
std::vector<Comparison> resolvedComparisons(const std::vector<Comparison>& comparisons);

} // namespace mkb::analysis
