// The comparisons every chart suite draws: four resolved cells in three families and one unresolved, with each
// expected number worked out where it is checked.
#pragma once

#include "analysis/analysis_fixtures.h"

#include <vector>

namespace mkbchartstest {

using mkbtest::CellPlace;
using mkbtest::failing;
using mkbtest::passing;

/// c1 attention p1 (m): source 2.0, base 1.0 (tier 3), skill 2.5 (tier 4) → helped, r = 2.5, source above.
/// c2 attention p2 (m): source failed, base 1.5 (tier 3), skill failed → harmed, r = 1/1.5, source below.
/// c3 moe p3 (m): source 0.8 (tier 2), base failed, skill 1.2 (tier 3) → helped, r = 1.2, source above.
/// c4 moe p4 (m): skill arm missing → unresolved, ignored everywhere.
/// c5 mlp p5 (k): source 1.0, base 1.0, skill skipped (counts as base) → neutral, r = 1, source same.
inline std::vector<mkb::analysis::Comparison> chartComparisons() {
    auto place = [](const char* family, int problem, const char* model = "m") {
        CellPlace where;
        where.family = family;
        where.problem = problem;
        where.model = model;
        return where;
    };
    std::vector<mkb::analysis::Comparison> comparisons;
    comparisons.push_back(mkbtest::cell(passing(2.0), passing(1.0), passing(2.5), place("attention", 1)));
    comparisons.push_back(mkbtest::cell(failing(), passing(1.5), failing(), place("attention", 2)));
    comparisons.push_back(mkbtest::cell(passing(0.8), failing(), passing(1.2), place("moe", 3)));
    comparisons.push_back(mkbtest::unresolvedCell(passing(3.0), passing(3.0), place("moe", 4)));
    comparisons.push_back(mkbtest::cell(passing(1.0), passing(1.0), mkbtest::skippedSkill(), place("mlp", 5, "k")));
    for (auto& comparison : comparisons) {
        comparison.problemSlug = "p" + std::to_string(comparison.problemNumber);
    }
    return comparisons;
}

} // namespace mkbchartstest
