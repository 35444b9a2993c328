// The re-timing planner: missing, stale, current or not re-timed, per cell, with the reason in one line.
#include "core/protocol/retime_plan.h"

#include <algorithm>
#include <cstdio>

namespace mkb {
namespace {

/// Why an arm keeps the cell from being re-timed, or "" when it does not.
std::string armBlocks(const RetimeArm& arm, const char* role) {
    const std::string name = role;
    if (!arm.trialId) {
        return "the " + name + " arm has no trial yet";
    }
    if (!arm.final) {
        return "the " + name + " arm is not final yet";
    }
    if (arm.skipped) {
        return "the " + name + " arm was skipped (the source wrote no skill; it counts as its base)";
    }
    if (!arm.passed) {
        return "the " + name + " arm failed: the pass/fail difference decides, no timing needed";
    }
    if (arm.kernelSha256.empty()) {
        return "the " + name + " arm has no stored kernel source";
    }
    return {};
}

bool sameCell(const RetimingRecord& record, const RetimeCell& cell) {
    return record.model == cell.model && record.suite == cell.suite && record.problemNumber == cell.problemNumber &&
           record.replicate == cell.replicate && record.sourceDsl == cell.direction.sourceDsl &&
           record.targetDsl == cell.direction.targetDsl;
}

} // namespace

std::string shortSha(const std::string& sha) {
    return sha.empty() ? std::string("none") : sha.substr(0, 12);
}

const RetimedKernel* kernelLabelled(const RetimingResult& result, const std::string& label) {
    for (const RetimedKernel& kernel : result.kernels) {
        if (kernel.label == label) {
            return &kernel;
        }
    }
    return nullptr;
}

std::string RetimeCell::name() const {
    char number[16];
    std::snprintf(number, sizeof number, "p%02d", problemNumber);
    return model + " " + number + " r" + std::to_string(replicate) + " " + direction.name();
}

const char* toString(RetimeStatus status) {
    switch (status) {
    case RetimeStatus::Missing:
        return "missing";
    case RetimeStatus::Stale:
        return "stale";
    case RetimeStatus::Current:
        return "current";
    case RetimeStatus::NotRetimed:
        return "not_retimed";
    }
    return "?";
}

int RetimePlan::count(RetimeStatus status) const {
    int total = 0;
    for (const RetimePlanEntry& entry : entries) {
        total += entry.status == status ? 1 : 0;
    }
    return total;
}

int RetimePlan::toRetime() const {
    int total = 0;
    for (const RetimePlanEntry& entry : entries) {
        total += entry.retime ? 1 : 0;
    }
    return total;
}

std::string deviceOrGraderStaleness(const RetimingResult& result, const RetimePlanRequest& request) {
    if (result.device != request.device &&
        std::find(request.sameDevices.begin(), request.sameDevices.end(), result.device) == request.sameDevices.end()) {
        return "re-timed on " + result.device + ", now " + request.device;
    }
    if (!request.deviceName.empty() && !result.deviceName.empty() && result.deviceName != request.deviceName) {
        return "re-timed on a " + result.deviceName + ", now a " + request.deviceName;
    }
    if (result.graderFingerprint != request.graderFingerprint) {
        return "the grader changed (" + shortSha(result.graderFingerprint) + " -> " +
               shortSha(request.graderFingerprint) + ")";
    }
    return {};
}

std::string retimingStaleness(const RetimingRecord& record, const RetimeCell& cell, bool includeSource,
                              const RetimePlanRequest& request) {
    const RetimingResult& result = record.result;
    if (std::string why = deviceOrGraderStaleness(result, request); !why.empty()) {
        return why;
    }
    const struct {
        const char* label;
        const RetimeArm* arm;
        bool wanted;
    } arms[] = {{"source", &cell.source, includeSource}, {"base", &cell.base, true}, {"skill", &cell.skill, true}};
    for (const auto& [label, arm, wanted] : arms) {
        const RetimedKernel* timed = kernelLabelled(result, label);
        if (!wanted && timed) {
            return std::string("the ") + label + " kernel was timed but no longer joins (it is not a passing kernel)";
        }
        if (wanted && !timed) {
            return std::string("the ") + label + " kernel was not timed then";
        }
        if (wanted && timed->sha256 != arm->kernelSha256) {
            return std::string("the ") + label + " kernel changed (" + shortSha(timed->sha256) + " -> " +
                   shortSha(arm->kernelSha256) + ")";
        }
    }
    return {};
}

RetimePlan makeRetimePlan(const std::vector<RetimeCell>& cells, const std::vector<RetimingRecord>& live,
                          const RetimePlanRequest& request) {
    RetimePlan plan;
    plan.entries.reserve(cells.size());
    for (const RetimeCell& cell : cells) {
        RetimePlanEntry entry;
        entry.cell = cell;
        const RetimingRecord* record = nullptr;
        for (const RetimingRecord& candidate : live) {
            if (!candidate.archived && sameCell(candidate, cell)) {
                record = &candidate;
                break;
            }
        }
        if (record) {
            entry.liveRetimingId = record->id;
        }
        std::string blocked = armBlocks(cell.base, "base");
        if (blocked.empty()) {
            blocked = armBlocks(cell.skill, "skill");
        }
        if (!blocked.empty()) {
            entry.status = RetimeStatus::NotRetimed;
            entry.reason = blocked;
            plan.entries.push_back(std::move(entry));
            continue;
        }
        entry.includeSource = armBlocks(cell.source, "source").empty();
        if (!record) {
            entry.status = RetimeStatus::Missing;
            entry.reason = "no re-timing yet";
            entry.retime = true;
        } else if (std::string why = retimingStaleness(*record, cell, entry.includeSource, request); !why.empty()) {
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
