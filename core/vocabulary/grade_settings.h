// The grading defaults every layer may read: GradeSettings, the C++ side's one definition of the grading contract's
// numbers, and the eager floor. The grader's definition is core/grader/mkbgrader/parent/settings.py, and
// tests/grading/tst_grading_defaults.cpp proves that the two agree.
#pragma once

#include "core/vocabulary/boundary.h"

#include <string>

namespace mkb {

/// Every number of the grading contract, with the defaults of DESIGN §5.1 and §5.3.
struct GradeSettings {
    int correctnessDraws = 5;
    int warmupDraws = 10;
    int timingDraws = 50;
    int recheckDraws = 3;
    double timeoutS = 600;
    int maxKernelBytes = 300000;
    bool outliers = true;
    double outlierP = 0.001;
    double outlierScale = 50;
    bool kernelOnlyTiming = false;
    std::string boundary{kBoundaryMkb}; // the implementation boundary: "mkb" or "strict" (core/vocabulary/boundary.h)
};

/// The eager median a problem must reach, in ms: below it launch overhead dominates (DESIGN §3; the grader's
/// EAGER_TARGET_MS in core/grader/mkbgrader/parent/settings.py).
inline constexpr double kEagerTargetMs = 0.05;

} // namespace mkb
