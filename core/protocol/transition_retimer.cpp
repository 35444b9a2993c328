// The before/after loop: store → submission pairs → plan → private kernel folders → grader → store, one pair at a
// time.
#include "core/protocol/transition_retimer.h"

#include "core/io/kbx_corpus_kernel.h"
#include "core/protocol/private_folder.h"
#include "core/util/sha256.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace mkb {
namespace {

constexpr const char* kKbxBoundary = "kbx"; // the boundary of every verdict imported from KernelBench-X's corpus

const Problem* selectedProblem(const RetimeScope& scope, const TrialRecord& trial) {
    for (const Problem& problem : scope.problems) {
        if (problem.number == trial.problemNumber && (trial.problemSlug.empty() || trial.problemSlug == problem.slug)) {
            return &problem;
        }
    }
    return nullptr;
}

/// The transition kind a submission's verdict names ("reached_by" in its JSON; imported corpora write it).
std::string reachedBy(const Verdict& verdict) {
    if (verdict.json.find("reached_by") == std::string::npos) {
        return {};
    }
    const nlohmann::json parsed = nlohmann::json::parse(verdict.json, nullptr, false);
    if (!parsed.is_object()) {
        return {};
    }
    const auto found = parsed.find("reached_by");
    return found != parsed.end() && found->is_string() ? found->get<std::string>() : std::string();
}

TransitionRound roundOf(const SubmissionRecord& submission, const Problem& problem) {
    TransitionRound round;
    round.index = submission.index;
    round.hasCode = submission.kernelSource.find_first_not_of(" \t\r\n") != std::string::npos;
    round.imported = submission.verdict.imported;
    round.correct = submission.verdict.correct;
    if (submission.verdict.passed && submission.verdict.speedupVsEager > 0) {
        round.speedup = submission.verdict.speedupVsEager;
    }
    round.medianMs = submission.verdict.kernelMedianMs;
    if (!round.hasCode) {
        return round;
    }
    // KernelBench-X's corpus rounds (verdicts under its boundary) hold the task's function and its harness, not a
    // solve(): they are adapted as `mkb regrade` adapts them; our own submissions are timed as stored.
    if (submission.verdict.boundary != kKbxBoundary) {
        round.kernel = submission.kernelSource;
    } else if (auto made =
                   corpusRoundKernel(submission.kernelSource, problem.source,
                                     "problem " + problem.name() + " submission " + std::to_string(submission.index))) {
        round.kernel = std::move(made->source);
    } else {
        round.kernelProblem = made.error().message;
    }
    round.kernelSha256 = round.kernel.empty() ? std::string() : sha256Hex(round.kernel);
    return round;
}

bool replicateSelected(const RetimeScope& scope, int replicate) {
    return scope.replicates.empty() ||
           std::find(scope.replicates.begin(), scope.replicates.end(), replicate) != scope.replicates.end();
}

const Problem* problemOfPair(const RetimeScope& scope, const TransitionPair& pair) {
    for (const Problem& problem : scope.problems) {
        if (problem.number == pair.problemNumber && (pair.problemSlug.empty() || pair.problemSlug == problem.slug)) {
            return &problem;
        }
    }
    return nullptr;
}

} // namespace

bool transitionKindMatches(const std::string& kind, const std::vector<std::string>& kinds) {
    if (kinds.empty()) {
        return true;
    }
    for (const std::string& part : splitString(kind, ',')) {
        const std::string word(trimmed(part));
        for (const std::string& wanted : kinds) {
            const bool prefix = !wanted.empty() && wanted.back() == '*';
            if (prefix ? word.rfind(wanted.substr(0, wanted.size() - 1), 0) == 0 : word == wanted) {
                return !word.empty();
            }
        }
    }
    return false;
}

Result<std::vector<TransitionPair>> transitionPairsFromStore(Store& store, const RetimeJob& job) {
    TrialFilter filter;
    filter.model = job.scope.model;
    auto trials = store.loadTrials(filter, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    std::vector<TransitionPair> pairs;
    for (const TrialRecord& trial : *trials) {
        const Problem* problem = trial.archived ? nullptr : selectedProblem(job.scope, trial);
        if (!problem || !replicateSelected(job.scope, trial.replicate)) {
            continue;
        }
        auto submissions = store.submissions(trial.id);
        if (!submissions) {
            return submissions.error();
        }
        std::vector<const SubmissionRecord*> ordered;
        for (const SubmissionRecord& submission : *submissions) {
            if (submission.index > 0) {
                ordered.push_back(&submission);
            }
        }
        std::sort(ordered.begin(), ordered.end(),
                  [](const SubmissionRecord* a, const SubmissionRecord* b) { return a->index < b->index; });
        for (std::size_t i = 1; i < ordered.size(); ++i) {
            TransitionPair pair;
            pair.kind = reachedBy(ordered[i]->verdict);
            if (!transitionKindMatches(pair.kind, job.transitionKinds)) {
                continue;
            }
            pair.trialId = trial.id;
            pair.model = trial.model;
            pair.suite = trial.suite;
            pair.problemNumber = trial.problemNumber;
            pair.problemSlug = trial.problemSlug;
            pair.problemName = problem->name();
            pair.category = problem->meta.category;
            pair.replicate = trial.replicate;
            pair.arm = trial.arm;
            pair.dsl = trial.dsl;
            pair.before = roundOf(*ordered[i - 1], *problem);
            pair.after = roundOf(*ordered[i], *problem);
            pairs.push_back(std::move(pair));
        }
    }
    return pairs;
}

Result<TransitionPlan> planTransitionRetimes(Store& store, const RetimeJob& job, const std::string& graderFingerprint) {
    auto pairs = transitionPairsFromStore(store, job);
    if (!pairs) {
        return pairs.error();
    }
    auto live = store.liveTransitionRetimings();
    if (!live) {
        return live.error();
    }
    return makeTransitionPlan(*pairs, *live, planRequestOf(job, graderFingerprint));
}

std::string transitionResultLine(const RetimingResult& result) {
    return retimingResultLine(result, "before", "after", "after/before");
}

Result<TransitionRetimeSummary> runTransitionRetimes(Store& store, GraderProcess& grader, const RetimeJob& job,
                                                     const std::function<void(const TransitionPlan&)>& onPlan,
                                                     const std::function<void(const TransitionOutcome&)>& onOutcome,
                                                     const std::atomic<bool>* cancel) {
    const auto started = std::chrono::steady_clock::now();
    const auto elapsed = [&]() {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    };
    TransitionRetimeSummary summary;
    auto plan = planTransitionRetimes(store, job, grader.hello().graderFingerprint);
    if (!plan) {
        return plan.error();
    }
    summary.plan = std::move(plan).value();
    if (onPlan) {
        onPlan(summary.plan);
    }
    const auto finish = [&]() {
        summary.seconds = elapsed();
        return summary;
    };
    if (job.dryRun) {
        return finish();
    }
    for (const TransitionPlanEntry& entry : summary.plan.entries) {
        if (!entry.retime) {
            continue;
        }
        if (summary.cancelled || summary.timeLimited || (cancel && cancel->load()) ||
            (job.timeLimitS > 0 && elapsed() >= job.timeLimitS)) {
            summary.cancelled = summary.cancelled || (cancel && cancel->load());
            summary.timeLimited = !summary.cancelled;
            ++summary.left;
            continue;
        }
        TransitionOutcome outcome;
        outcome.entry = &entry;
        const auto report = [&](const std::string& error) {
            if (!error.empty()) {
                outcome.error = error;
                ++summary.errors;
            }
            if (onOutcome) {
                onOutcome(outcome);
            }
        };
        const TransitionPair& pair = entry.pair;
        const Problem* problem = problemOfPair(job.scope, pair);
        auto folder = PrivateFolder::make(job.tempRoot);
        if (!problem || !folder) {
            report(!problem ? "its problem is not in the selection" : folder.error().message);
            continue;
        }
        auto descriptor = job.dslDescriptor ? job.dslDescriptor(pair.dsl)
                                            : Result<std::string>(makeError("no descriptor for " + pair.dsl));
        if (!descriptor) {
            report("DSL '" + pair.dsl + "': " + descriptor.error().message);
            continue;
        }
        RetimeRequest request = makeRetimeRequest(*problem, job.device, job.grade, job.retime);
        std::string failure;
        for (const auto& [label, round] : {std::pair<const char*, const TransitionRound*>{"before", &pair.before},
                                           std::pair<const char*, const TransitionRound*>{"after", &pair.after}}) {
            RetimeKernel kernel;
            kernel.label = label;
            kernel.kernelPath = folder->path() / label / "kernel.py";
            kernel.dsl = pair.dsl;
            kernel.dslDescriptorJson = *descriptor;
            if (Status written = writeRetimeFile(kernel.kernelPath, round->kernel); !written && failure.empty()) {
                failure = written.error().message;
            }
            request.kernels.push_back(std::move(kernel));
        }
        if (!failure.empty()) {
            report(failure);
            continue;
        }
        auto result = grader.retime(request, {}, cancel);
        if (cancel && cancel->load()) {
            summary.cancelled = true;
            ++summary.left;
            continue;
        }
        if (!result) {
            report(result.error().message);
            continue;
        }
        if (result->infrastructureError) {
            report(result->error.empty() ? "the grader reported an infrastructure error" : result->error);
            continue;
        }
        TransitionRetimingRecord record;
        record.trialId = pair.trialId;
        record.model = pair.model;
        record.suite = pair.suite;
        record.problemNumber = pair.problemNumber;
        record.replicate = pair.replicate;
        record.arm = pair.arm;
        record.beforeIndex = pair.before.index;
        record.afterIndex = pair.after.index;
        record.result = *result;
        if (record.result.device.empty()) {
            record.result.device = job.device;
        }
        if (record.result.graderFingerprint.empty()) {
            record.result.graderFingerprint = grader.hello().graderFingerprint;
        }
        for (RetimedKernel& kernel : record.result.kernels) {
            if (kernel.sha256.empty()) {
                kernel.sha256 = kernel.label == "before"  ? pair.before.kernelSha256
                                : kernel.label == "after" ? pair.after.kernelSha256
                                                          : std::string();
            }
        }
        if (auto stored = store.insertTransitionRetiming(record); !stored) {
            report(stored.error().message);
            continue;
        }
        (result->ok ? summary.retimed : summary.kernelFailed) += 1;
        outcome.result = std::move(record.result);
        report({});
    }
    return finish();
}

} // namespace mkb
