// The convergent planner (DESIGN §6): given a selection and the live trials, what each trial needs next.
// Pure: it reads plain records and returns a plain plan; it never touches the store or the grader.
#pragma once

#include "core/records/problem.h"
#include "core/records/trial.h"
#include "core/util/result.h"
#include "core/vocabulary/arms.h"
#include "core/vocabulary/boundary.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mkb {

enum class PlanStatus {
    Run,   // no record: run it
    Rerun, // the record holds an infrastructure error, was interrupted, or is still "running" after a crash
    Reuse, // the record is valid and current: keep it
    Stale, // the record is valid but out of date; kept as is unless stale trials are redone (--rerun-stale)
    Redo,  // a stale record under --rerun-stale: archive it, then run
    Skip,  // skill arm whose finished source wrote no skill: record it as skipped (counts as its base)
};
inline constexpr std::array<PlanStatus, 6> kAllPlanStatuses = {PlanStatus::Run,   PlanStatus::Rerun, PlanStatus::Reuse,
                                                               PlanStatus::Stale, PlanStatus::Redo,  PlanStatus::Skip};

/// "run", "rerun", "reuse", "stale", "redo", "skip".
const char* toString(PlanStatus status);
/// True for the statuses that start an attempt: run, rerun, redo.
bool startsAttempt(PlanStatus status);

struct PlanRequest {
    std::string model;             // the model's name in the store
    std::vector<Problem> problems; // the selection; each carries its fingerprint
    std::string dslA;              // the DSL pair; both directions are planned
    std::string dslB;
    int replicates = 1;
    std::string graderFingerprint; // empty = unknown: records are then not judged stale by grader
    // The implementation boundary the run grades under ("mkb" or "strict"): a record graded under another one
    // (legacy included) is stale. Empty = records are not judged by boundary.
    std::string boundary{kBoundaryMkb};
    bool rerunStale = false; // turn stale trials into redo entries
};

/// What the planner needs to know beyond the records themselves.
struct PlanContext {
    /// SHA-256 of the SKILL.md each trial wrote, by trial id. A trial that wrote no skill (or an empty one) is absent.
    std::map<std::int64_t, std::string> skillSha256ByTrial;
};

/// The SHA-256 a skill arm records as sourceSkillSha256: sha256Hex of the SKILL.md as written, or "" when the source
/// wrote none or a blank one (which counts as no skill: the skill arm is skipped).
std::string skillSha256(const std::optional<std::string>& skillText);

/// The context derived from the trials' own skill texts, through skillSha256.
PlanContext contextFromTrials(const std::vector<TrialRecord>& trials);

struct PlanEntry {
    Coordinate coordinate;
    std::string coordinateText; // "p07_r1_solo_triton"
    std::string problemName;    // "attention/07_paged_gqa_decode"
    std::string problemSuite;
    std::string problemFingerprint; // the current fingerprint, to be recorded with the attempt
    PlanStatus status = PlanStatus::Run;
    std::string reason;                      // one line: why this status
    std::optional<std::int64_t> liveTrialId; // the record this entry reuses, reruns, archives or marks skipped
    std::optional<std::size_t> sourceEntry;  // skill arms: index in Plan::entries of the source solo
    bool waitsForSource = false;             // dependency edge: the source solo (re)runs first
    /// Skill arms whose source is not going to run: the SHA-256 of the skill they would be given ("" = no skill).
    /// When waitsForSource is true, it is only known once the source has finished.
    std::string sourceSkillSha256;
};

struct Plan {
    std::vector<PlanEntry> entries; // all solos first, then skill arms; each by problem, replicate, arm
    std::map<PlanStatus, int> counts;

    int count(PlanStatus status) const;
    /// Dependency edges (waiting entry, entry waited for), as indices into entries.
    std::vector<std::pair<std::size_t, std::size_t>> dependencies() const;
    const PlanEntry* find(const std::string& coordinateText) const;
    /// True when nothing is left to do: every entry is reuse (stale entries remain to be redone explicitly).
    bool converged() const;
};

/// The error names the field and what to do: empty model, bad or equal DSL ids, replicates < 1, no problems.
Status validatePlanRequest(const PlanRequest& request);

/// Plans every trial of the request. liveTrials may hold any records: only the request's model, not archived, count.
/// Call validatePlanRequest first; an invalid request yields a plan of what can be made of it.
Plan makePlan(const PlanRequest& request, const std::vector<TrialRecord>& liveTrials, const PlanContext& context);

/// The DSL pairs a list of DSLs is planned as: every unordered pair once, in list order ((a,b), (a,c), (b,c) for
/// a,b,c), each with both directions, so n DSLs give n(n-1) directions that share one solo per DSL and problem.
std::vector<std::pair<std::string, std::string>> dslPairsOf(const std::vector<std::string>& dsls);

/// makePlan over every pair of `dsls` (the request's dslA and dslB are set per pair), merged into one plan: a
/// coordinate appears once (a solo serves as source and base for every pair it belongs to), solos first and then
/// skill arms, each by problem and replicate, counts recomputed. For two DSLs it is makePlan's plan.
Plan makePlanForDsls(PlanRequest request, const std::vector<std::string>& dsls,
                     const std::vector<TrialRecord>& liveTrials, const PlanContext& context);

} // namespace mkb
