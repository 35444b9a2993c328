// The re-timing loop: store → cells → plan → private kernel folders → grader → store, one cell at a time.
#include "core/protocol/retimer.h"

#include "core/protocol/private_folder.h"
#include "core/util/sha256.h"
#include "core/vocabulary/arms.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace mkb {
namespace {

namespace fs = std::filesystem;

const Problem* problemOf(const RetimeScope& scope, const TrialRecord& trial) {
    for (const Problem& problem : scope.problems) {
        if (problem.number == trial.problemNumber && (trial.problemSlug.empty() || trial.problemSlug == problem.slug)) {
            return &problem;
        }
    }
    return nullptr;
}

RetimeArm armOf(const TrialRecord* trial) {
    RetimeArm arm;
    if (!trial) {
        return arm;
    }
    arm.trialId = trial->id;
    arm.dsl = trial->dsl;
    arm.skipped = trial->status == TrialStatus::Skipped || trial->skipped;
    arm.final = arm.skipped || (trial->status == TrialStatus::Finished && trial->finalVerdict.has_value());
    arm.passed = !arm.skipped && trial->finalVerdict && trial->finalVerdict->passed;
    return arm;
}

const Problem* problemOfCell(const RetimeScope& scope, const RetimeCell& cell) {
    for (const Problem& problem : scope.problems) {
        if (problem.number == cell.problemNumber) {
            return &problem;
        }
    }
    return nullptr;
}

} // namespace

Result<std::vector<RetimeCell>> retimeCellsFromStore(Store& store, const RetimeScope& scope) {
    TrialFilter filter;
    filter.model = scope.model;
    auto trials = store.loadTrials(filter, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    // (model, suite, problem, replicate) → arm name → trial.
    using Key = std::tuple<std::string, std::string, int, int>;
    std::map<Key, std::map<std::string, const TrialRecord*>> groups;
    std::map<Key, const Problem*> problems;
    for (const TrialRecord& trial : *trials) {
        if (trial.archived) {
            continue;
        }
        const Problem* problem = problemOf(scope, trial);
        if (!problem) {
            continue;
        }
        if (!scope.replicates.empty() &&
            std::find(scope.replicates.begin(), scope.replicates.end(), trial.replicate) == scope.replicates.end()) {
            continue;
        }
        const Key key{trial.model, trial.suite, trial.problemNumber, trial.replicate};
        groups[key][trial.arm] = &trial;
        problems[key] = problem;
    }
    std::vector<RetimeCell> cells;
    for (const auto& [key, arms] : groups) {
        std::set<std::pair<std::string, std::string>> directions;
        std::vector<std::string> solos;
        for (const auto& [armName, trial] : arms) {
            auto arm = parseArm(armName);
            if (!arm) {
                continue;
            }
            if (arm->isSkill()) {
                directions.emplace(arm->sourceDsl, arm->dsl);
            } else {
                solos.push_back(arm->dsl);
            }
        }
        for (const std::string& a : solos) {
            for (const std::string& b : solos) {
                if (a != b) {
                    directions.emplace(a, b);
                }
            }
        }
        for (const auto& [sourceDsl, targetDsl] : directions) {
            const Direction direction{sourceDsl, targetDsl};
            if (!scope.directions.empty() &&
                std::find(scope.directions.begin(), scope.directions.end(), direction) == scope.directions.end()) {
                continue;
            }
            const auto find = [&](const std::string& name) -> const TrialRecord* {
                auto found = arms.find(name);
                return found == arms.end() ? nullptr : found->second;
            };
            RetimeCell cell;
            std::tie(cell.model, cell.suite, cell.problemNumber, cell.replicate) = key;
            cell.problemName = problems[key]->name();
            cell.direction = direction;
            cell.source = armOf(find(soloArm(sourceDsl).name()));
            cell.base = armOf(find(soloArm(targetDsl).name()));
            cell.skill = armOf(find(skillArm(sourceDsl, targetDsl).name()));
            cell.source.dsl = sourceDsl;
            cell.base.dsl = targetDsl;
            cell.skill.dsl = targetDsl;
            cells.push_back(std::move(cell));
        }
    }
    // The final kernels of passing arms (one small query per trial; a trial shared by two cells is read once).
    std::map<std::int64_t, std::string> kernels;
    for (RetimeCell& cell : cells) {
        for (RetimeArm* arm : {&cell.source, &cell.base, &cell.skill}) {
            if (!arm->trialId || !arm->passed) {
                continue;
            }
            auto known = kernels.find(*arm->trialId);
            if (known == kernels.end()) {
                auto submissions = store.submissions(*arm->trialId);
                if (!submissions) {
                    return submissions.error();
                }
                std::string source;
                for (const SubmissionRecord& submission : *submissions) {
                    if (submission.index == 0) {
                        source = submission.kernelSource;
                    }
                }
                known = kernels.emplace(*arm->trialId, std::move(source)).first;
            }
            arm->kernelSource = known->second;
            arm->kernelSha256 = known->second.empty() ? std::string() : sha256Hex(known->second);
        }
    }
    return cells;
}

Result<RetimePlan> planRetimes(Store& store, const RetimeJob& job, const std::string& graderFingerprint) {
    auto cells = retimeCellsFromStore(store, job.scope);
    if (!cells) {
        return cells.error();
    }
    auto live = store.liveRetimings();
    if (!live) {
        return live.error();
    }
    return makeRetimePlan(*cells, *live, planRequestOf(job, graderFingerprint));
}

RetimePlanRequest planRequestOf(const RetimeJob& job, const std::string& graderFingerprint) {
    RetimePlanRequest request;
    request.device = job.device;
    request.deviceName = job.deviceName;
    request.sameDevices = job.sameDevices;
    request.graderFingerprint = graderFingerprint;
    request.redoCurrent = job.redoCurrent;
    return request;
}

std::string retimingResultLine(const RetimingResult& result, const char* a, const char* b, const char* label) {
    if (!result.ok) {
        return "failed" + (result.failedLabel.empty() ? std::string() : " (" + result.failedLabel + ")") + ": " +
               result.error;
    }
    char text[160];
    if (auto pair = result.pair(a, b)) {
        std::snprintf(text, sizeof text, "%s %.4f [%.4f, %.4f] n=%d %s", label, pair->ratio, pair->ciLow, pair->ciHigh,
                      pair->n, result.stop.c_str());
    } else {
        std::snprintf(text, sizeof text, "no %s/%s pair, %d rounds %s", a, b, result.rounds, result.stop.c_str());
    }
    return text;
}

std::string retimeResultLine(const RetimingResult& result) {
    return retimingResultLine(result, "base", "skill", "ratio");
}

Result<RetimeSummary> runRetimes(Store& store, GraderProcess& grader, const RetimeJob& job,
                                 const std::function<void(const RetimePlan&)>& onPlan,
                                 const std::function<void(const RetimeOutcome&)>& onOutcome,
                                 const std::atomic<bool>* cancel) {
    const auto started = std::chrono::steady_clock::now();
    RetimeSummary summary;
    // Store calls only: the grader's re-timing runs without the lock, so the run's workers can write meanwhile.
    const auto lockStore = [&]() {
        return job.storeMutex ? std::unique_lock<std::mutex>(*job.storeMutex) : std::unique_lock<std::mutex>();
    };
    auto plan = [&]() {
        const auto lock = lockStore();
        return planRetimes(store, job, grader.hello().graderFingerprint);
    }();
    if (!plan) {
        return plan.error();
    }
    summary.plan = std::move(plan).value();
    if (onPlan) {
        onPlan(summary.plan);
    }
    const auto finish = [&]() {
        summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return summary;
    };
    if (job.dryRun) {
        return finish();
    }
    for (const RetimePlanEntry& entry : summary.plan.entries) {
        if (!entry.retime) {
            continue;
        }
        if (cancel && cancel->load()) {
            summary.cancelled = true;
            break;
        }
        if (job.timeLimitS > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >= job.timeLimitS) {
            summary.timeLimited = true;
            break;
        }
        RetimeOutcome outcome;
        outcome.entry = &entry;
        const auto report = [&]() {
            if (onOutcome) {
                onOutcome(outcome);
            }
        };
        const RetimeCell& cell = entry.cell;
        const Problem* problem = problemOfCell(job.scope, cell);
        auto folder = PrivateFolder::make(job.tempRoot);
        if (!problem || !folder) {
            outcome.error = !problem ? "its problem is not in the selection" : folder.error().message;
            ++summary.errors;
            report();
            continue;
        }
        RetimeRequest request = makeRetimeRequest(*problem, job.device, job.grade, job.retime);
        std::string failure;
        const struct {
            const char* label;
            const RetimeArm* arm;
            bool wanted;
        } arms[] = {
            {"source", &cell.source, entry.includeSource}, {"base", &cell.base, true}, {"skill", &cell.skill, true}};
        for (const auto& [label, arm, wanted] : arms) {
            if (!wanted || !failure.empty()) {
                continue;
            }
            RetimeKernel kernel;
            kernel.label = label;
            kernel.kernelPath = folder->path() / label / "kernel.py";
            kernel.dsl = arm->dsl;
            auto descriptor = job.dslDescriptor ? job.dslDescriptor(arm->dsl)
                                                : Result<std::string>(makeError("no descriptor for " + arm->dsl));
            if (!descriptor) {
                failure = "DSL '" + arm->dsl + "': " + descriptor.error().message;
                continue;
            }
            kernel.dslDescriptorJson = *descriptor;
            if (Status written = writeRetimeFile(kernel.kernelPath, arm->kernelSource); !written) {
                failure = written.error().message;
                continue;
            }
            request.kernels.push_back(std::move(kernel));
        }
        if (!failure.empty()) {
            outcome.error = failure;
            ++summary.errors;
            report();
            continue;
        }
        auto result = grader.retime(request, {}, cancel);
        if (cancel && cancel->load()) {
            summary.cancelled = true;
            break;
        }
        if (!result) {
            outcome.error = result.error().message;
            ++summary.errors;
            report();
            continue;
        }
        if (result->infrastructureError) {
            outcome.error = result->error.empty() ? "the grader reported an infrastructure error" : result->error;
            ++summary.errors;
            report();
            continue;
        }
        RetimingRecord record;
        record.model = cell.model;
        record.suite = cell.suite;
        record.problemNumber = cell.problemNumber;
        record.replicate = cell.replicate;
        record.sourceDsl = cell.direction.sourceDsl;
        record.targetDsl = cell.direction.targetDsl;
        record.sourceTrialId = entry.includeSource ? cell.source.trialId : std::nullopt;
        record.baseTrialId = cell.base.trialId;
        record.skillTrialId = cell.skill.trialId;
        record.result = *result;
        if (record.result.device.empty()) {
            record.result.device = job.device;
        }
        for (RetimedKernel& kernel : record.result.kernels) {
            for (const auto& [label, arm, wanted] : arms) {
                if (kernel.sha256.empty() && kernel.label == label) {
                    kernel.sha256 = arm->kernelSha256;
                }
            }
        }
        if (record.result.graderFingerprint.empty()) {
            record.result.graderFingerprint = grader.hello().graderFingerprint;
        }
        const auto stored = [&]() {
            const auto lock = lockStore();
            return store.insertRetiming(record);
        }();
        if (!stored) {
            outcome.error = stored.error().message;
            ++summary.errors;
            report();
            continue;
        }
        (result->ok ? summary.retimed : summary.kernelFailed) += 1;
        outcome.result = std::move(record.result);
        report();
    }
    return finish();
}

} // namespace mkb
