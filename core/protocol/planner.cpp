// Deciding run / rerun / reuse / stale / redo / skip for each trial of a selection, solos before skill arms.
#include "core/protocol/planner.h"

#include "core/util/sha256.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace mkb {
namespace {

std::string shortHash(const std::string& hash) {
    return hash.empty() ? "none" : hash.substr(0, 12);
}

/// Why a record must be attempted again whatever else holds, or "" when it is a valid record.
std::string rerunReason(const TrialRecord& record) {
    switch (record.status) {
    case TrialStatus::Running:
        return "still 'running' from an invocation that ended without finishing it";
    case TrialStatus::Interrupted:
        return "interrupted";
    case TrialStatus::InfrastructureError:
        return "infrastructure error" + (record.error.empty() ? std::string() : ": " + record.error);
    case TrialStatus::Finished:
        if (!record.finalVerdict) {
            return "finished without a final verdict";
        }
        if (record.finalVerdict->infrastructureError) {
            return "infrastructure error in the final verdict" +
                   (record.finalVerdict->error.empty() ? std::string() : ": " + record.finalVerdict->error);
        }
        return {};
    case TrialStatus::Skipped:
        if (!record.arm.empty() && startsWith(record.arm, "solo_")) {
            return "a solo arm recorded as skipped, which only skill arms may be";
        }
        return {};
    }
    return {};
}

/// Why a valid record no longer matches the current problem, boundary and grader, or "" when it does.
std::string fingerprintStaleReason(const TrialRecord& record, const Problem& problem, const PlanRequest& request) {
    if (record.status == TrialStatus::Skipped) {
        return {}; // never graded: only its source decides whether it still holds
    }
    if (record.problemFingerprint != problem.fingerprint) {
        return "problem changed (fingerprint " + shortHash(record.problemFingerprint) + " -> " +
               shortHash(problem.fingerprint) + ")";
    }
    // A verdict judged under another boundary answers another question; legacy verdicts answer neither.
    if (!request.boundary.empty() && record.finalVerdict) {
        const std::string graded = boundaryOrLegacy(record.finalVerdict->boundary);
        if (graded != request.boundary) {
            return "boundary " + graded + " != " + request.boundary + " (graded under " + graded +
                   ", this run grades under " + request.boundary + ")";
        }
    }
    // A record whose grader is unknown (imported from elsewhere) is not judged by grader. The boundary mark of a
    // recorded fingerprint ("<sha>+strict") was judged above: only the grader's own part is compared here.
    const std::string graderFingerprint = graderOfFingerprint(request.graderFingerprint);
    const std::string recorded = graderOfFingerprint(record.graderFingerprint);
    if (!graderFingerprint.empty() && !recorded.empty() && recorded != graderFingerprint) {
        return "grader changed (fingerprint " + shortHash(recorded) + " -> " + shortHash(graderFingerprint) + ")";
    }
    return {};
}

struct RecordIndex {
    std::map<std::string, std::vector<const TrialRecord*>> byCoordinate;

    /// The live record at a coordinate, preferring one of the problem's suite, then the newest.
    const TrialRecord* find(const std::string& coordinateText, const std::string& suite) const {
        auto it = byCoordinate.find(coordinateText);
        if (it == byCoordinate.end()) {
            return nullptr;
        }
        const TrialRecord* best = nullptr;
        for (const TrialRecord* record : it->second) {
            auto rank = [&](const TrialRecord* r) { return std::make_pair(r->suite == suite, r->id); };
            if (!best || rank(record) > rank(best)) {
                best = record;
            }
        }
        return best;
    }
};

RecordIndex indexLiveTrials(const std::vector<TrialRecord>& trials, const std::string& model) {
    RecordIndex index;
    for (const TrialRecord& record : trials) {
        if (record.archived || record.model != model) {
            continue;
        }
        std::string coordinateText = record.coordinate;
        if (coordinateText.empty()) {
            auto arm = parseArm(record.arm);
            if (!arm) {
                continue; // not a trial of this protocol
            }
            coordinateText = formatCoordinate(Coordinate{record.problemNumber, record.replicate, arm.value()});
        }
        index.byCoordinate[coordinateText].push_back(&record);
    }
    return index;
}

void markStale(PlanEntry& entry, const std::string& why, bool rerunStale) {
    if (rerunStale) {
        entry.status = PlanStatus::Redo;
        entry.reason = why + "; archive, then run";
    } else {
        entry.status = PlanStatus::Stale;
        entry.reason = why + " (--rerun-stale redoes it)";
    }
}

PlanEntry makeEntry(const Problem& problem, int replicate, const Arm& arm) {
    PlanEntry entry;
    entry.coordinate = Coordinate{problem.number, replicate, arm};
    entry.coordinateText = formatCoordinate(entry.coordinate);
    entry.problemName = problem.name();
    entry.problemSuite = problem.suite;
    entry.problemFingerprint = problem.fingerprint;
    return entry;
}

void planSolo(PlanEntry& entry, const TrialRecord* record, const Problem& problem, const PlanRequest& request) {
    if (!record) {
        entry.status = PlanStatus::Run;
        entry.reason = "no record";
        return;
    }
    entry.liveTrialId = record->id;
    if (std::string why = rerunReason(*record); !why.empty()) {
        entry.status = PlanStatus::Rerun;
        entry.reason = why;
        return;
    }
    if (std::string why = fingerprintStaleReason(*record, problem, request); !why.empty()) {
        markStale(entry, why, request.rerunStale);
        return;
    }
    entry.status = PlanStatus::Reuse;
    entry.reason = "finished";
}

void planSkill(PlanEntry& entry, const PlanEntry& source, const TrialRecord* record, const Problem& problem,
               const PlanRequest& request, const PlanContext& context) {
    const bool sourcePending = startsAttempt(source.status);
    if (!sourcePending && source.liveTrialId) {
        auto sha = context.skillSha256ByTrial.find(*source.liveTrialId);
        entry.sourceSkillSha256 = sha == context.skillSha256ByTrial.end() ? std::string() : sha->second;
    }
    const bool sourceWroteNoSkill = !sourcePending && entry.sourceSkillSha256.empty();
    if (record) {
        entry.liveTrialId = record->id;
    }

    if (!record || !rerunReason(*record).empty()) {
        const std::string prior = record ? rerunReason(*record) : std::string("no record");
        if (sourcePending) {
            entry.status = record ? PlanStatus::Rerun : PlanStatus::Run;
            entry.waitsForSource = true;
            entry.reason = prior + "; waits for " + source.coordinateText;
        } else if (sourceWroteNoSkill) {
            entry.status = PlanStatus::Skip;
            entry.reason = "source " + source.coordinateText + " wrote no skill; recorded as skipped";
        } else {
            entry.status = record ? PlanStatus::Rerun : PlanStatus::Run;
            entry.reason = prior;
        }
        return;
    }

    if (std::string why = fingerprintStaleReason(*record, problem, request); !why.empty()) {
        markStale(entry, why, request.rerunStale);
        entry.waitsForSource = entry.status == PlanStatus::Redo && sourcePending;
        return;
    }
    if (sourcePending) {
        markStale(entry, "source " + source.coordinateText + " will " + toString(source.status), request.rerunStale);
        entry.waitsForSource = entry.status == PlanStatus::Redo;
        return;
    }
    if (record->sourceSkillSha256 != entry.sourceSkillSha256) {
        markStale(entry,
                  "source skill changed (SHA-256 " + shortHash(record->sourceSkillSha256) + " -> " +
                      shortHash(entry.sourceSkillSha256) + ")",
                  request.rerunStale);
        if (entry.status == PlanStatus::Redo && sourceWroteNoSkill) {
            entry.status = PlanStatus::Skip;
            entry.reason = "source " + source.coordinateText + " now has no skill; archive, then record as skipped";
        }
        return;
    }
    entry.status = PlanStatus::Reuse;
    entry.reason = record->status == TrialStatus::Skipped ? "skipped: source wrote no skill" : "finished";
}

} // namespace

const char* toString(PlanStatus status) {
    switch (status) {
    case PlanStatus::Run:
        return "run";
    case PlanStatus::Rerun:
        return "rerun";
    case PlanStatus::Reuse:
        return "reuse";
    case PlanStatus::Stale:
        return "stale";
    case PlanStatus::Redo:
        return "redo";
    case PlanStatus::Skip:
        return "skip";
    }
    return "unknown";
}

bool startsAttempt(PlanStatus status) {
    return status == PlanStatus::Run || status == PlanStatus::Rerun || status == PlanStatus::Redo;
}

std::string skillSha256(const std::optional<std::string>& skillText) {
    if (!skillText || trimmed(*skillText).empty()) {
        return {};
    }
    return sha256Hex(*skillText);
}

PlanContext contextFromTrials(const std::vector<TrialRecord>& trials) {
    PlanContext context;
    for (const TrialRecord& record : trials) {
        if (std::string sha = skillSha256(record.skillText); !sha.empty()) {
            context.skillSha256ByTrial[record.id] = std::move(sha);
        }
    }
    return context;
}

int Plan::count(PlanStatus status) const {
    auto it = counts.find(status);
    return it == counts.end() ? 0 : it->second;
}

std::vector<std::pair<std::size_t, std::size_t>> Plan::dependencies() const {
    std::vector<std::pair<std::size_t, std::size_t>> edges;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].waitsForSource && entries[i].sourceEntry) {
            edges.emplace_back(i, *entries[i].sourceEntry);
        }
    }
    return edges;
}

const PlanEntry* Plan::find(const std::string& coordinateText) const {
    for (const PlanEntry& entry : entries) {
        if (entry.coordinateText == coordinateText) {
            return &entry;
        }
    }
    return nullptr;
}

bool Plan::converged() const {
    return std::all_of(entries.begin(), entries.end(),
                       [](const PlanEntry& entry) { return entry.status == PlanStatus::Reuse; });
}

Status validatePlanRequest(const PlanRequest& request) {
    if (trimmed(request.model).empty()) {
        return makeError("plan: no model named; pass --model NAME");
    }
    for (const std::string* dsl : {&request.dslA, &request.dslB}) {
        if (!isValidDslId(*dsl)) {
            return makeError("plan: '" + *dsl +
                             "' is not a DSL id (lowercase letter first, then letters, digits, underscores)");
        }
    }
    if (request.dslA == request.dslB) {
        return makeError("plan: the DSL pair needs two different DSLs, got '" + request.dslA + "' twice");
    }
    if (request.replicates < 1) {
        return makeError("plan: replicates must be at least 1, got " + std::to_string(request.replicates));
    }
    if (request.problems.empty()) {
        return makeError("plan: no problems selected; widen the --problems pattern");
    }
    if (!request.boundary.empty()) {
        if (auto boundary = parseBoundary(request.boundary, "plan: --boundary"); !boundary) {
            return boundary.error();
        }
    }
    return Ok{};
}

Plan makePlan(const PlanRequest& request, const std::vector<TrialRecord>& liveTrials, const PlanContext& context) {
    std::vector<const Problem*> problems;
    std::set<int> seenNumbers;
    for (const Problem& problem : request.problems) {
        if (seenNumbers.insert(problem.number).second) {
            problems.push_back(&problem);
        }
    }
    std::sort(problems.begin(), problems.end(),
              [](const Problem* a, const Problem* b) { return a->number < b->number; });

    const RecordIndex records = indexLiveTrials(liveTrials, request.model);
    const std::vector<Arm> arms = armsForPair(request.dslA, request.dslB);
    Plan plan;
    std::map<std::string, std::size_t> entryByCoordinate;

    for (bool skillPass : {false, true}) {
        for (const Problem* problem : problems) {
            for (int replicate = 1; replicate <= request.replicates; ++replicate) {
                for (const Arm& arm : arms) {
                    if (arm.isSkill() != skillPass) {
                        continue;
                    }
                    PlanEntry entry = makeEntry(*problem, replicate, arm);
                    const TrialRecord* record = records.find(entry.coordinateText, problem->suite);
                    if (arm.isSkill()) {
                        const std::string sourceText =
                            formatCoordinate(Coordinate{problem->number, replicate, soloArm(arm.sourceDsl)});
                        entry.sourceEntry = entryByCoordinate.at(sourceText);
                        planSkill(entry, plan.entries[*entry.sourceEntry], record, *problem, request, context);
                    } else {
                        planSolo(entry, record, *problem, request);
                    }
                    entryByCoordinate[entry.coordinateText] = plan.entries.size();
                    plan.counts[entry.status] += 1;
                    plan.entries.push_back(std::move(entry));
                }
            }
        }
    }
    return plan;
}

std::vector<std::pair<std::string, std::string>> dslPairsOf(const std::vector<std::string>& dsls) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (std::size_t i = 0; i < dsls.size(); ++i) {
        for (std::size_t j = i + 1; j < dsls.size(); ++j) {
            pairs.emplace_back(dsls[i], dsls[j]);
        }
    }
    return pairs;
}

Plan makePlanForDsls(PlanRequest request, const std::vector<std::string>& dsls,
                     const std::vector<TrialRecord>& liveTrials, const PlanContext& context) {
    // Each pair's entries, once per coordinate; a skill arm's source is remembered by coordinate, since its index
    // belongs to the pair's plan.
    std::vector<std::pair<PlanEntry, std::string>> merged; // entry, its source's coordinate ("" for solos)
    std::set<std::string> seen;
    for (const auto& [dslA, dslB] : dslPairsOf(dsls)) {
        request.dslA = dslA;
        request.dslB = dslB;
        const Plan pairPlan = makePlan(request, liveTrials, context);
        for (const PlanEntry& entry : pairPlan.entries) {
            if (seen.insert(entry.coordinateText).second) {
                merged.emplace_back(entry,
                                    entry.sourceEntry ? pairPlan.entries[*entry.sourceEntry].coordinateText : "");
            }
        }
    }
    std::stable_sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) {
        const Coordinate& x = a.first.coordinate;
        const Coordinate& y = b.first.coordinate;
        return std::tuple(x.arm.isSkill(), x.problemNumber, x.replicate) <
               std::tuple(y.arm.isSkill(), y.problemNumber, y.replicate);
    });
    Plan plan;
    std::map<std::string, std::size_t> indexOf;
    for (auto& [entry, source] : merged) {
        indexOf[entry.coordinateText] = plan.entries.size();
        plan.entries.push_back(std::move(entry));
    }
    for (std::size_t i = 0; i < plan.entries.size(); ++i) {
        PlanEntry& entry = plan.entries[i];
        if (const std::string& source = merged[i].second; !source.empty()) {
            entry.sourceEntry = indexOf.at(source);
        }
        plan.counts[entry.status] += 1;
    }
    return plan;
}

} // namespace mkb
