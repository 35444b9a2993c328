// Assembles the problems view's rows from the shipped catalog and the project store, with solution status.
#include "gui/problems/problem_rows.h"

#include "core/catalog/dsl_registry.h"

#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

namespace mkb::gui {

const std::vector<std::string>& knownSolutionDsls() {
    // Every DSL the shipped registry describes (resources/dsls/), read once: a new descriptor needs no code here.
    static const std::vector<std::string> dsls = [] {
        Result<DslRegistry> registry = loadDslRegistry();
        return registry ? registry->ids() : std::vector<std::string>{};
    }();
    return dsls;
}

std::vector<std::string> solutionDslsFor(const Problem& problem) {
    std::vector<std::string> present;
    if (problem.path.empty()) {
        return present;
    }
    const std::filesystem::path solutions = problem.path.parent_path() / "_solutions";
    const std::string stem = problem.path.stem().string();
    for (const std::string& dsl : knownSolutionDsls()) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(solutions / (stem + "." + dsl + ".py"), ec)) {
            present.push_back(dsl);
        }
    }
    return present;
}

std::vector<ProblemRow> buildProblemRows(const Catalog& shipped, const std::vector<Problem>& stored) {
    std::vector<ProblemRow> rows;
    // A problem is (suite, number, slug): two suite folders may share a name and a number.
    std::set<std::tuple<std::string, int, std::string>> shippedKeys;
    std::set<std::string> shippedFingerprints;
    for (const Problem& problem : shipped.problems) {
        rows.push_back({problem, solutionDslsFor(problem), ProblemOrigin::ShippedSuite});
        shippedKeys.insert({problem.suite, problem.number, problem.slug});
        shippedFingerprints.insert(problem.fingerprint);
    }
    // stored is ordered by suite, number, first seen: the last of each key is the latest version.
    std::map<std::tuple<std::string, int, std::string>, const Problem*> latestStored;
    for (const Problem& problem : stored) {
        latestStored[{problem.suite, problem.number, problem.slug}] = &problem;
    }
    for (const auto& [key, problem] : latestStored) {
        if (shippedKeys.count(key) || shippedFingerprints.count(problem->fingerprint)) {
            continue;
        }
        rows.push_back({*problem, solutionDslsFor(*problem), ProblemOrigin::ProjectStore});
    }
    return rows;
}

} // namespace mkb::gui
