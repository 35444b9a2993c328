// Loading a TransferCase: per arm the trial's verdict, skill and submissions; the final kernel follows the rule of
// core/analysis/attempt (the final fresh evaluation's kernel, else the last submission's).
#include "core/io/transfer_case.h"

#include "core/analysis/attempt.h"
#include "core/store/store.h"

namespace mkb {
namespace {

TransferArm loadArm(Store& store, const analysis::Attempt* attempt) {
    TransferArm arm;
    if (!attempt || attempt->trialId == 0) {
        return arm;
    }
    arm.trialId = attempt->trialId;
    if (auto trial = store.loadTrial(attempt->trialId)) {
        arm.finalVerdict = trial->finalVerdict;
    } else {
        arm.error = trial.error().message;
    }
    if (auto skill = store.skillOfTrial(attempt->trialId); skill && skill->has_value()) {
        arm.skill = **skill;
    }
    auto submissions = store.submissions(attempt->trialId);
    if (!submissions) {
        arm.error = submissions.error().message;
    } else {
        arm.submissions = std::move(submissions.value());
    }
    if (attempt->skipped) {
        return arm;
    }
    if (!attempt->finalKernelSource.empty()) {
        arm.finalKernel = attempt->finalKernelSource;
        return arm;
    }
    analysis::Attempt kernels;
    for (const SubmissionRecord& submission : arm.submissions) {
        analysis::addSubmission(kernels, submission);
    }
    analysis::settleFinalKernel(kernels);
    arm.finalKernel = kernels.finalKernelSource;
    return arm;
}

} // namespace

TransferCase loadTransferCase(Store& store, const analysis::Comparison& comparison) {
    TransferCase found;
    found.source = loadArm(store, comparison.source.get());
    found.base = loadArm(store, comparison.base.get());
    found.skill = loadArm(store, comparison.skill.get());
    return found;
}

} // namespace mkb
