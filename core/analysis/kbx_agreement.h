// Our grader against KernelBench-X's own verdicts on the same corpus rounds (mkb regrade): how often the two agree
// that a kernel is correct, and how their speedups compare where both call it correct, per category.
#pragma once

#include "core/analysis/stats.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// One regraded round: its category and what each grader said.
struct RegradedRound {
    std::string category; // KernelBench-X's category, "" when unknown
    bool theirsCorrect = false;
    bool oursCorrect = false;
    std::optional<double> theirsSpeedup; // over eager, when they call it correct and timed it
    std::optional<double> oursSpeedup;   // ours, when we call it correct
};

/// The rounds of one category (category "" = every category).
struct AgreementGroup {
    std::string category;
    std::size_t rounds = 0;
    std::size_t theirsCorrect = 0;
    std::size_t oursCorrect = 0;
    std::size_t bothCorrect = 0;
    std::size_t onlyTheirs = 0; // they call it correct, our grader does not
    std::size_t onlyOurs = 0;   // our grader calls it correct, they do not
    std::size_t neither = 0;
    std::optional<double> agreement;           // (both + neither) / rounds
    std::optional<Interval> agreementInterval; // 95% percentile bootstrap over the rounds, seeded
    std::optional<double> theirsCorrectShare;  // theirsCorrect / rounds, with its interval
    std::optional<Interval> theirsCorrectInterval;
    std::optional<double> oursCorrectShare;
    std::optional<Interval> oursCorrectInterval;
    std::size_t speedupPairs = 0;                    // rounds both call correct with both speedups
    std::optional<double> speedupRatioGeometricMean; // geometric mean of ours / theirs over those rounds
    std::optional<Interval> speedupRatioInterval;    // its 95% bootstrap interval
};

/// Every category first as the whole ("" = all), then each category by name ("uncategorised" for ""), each with
/// its counts and intervals.
std::vector<AgreementGroup> kbxAgreement(const std::vector<RegradedRound>& rounds);

/// What our verdict of a round that disagrees with KernelBench-X's says, as far as the grader records it.
struct OurFailure {
    bool correct = false;
    std::string complianceRule; // the boundary rule that failed, "" when none did
    std::string error;          // the grader's one-line reason
    bool timedOut = false;
};

/// Which difference between the two graders explains a disagreement, in words naming KernelBench-X's rule:
/// its launch rule (it accepts a round that launches no kernel), its boundary (torch compute in the wrapper is
/// allowed), in-place semantics, numerics (its tolerance against our float64-anchor allowance), the inputs (a
/// round that raises on our scaled, seeded draws or device), code it did not publish (the corpus's text does not
/// parse), or a failure of theirs our grader does not reproduce. "" when the round agrees.
std::string kbxDisagreementRule(bool theirsCorrect, const OurFailure& ours);

} // namespace mkb::analysis
