// Submission trajectories: per-index rates, rescued vs correct-from-start attempts, and fixing-edit sizes.
#include "core/analysis/refinement.h"

#include <algorithm>
#include <map>

namespace mkb::analysis {

std::vector<IndexRates> ratesBySubmissionIndex(const AttemptSet& attempts) {
    struct Tally {
        std::size_t attempts = 0;
        std::size_t compiled = 0;
        std::size_t correct = 0;
    };
    std::map<int, Tally> byIndex;
    for (const Attempt& attempt : attempts) {
        for (const SubmissionPoint& submission : attempt.submissions) {
            Tally& tally = byIndex[submission.index];
            ++tally.attempts;
            tally.compiled += submission.compiled ? 1 : 0;
            tally.correct += submission.correct ? 1 : 0;
        }
    }
    std::vector<IndexRates> rows;
    for (const auto& [index, tally] : byIndex) {
        const auto total = static_cast<double>(tally.attempts);
        rows.push_back(IndexRates{index, tally.attempts, static_cast<double>(tally.compiled) / total,
                                  static_cast<double>(tally.correct) / total});
    }
    return rows;
}

RescueSummary rescueSummary(const AttemptSet& attempts) {
    RescueSummary result;
    std::vector<double> fromStart;
    std::vector<double> rescued;
    for (const Attempt& attempt : attempts) {
        if (attempt.submissions.empty()) {
            continue;
        }
        ++result.withSubmissions;
        const bool firstCorrect = attempt.submissions.front().correct;
        const bool laterCorrect = std::any_of(attempt.submissions.begin() + 1, attempt.submissions.end(),
                                              [](const SubmissionPoint& submission) { return submission.correct; });
        std::vector<double>* speedups = nullptr;
        if (firstCorrect) {
            ++result.correctFromStart;
            speedups = &fromStart;
        } else if (laterCorrect) {
            ++result.rescued;
            speedups = &rescued;
        } else {
            ++result.neverCorrect;
        }
        if (speedups && attempt.passed && attempt.speedup > 0) {
            speedups->push_back(attempt.speedup);
        }
    }
    result.rescuedShare = share(result.rescued, result.rescued + result.neverCorrect);
    result.fromStartGeometricMean = geometricMean(fromStart);
    result.rescuedGeometricMean = geometricMean(rescued);
    result.fromStartSpeedups = distributionOf(std::move(fromStart));
    result.rescuedSpeedups = distributionOf(std::move(rescued));
    return result;
}

const char* toString(EditKind kind) {
    return kind == EditKind::LocalFix ? "local_fix" : "structural_rewrite";
}

std::vector<FixingEdit> fixingEdits(const AttemptSet& attempts, const AnalysisSettings& settings) {
    std::vector<FixingEdit> edits;
    for (const Attempt& attempt : attempts) {
        for (std::size_t i = 1; i < attempt.submissions.size(); ++i) {
            const SubmissionPoint& failing = attempt.submissions[i - 1];
            const SubmissionPoint& fixed = attempt.submissions[i];
            if (failing.correct || !fixed.correct) {
                continue;
            }
            FixingEdit edit;
            edit.trialId = attempt.trialId;
            edit.model = attempt.model;
            edit.problemNumber = attempt.problemNumber;
            edit.problemSlug = attempt.problemSlug;
            edit.arm = attempt.arm;
            edit.dsl = attempt.dsl;
            edit.replicate = attempt.replicate;
            edit.fromIndex = failing.index;
            edit.toIndex = fixed.index;
            edit.diff = lineDiffStats(failing.kernelSource, fixed.kernelSource);
            edit.kind = reaches(edit.diff.changedShare, settings.structuralRewriteShare) ? EditKind::StructuralRewrite
                                                                                         : EditKind::LocalFix;
            edits.push_back(std::move(edit));
        }
    }
    return edits;
}

FixingEditSummary summarizeFixingEdits(const std::vector<FixingEdit>& edits) {
    FixingEditSummary result;
    result.edits = edits.size();
    std::vector<double> shares;
    for (const FixingEdit& edit : edits) {
        (edit.kind == EditKind::LocalFix ? result.localFixes : result.structuralRewrites) += 1;
        shares.push_back(edit.diff.changedShare);
    }
    result.localFixShare = share(result.localFixes, result.edits);
    result.changedLineShare = distributionOf(std::move(shares));
    return result;
}

} // namespace mkb::analysis
