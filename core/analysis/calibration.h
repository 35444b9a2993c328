// Calibration statistics (DESIGN §5.5): false-outcome and detection rates of the paired and unpaired outcome rules on
// A/A (a kernel against itself) and A/B (against a copy slowed by a known fraction) controls, and the smallest δ that
// keeps the false rate at or below 1%; the A/B controls' ladder (R@t and S of the slowed copy against the solution).
// Pure: it reads plain samples; the outcome rules are analysis::judgeOutcome's, the ladder is analysis::cellLadder's.
#pragma once

#include "core/analysis/comparison.h"
#include "core/analysis/ladder.h"
#include "core/analysis/settings.h"
#include "core/analysis/stats.h"
#include "core/analysis/transfer.h"
#include "core/records/calibration.h"

#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// One separate grading of a kernel, as the unpaired rule reads it.
struct Grading {
    bool passed = false;
    double speedup = 0; // over eager
};

/// One unpaired control: the base grading against the other (A/A: a second grading of a; A/B: a grading of the slowed
/// copy). The "other" plays the skill arm.
struct UnpairedControl {
    Grading base;
    Grading other;
};

/// The δ grid searched for the smallest δ: 0, 0.001, ..., 0.500.
std::vector<double> calibrationDeltaGrid();

/// The largest false rate a δ may leave on the A/A controls to count as safe (1%).
inline constexpr double kCalibrationFalseRateLimit = 0.01;

/// The paired method: aa holds ratio time(a)/time(a copy) with its CI per control, ab holds time(a)/time(a slowed)
/// (so a detected slowdown is a ratio below 1: harmed). Outcomes at settings.delta through judgeOutcome's paired rule.
CalibrationMethodResult calibratePaired(const std::vector<PairedTiming>& aa, const std::vector<PairedTiming>& ab,
                                        const AnalysisSettings& settings = {});

/// The unpaired method (MetaKernelBench's rule on separate gradings, through judgeOutcome's unpaired rule).
CalibrationMethodResult calibrateUnpaired(const std::vector<UnpairedControl>& aa,
                                          const std::vector<UnpairedControl>& ab,
                                          const AnalysisSettings& settings = {});

/// The unpaired outcome of one control at settings.delta (helped / neutral / harmed, the other against the base).
Outcome unpairedControlOutcome(const UnpairedControl& control, const AnalysisSettings& settings = {});
/// The paired outcome of one control at settings.delta.
Outcome pairedControlOutcome(const PairedTiming& ratio, const AnalysisSettings& settings = {});

/// One A/B control's paired session: the solution A and its slowed copy B timed with eager in one re-timing. a and b
/// are speedups over eager (pairs (eager, a) and (eager, a_slow)); bOverA = time(a) / time(a_slow) is B's speedup over
/// A, whose logarithm is the speedup change from A to B, ln(b / a), measured on the same rounds.
struct SlowdownSession {
    int problem = 0;
    std::string dsl;
    int replicate = 1;
    PairedTiming a;
    PairedTiming b;
    PairedTiming bOverA;
};

/// One control on the A/B ladder.
struct SlowdownControl {
    SlowdownSession session;
    CellLadder ladder;               // A as the base, B as the skill, under the paired ladder's rule (ties included)
    bool crossed = false;            // at some t exactly one of A and B attains t and it is not a tie: its S moved
    bool wrongWay = false;           // such a crossing where B attains t and A does not
    bool changeExcludesZero = false; // bOverA's CI lies below 1: ln(b / a)'s interval excludes 0 on the slow side
    bool changeWrongWay = false;     // bOverA's CI lies above 1: B measured faster than A, beyond noise
};

/// The A/B controls ranked on the paired ladder: A is the base arm and B the skill arm of one cell per control, both
/// passed, retimed with a, b and bOverA, so R@t, S, the lift B − A with its seeded bootstrap interval and the ties per
/// t are contrast()'s under TimingRule::Paired. S is a step function: a slowdown moves a control's S only when a
/// threshold lies between its two speedups.
struct SlowdownLadder {
    Contrast contrast;
    std::vector<SlowdownControl> controls; // in the sessions' order
    std::size_t crossed = 0;
    std::size_t wrongWay = 0;
    std::size_t changeExcludesZero = 0;
    std::size_t changeWrongWay = 0;
};
/// settings.timing is ignored (always the paired rule); its thresholds are the ladder's.
SlowdownLadder slowdownLadder(const std::vector<SlowdownSession>& sessions, const AnalysisSettings& settings = {});

/// How far two separate gradings of one kernel move on a device, measured by a calibration's unpaired A/A controls:
/// logSpread is the 95th percentile (linear, as quantile()) of |ln(s2 / s1)| over the controls where both gradings
/// passed with a speedup above 0. Two gradings of one kernel differ by less than the factor exp(logSpread) about 95%
/// of the time; a grading's own interval covers only its timing draws and misses this.
struct BetweenGradingSpread {
    std::size_t controls = 0;
    double logSpread = 0;
};
/// nullopt when no control has two passing gradings.
std::optional<BetweenGradingSpread> betweenGradingSpread(const std::vector<UnpairedControl>& aa);

/// A within-grading speedup interval widened on the log scale by half the spread on each side: two gradings of one
/// kernel differ by at most the spread about 95% of the time, and then their widened intervals overlap.
Interval acrossGradings(double low, double high, const BetweenGradingSpread& spread);

} // namespace mkb::analysis
