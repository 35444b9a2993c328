// Loading what the problems view shows: the shipped catalog plus the project's stored problems, as plain data.
#pragma once

#include "core/catalog/catalog.h"
#include "gui/problems/problem_rows.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mkb {
class Store;
}

namespace mkb::gui {

struct ProblemsListing {
    std::vector<ProblemRow> rows;
    std::vector<CatalogIssue> catalogIssues; // malformed files of the shipped suite
    std::string storeError;                  // set when the project's problems could not be read
};

/// Reads the suite roots (normally {mkb::shippedProblemsDir()}) and, when store is given, its stored problems.
/// Never executes a problem file.
ProblemsListing loadProblemsListing(const std::vector<std::filesystem::path>& suiteRoots, Store* store);

/// "2 malformed files: a.py (no docstring); b.py (duplicate number 03)" or "" when there is no issue; a file
/// with several issues counts once, with its first issue; at most maxListed files are named.
std::string describeCatalogIssues(const std::vector<CatalogIssue>& issues, size_t maxListed = 3);

} // namespace mkb::gui
