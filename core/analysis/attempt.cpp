// Flattens store trials and their submissions into the Attempt structs the metrics read.
#include "core/analysis/attempt.h"

#include "core/util/text.h"
#include "core/vocabulary/boundary.h"

#include <algorithm>
#include <unordered_map>

namespace mkb::analysis {

static bool holdsVerdict(const TrialRecord& trial) {
    return trial.status == TrialStatus::Finished || trial.status == TrialStatus::Skipped;
}

/// A SKILL.md counts when it holds more than white space; a lean load carries the store's verdict on that instead of
/// the text (both use mkb::trimmed).
static bool wroteSkill(const TrialRecord& trial) {
    return trial.lean ? trial.skillWritten : trial.skillText && !trimmed(*trial.skillText).empty();
}

Attempt attemptFromTrial(const TrialRecord& trial) {
    Attempt attempt;
    fillAttemptFromTrial(trial, attempt);
    return attempt;
}

void fillAttemptFromTrial(const TrialRecord& trial, Attempt& attempt) {
    attempt.trialId = trial.id;
    attempt.model = trial.model;
    attempt.problemNumber = trial.problemNumber;
    attempt.problemSlug = trial.problemSlug;
    attempt.family = trial.family;
    attempt.category = trial.category;
    attempt.replicate = trial.replicate;
    attempt.arm = trial.arm;
    attempt.dsl = trial.dsl;
    attempt.skipped = trial.skipped || trial.status == TrialStatus::Skipped;
    attempt.graded = trial.status == TrialStatus::Finished && !attempt.skipped;
    attempt.wroteSkill = wroteSkill(trial);
    attempt.usage = trial.usage;
    if (trial.finalVerdict) {
        attempt.boundary = boundaryOrLegacy(trial.finalVerdict->boundary);
    }
    if (attempt.graded && trial.finalVerdict) {
        const Verdict& verdict = *trial.finalVerdict;
        attempt.passed = verdict.passed;
        attempt.correct = verdict.correct;
        attempt.imported = verdict.imported;
        attempt.compliant = verdict.compliant;
        attempt.speedup = verdict.passed && verdict.speedupVsEager > 0 ? verdict.speedupVsEager : 0.0;
        attempt.outliersCorrect = verdict.outliersCorrect;
        if (verdict.quant) {
            attempt.quantPassed = verdict.quant->passed;
        }
        if (verdict.roofline) {
            attempt.iou = verdict.roofline->iou;
            attempt.mfu = verdict.roofline->mfu;
        }
        attempt.deviceName = verdict.deviceName;
        if (attempt.passed) {
            attempt.speedupCiLow = verdict.speedupCiLow;
            attempt.speedupCiHigh = verdict.speedupCiHigh;
        }
    }
}

void addSubmission(Attempt& attempt, const SubmissionRecord& submission) {
    if (submission.index == 0) {
        attempt.finalKernelSource = submission.kernelSource;
        return;
    }
    const Verdict& verdict = submission.verdict;
    attempt.submissions.push_back(SubmissionPoint{
        submission.index, verdict.imported, verdict.correct,
        verdict.passed && verdict.speedupVsEager > 0 ? verdict.speedupVsEager : 0.0, submission.kernelSource});
}

void settleFinalKernel(Attempt& attempt) {
    if (attempt.finalKernelSource.empty() && !attempt.submissions.empty()) {
        attempt.finalKernelSource = attempt.submissions.back().kernelSource;
    }
}

void attachSubmissions(std::vector<Attempt>& attempts, const std::vector<SubmissionRecord>& submissions) {
    if (submissions.empty()) {
        return;
    }
    std::unordered_map<std::int64_t, std::vector<const SubmissionRecord*>> submissionsByTrial;
    for (const SubmissionRecord& submission : submissions) {
        submissionsByTrial[submission.trialId].push_back(&submission);
    }
    for (Attempt& attempt : attempts) {
        auto found = submissionsByTrial.find(attempt.trialId);
        if (found == submissionsByTrial.end()) {
            continue;
        }
        std::vector<const SubmissionRecord*>& own = found->second;
        std::stable_sort(own.begin(), own.end(), [](const SubmissionRecord* left, const SubmissionRecord* right) {
            return left->index < right->index;
        });
        for (const SubmissionRecord* submission : own) {
            addSubmission(attempt, *submission);
        }
        settleFinalKernel(attempt);
    }
}

bool fillsArm(const TrialRecord& trial) {
    return !trial.archived && holdsVerdict(trial);
}

std::vector<Attempt> attemptsFromTrials(const std::vector<TrialRecord>& trials,
                                        const std::vector<SubmissionRecord>& submissions) {
    std::vector<Attempt> attempts;
    attempts.reserve(trials.size());
    for (const TrialRecord& trial : trials) {
        if (fillsArm(trial)) {
            fillAttemptFromTrial(trial, attempts.emplace_back());
        }
    }
    attachSubmissions(attempts, submissions);
    return attempts;
}

} // namespace mkb::analysis
