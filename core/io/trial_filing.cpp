// The import archive rule, written once: used by `mkb import` and by the Slurm coordinator's shard merge.
#include "core/io/trial_filing.h"

#include "core/vocabulary/arms.h"

namespace mkb {

Result<FiledTrial> fileTrial(Store& store, TrialRecord trial, const TrialOutcome& outcome,
                             std::vector<SubmissionRecord> submissions) {
    FiledTrial result;
    auto arm = parseArm(trial.arm);
    if (!arm) {
        return makeError("trial " + trial.coordinate + ": " + arm.error().message);
    }
    // The check of what the store holds and the write share one BEGIN IMMEDIATE transaction: a second filing of the
    // same content running at the same time waits for it, then finds this trial instead of racing for it.
    Status written = store.transaction([&]() -> Status {
        auto live = store.liveTrialAt(trial.model, trial.suite, trial.problemNumber, trial.replicate, trial.arm);
        if (!live) {
            return live.error();
        }
        std::optional<std::int64_t> source;
        if (arm->isSkill()) {
            auto solo = store.liveTrialAt(trial.model, trial.suite, trial.problemNumber, trial.replicate,
                                          soloArm(arm->sourceDsl).name());
            if (!solo) {
                return solo.error();
            }
            if (*solo) {
                source = (*solo)->id;
            }
        }
        // Unchanged means: this content is already stored in the same role. A live record whose content equals
        // an archived trial's (a redo that came out byte-identical) is still filed as the live trial.
        bool unchanged = false;
        if (trial.archived) {
            auto known = store.hasArchivedOrigin(trial.model, trial.suite, trial.origin);
            if (!known) {
                return known.error();
            }
            unchanged = *known;
        } else {
            unchanged = *live && (*live)->origin == trial.origin;
        }
        if (unchanged) {
            result.filed = FiledAs::Unchanged;
            result.trialId = trial.archived ? 0 : (*live)->id;
            // A skill arm stored without its source (two filings raced before they were serialised) is linked
            // now; one that has a link keeps it.
            if (!trial.archived && source && !(*live)->sourceTrialId) {
                if (Status linked = store.setSourceTrial((*live)->id, *source); !linked) {
                    return linked;
                }
                result.relinked = true;
            }
            return Ok{};
        }
        trial.sourceTrialId = source;
        // An archived record is history: it is written archived and never disturbs the live trial.
        result.filed = FiledAs::Imported;
        if (!trial.archived && *live) {
            if (Status archived = store.archiveTrial((*live)->id); !archived) {
                return archived;
            }
            result.filed = FiledAs::Replaced;
        }
        auto id = store.insertFinishedTrial(trial, outcome);
        if (!id) {
            return id.error();
        }
        result.trialId = *id;
        for (SubmissionRecord& submission : submissions) {
            submission.trialId = *id;
            if (auto added = store.addSubmission(submission); !added) {
                return added.error();
            }
        }
        result.submissionsWritten = static_cast<int>(submissions.size());
        return Ok{};
    });
    if (!written) {
        return written.error();
    }
    return result;
}

} // namespace mkb
