// The A/B ladder of a calibration (DESIGN §5.5, §8): its paired sessions as the calibration's detail rows store them
// (A's and B's speedups over eager from one re-timing), and the lines mkb calibrate prints for
// analysis::slowdownLadder.
#pragma once

#include "core/analysis/calibration.h"
#include "core/analysis/ladder.h"
#include "core/records/calibration.h"

#include <string>
#include <vector>

namespace mkb {

/// The detail row keys of one paired session's speedups over eager, each [ratio, CI low, CI high]: A is the
/// solution ("a"), B its slowed copy ("a_slow"); B over A is the row's "paired_ab", time(a) / time(a_slow).
inline constexpr const char* kDetailSpeedupA = "paired_speedup_a";
inline constexpr const char* kDetailSpeedupB = "paired_speedup_b";

/// The paired A/B sessions of a calibration's detail (read through the bounded JSON reader), in row order: every row
/// with a problem and the three timings paired_speedup_a, paired_speedup_b and paired_ab, each positive and finite.
/// Rows without them (calibrations stored before the ladder, or whose re-timing failed) are left out; so is a detail
/// that is not JSON.
std::vector<analysis::SlowdownSession> slowdownSessions(const CalibrationRecord& record);

/// What mkb calibrate prints for the ladder: a heading, R@t and S of A, of B and of B − A with S's 95% intervals and
/// the lift's per t, the ties per t, how many controls crossed a threshold and how many the wrong way, how many speedup
/// changes exclude 0, then one line per control. Empty when there is no session.
std::vector<std::string> slowdownLadderLines(const analysis::SlowdownLadder& ladder, double slowdown,
                                             const std::vector<double>& thresholds);

/// "R@1": the highest threshold an arm attains on the ladder (attains in the thresholds' order), "failed" when it
/// attains none.
std::string ladderRung(const std::vector<bool>& attains, const std::vector<double>& thresholds);

} // namespace mkb
