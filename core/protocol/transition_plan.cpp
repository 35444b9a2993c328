// The before/after planner: missing, stale, current or not re-timed, per submission pair, with the reason in one line.
#include "core/protocol/transition_plan.h"

#include <cstdio>

namespace mkb {
namespace {

/// Why one submission keeps its pair from being timed, or "" when it does not.
std::string roundBlocks(const TransitionRound& round, const char* role) {
    const std::string name = std::string("the ") + role + " submission (" + std::to_string(round.index) + ")";
    if (!round.hasCode) {
        return name + " has no stored kernel source";
    }
    if (!round.imported) {
        return name + " never ran: its own verdict says it failed to load";
    }
    if (!round.kernelProblem.empty()) {
        return name + " gives no kernel to time: " + round.kernelProblem;
    }
    return {};
}

} // namespace

std::string TransitionPair::name() const {
    char number[16];
    std::snprintf(number, sizeof number, "p%02d", problemNumber);
    return model + " " + number + " r" + std::to_string(replicate) + " " + arm + " " + std::to_string(before.index) +
           "->" + std::to_string(after.index);
}

int TransitionPlan::count(RetimeStatus status) const {
    int total = 0;
    for (const TransitionPlanEntry& entry : entries) {
        total += entry.status == status ? 1 : 0;
    }
    return total;
}

int TransitionPlan::toRetime() const {
    int total = 0;
    for (const TransitionPlanEntry& entry : entries) {
        total += entry.retime ? 1 : 0;
    }
    return total;
}

std::string transitionBlocks(const TransitionPair& pair) {
    if (std::string why = roundBlocks(pair.before, "before"); !why.empty()) {
        return why;
    }
    if (std::string why = roundBlocks(pair.after, "after"); !why.empty()) {
        return why;
    }
    if (pair.problemName.empty()) {
        return "its problem is not in the selection (give --suite with the suite its trials were made from)";
    }
    return {};
}

bool samePair(const TransitionRetimingRecord& record, const TransitionPair& pair) {
    return record.model == pair.model && record.suite == pair.suite && record.problemNumber == pair.problemNumber &&
           record.replicate == pair.replicate && record.arm == pair.arm && record.beforeIndex == pair.before.index &&
           record.afterIndex == pair.after.index;
}

std::string transitionStaleness(const TransitionRetimingRecord& record, const TransitionPair& pair,
                                const RetimePlanRequest& request) {
    if (std::string why = deviceOrGraderStaleness(record.result, request); !why.empty()) {
        return why;
    }
    for (const auto& [label, round] : {std::pair<const char*, const TransitionRound*>{"before", &pair.before},
                                       std::pair<const char*, const TransitionRound*>{"after", &pair.after}}) {
        const RetimedKernel* timed = kernelLabelled(record.result, label);
        if (!timed) {
            return std::string("the ") + label + " kernel was not timed then";
        }
        // A result that failed before hashing a kernel (it could not be read) holds no SHA-256: it says nothing about
        // the current kernel, so it is re-timed.
        if (timed->sha256 != round->kernelSha256) {
            return std::string("the ") + label + " kernel changed (" + shortSha(timed->sha256) + " -> " +
                   shortSha(round->kernelSha256) + ")";
        }
    }
    return {};
}

TransitionPlan makeTransitionPlan(const std::vector<TransitionPair>& pairs,
                                  const std::vector<TransitionRetimingRecord>& live, const RetimePlanRequest& request) {
    TransitionPlan plan;
    plan.entries.reserve(pairs.size());
    for (const TransitionPair& pair : pairs) {
        TransitionPlanEntry entry;
        entry.pair = pair;
        const TransitionRetimingRecord* record = nullptr;
        for (const TransitionRetimingRecord& candidate : live) {
            if (!candidate.archived && samePair(candidate, pair)) {
                record = &candidate;
                break;
            }
        }
        if (record) {
            entry.liveRetimingId = record->id;
        }
        if (std::string blocked = transitionBlocks(pair); !blocked.empty()) {
            entry.status = RetimeStatus::NotRetimed;
            entry.reason = blocked;
        } else if (!record) {
            entry.status = RetimeStatus::Missing;
            entry.reason = "no re-timing yet";
            entry.retime = true;
        } else if (std::string why = transitionStaleness(*record, pair, request); !why.empty()) {
            entry.status = RetimeStatus::Stale;
            entry.reason = why;
            entry.retime = true;
        } else {
            entry.status = RetimeStatus::Current;
            entry.reason = request.redoCurrent ? "current; re-timed again as asked" : "current";
            entry.retime = request.redoCurrent;
        }
        plan.entries.push_back(std::move(entry));
    }
    return plan;
}

} // namespace mkb
