// What the problems view lists: each problem with its solution status and where it came from, as plain data.
#pragma once

#include "core/catalog/catalog.h"
#include "core/records/problem.h"

#include <string>
#include <vector>

namespace mkb::gui {

/// Where a listed problem comes from.
enum class ProblemOrigin {
    ShippedSuite, // the suite shipped with the workbench (mkb::shippedProblemsDir())
    ProjectStore, // only in the project's store (e.g. imported from a MetaKernelBench checkout)
};

struct ProblemRow {
    Problem problem;
    std::vector<std::string> solutionDsls; // DSLs with a shipped solution, in knownSolutionDsls() order
    ProblemOrigin origin = ProblemOrigin::ShippedSuite;
};

/// The DSLs whose shipped solutions the view reports: triton, cuda, cutedsl, tirx.
const std::vector<std::string>& knownSolutionDsls();

/// The DSLs with a solution file beside the problem: <family>/_solutions/<NN>_<slug>.<dsl>.py.
std::vector<std::string> solutionDslsFor(const Problem& problem);

/// The shipped catalog's problems, then the project's stored problems that the catalog does not hold (matched by
/// suite, number and slug, or by fingerprint); of several stored versions of one problem the latest is listed.
std::vector<ProblemRow> buildProblemRows(const Catalog& shipped, const std::vector<Problem>& stored);

} // namespace mkb::gui
