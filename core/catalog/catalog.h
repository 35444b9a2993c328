// The problem catalog: reads suite roots in the MetaKernelBench layout without ever executing a problem file.
#pragma once

#include "core/records/problem.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// One malformed file or folder: the path and what is wrong with it, in words.
struct CatalogIssue {
    std::filesystem::path path;
    std::string message;
};

struct Catalog {
    std::vector<Problem> problems;     // sorted by number
    std::vector<CatalogIssue> issues;  // every malformed file; loading went on past each

    const Problem* findByNumber(int number) const;
    /// Accepts "7", "07", "p07", "07_slug", "family/07_slug", "family/07_slug.py" or a path to the file.
    const Problem* find(const std::string& nameOrNumber) const;
    /// Problems whose name ("family/NN_slug"), code ("pNN") or family matches a shell glob.
    std::vector<const Problem*> select(const std::string& glob) const;
};

/// Scans each suite root; never throws; malformed files become issues.
Catalog loadCatalog(const std::vector<std::filesystem::path>& suiteRoots);

} // namespace mkb
