// Reads trials and submissions row by row into attempts and comparisons (see attempt_loader.h).
#include "core/io/attempt_loader.h"

#include "core/store/bulk_memory.h"

#include <string>
#include <utility>

namespace mkb::io {
namespace {

/// Room for count attempts in one block, marked for huge pages: 100,000 attempts are 40 MB written once.
void reserveAttempts(std::vector<analysis::Attempt>& attempts, std::size_t count) {
    attempts.reserve(count);
    adviseHugePages(attempts.data(), count * sizeof(analysis::Attempt));
}

/// AttemptLoadOptions::category asked once per run of trials of one problem (number and slug): trials come in id
/// order, a problem's arms and replicates mostly next to each other, and the answer depends on the problem alone.
class ProblemCategory {
public:
    explicit ProblemCategory(const std::function<std::string(const TrialRecord&)>& ask) : ask_(ask) {}
    const std::string& of(const TrialRecord& trial) {
        if (!asked_ || trial.problemNumber != number_ || trial.problemSlug != slug_) {
            category_ = ask_(trial);
            number_ = trial.problemNumber;
            slug_ = trial.problemSlug;
            asked_ = true;
        }
        return category_;
    }

private:
    const std::function<std::string(const TrialRecord&)>& ask_;
    bool asked_ = false;
    int number_ = 0;
    std::string slug_;
    std::string category_;
};

} // namespace

Result<LoadedAttempts> loadAttempts(Store& store, const AttemptLoadOptions& options) {
    Result<std::size_t> count = store.countTrials(options.filter);
    if (!count) {
        return count.error();
    }
    LoadedAttempts loaded;
    auto attempts = std::make_shared<std::vector<analysis::Attempt>>();
    reserveAttempts(*attempts, *count);
    ProblemCategory category{options.category};
    Status read = store.visitTrials(options.filter, options.columns, [&](const TrialRecord& trial) {
        if (options.keep && !options.keep(trial)) {
            return;
        }
        ++loaded.trials;
        if (analysis::fillsArm(trial)) {
            analysis::Attempt& attempt = attempts->emplace_back();
            analysis::fillAttemptFromTrial(trial, attempt);
            if (options.category) {
                attempt.category = category.of(trial);
            }
        } else {
            loaded.armless.push_back(trial);
            if (options.category) {
                loaded.armless.back().category = category.of(trial);
            }
        }
    });
    if (!read) {
        return read.error();
    }
    if (options.withSubmissions) {
        // Attempts ascend by trial id and submissions by (trial id, index): one merge, no submission kept twice.
        auto next = attempts->begin();
        analysis::Attempt* last = nullptr;
        Status attached = visitSubmissionSummaries(store, [&](const SubmissionRecord& submission) {
            while (next != attempts->end() && next->trialId < submission.trialId) {
                ++next;
            }
            if (next == attempts->end() || next->trialId != submission.trialId) {
                return; // a trial left out of the selection, or one without a verdict
            }
            if (last && last != &*next) {
                analysis::settleFinalKernel(*last);
            }
            last = &*next;
            analysis::addSubmission(*next, submission);
        });
        if (!attached) {
            return attached.error();
        }
        if (last) {
            analysis::settleFinalKernel(*last);
        }
    }
    loaded.attempts = std::move(attempts);
    loaded.comparisons = analysis::buildComparisons(loaded.attempts, loaded.armless);
    if (options.withRetimings) {
        Result<std::vector<RetimingRecord>> retimings = store.liveRetimings();
        if (!retimings) {
            return retimings.error();
        }
        loaded.retimings = analysis::attachRetimings(loaded.comparisons, *retimings);
    }
    return loaded;
}

Status visitSubmissionSummaries(Store& store, const std::function<void(const SubmissionRecord&)>& visit) {
    return store.visitSubmissionSummaries(visit);
}

Result<std::vector<SubmissionRecord>> loadSubmissionSummaries(Store& store) {
    std::vector<SubmissionRecord> submissions;
    Status read =
        visitSubmissionSummaries(store, [&](const SubmissionRecord& submission) { submissions.push_back(submission); });
    if (!read) {
        return read.error();
    }
    return submissions;
}

} // namespace mkb::io
