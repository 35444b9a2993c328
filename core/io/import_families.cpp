// The families an import files problems under when a results.json does not say (import_families.h).
#include "core/io/import_families.h"

#include "core/catalog/catalog.h"

#include <cstdio>

namespace mkb {

std::map<std::string, std::string> familiesByProblem(const std::vector<std::filesystem::path>& suiteRoots) {
    std::map<std::string, std::string> families;
    if (suiteRoots.empty()) {
        return families;
    }
    const Catalog catalog = loadCatalog(suiteRoots);
    for (const Problem& problem : catalog.problems) {
        char number[8];
        std::snprintf(number, sizeof number, "%02d", problem.number);
        families[std::string(number) + "_" + problem.slug] = problem.family;
    }
    return families;
}

} // namespace mkb
