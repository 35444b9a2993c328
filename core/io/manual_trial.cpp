// Filing the verdict of `mkb grade --save` as the manual model's solo trial (manual_trial.h).
#include "core/io/manual_trial.h"

#include "core/vocabulary/arms.h"

namespace mkb {

Status saveManualTrial(Store& store, const Problem& problem, const std::string& dsl, const std::string& kernelSource,
                       const Verdict& verdict, const std::string& graderFingerprint) {
    const std::string model = "manual";
    return store.transaction([&]() -> Status {
        if (auto stored = store.upsertProblem(problem); !stored) {
            return stored.error();
        }
        if (auto ensured = store.ensureModel(model, "manual", "{}"); !ensured) {
            return ensured.error();
        }
        Coordinate coordinate{problem.number, 1, soloArm(dsl)};
        TrialFilter filter;
        filter.model = model;
        filter.suite = problem.suite;
        auto live = store.loadTrials(filter);
        if (!live) {
            return live.error();
        }
        for (const TrialRecord& trial : *live) {
            if (trial.problemNumber == problem.number && trial.replicate == 1 && trial.arm == coordinate.arm.name()) {
                if (Status archived = store.archiveTrial(trial.id); !archived) {
                    return archived;
                }
            }
        }
        TrialRecord trial;
        trial.model = model;
        trial.suite = problem.suite;
        trial.problemNumber = problem.number;
        trial.problemSlug = problem.slug;
        trial.family = problem.family;
        trial.replicate = 1;
        trial.arm = coordinate.arm.name();
        trial.dsl = dsl;
        trial.coordinate = formatCoordinate(coordinate);
        trial.problemFingerprint = problem.fingerprint;
        trial.graderFingerprint = graderFingerprint;
        auto trialId = store.insertTrial(trial);
        if (!trialId) {
            return trialId.error();
        }
        SubmissionRecord submission;
        submission.trialId = *trialId;
        submission.index = 0;
        submission.kernelSource = kernelSource;
        submission.verdict = verdict;
        submission.evalSeconds = verdict.evalSeconds;
        if (auto added = store.addSubmission(submission); !added) {
            return added.error();
        }
        TrialOutcome outcome;
        outcome.status = verdict.infrastructureError ? TrialStatus::InfrastructureError : TrialStatus::Finished;
        outcome.verdict = verdict;
        outcome.error = verdict.error;
        outcome.timedOut = verdict.timedOut;
        return store.finishTrial(*trialId, outcome);
    });
}

} // namespace mkb
