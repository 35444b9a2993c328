// The problem catalog: reads suite roots in the MetaKernelBench layout without ever executing a problem file.
#pragma once

#include "core/records/problem.h"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// The largest problem file the catalog reads: MetaKernelBench's are a few kB, so anything near this is not a problem.
inline constexpr std::size_t kMaxProblemFileBytes = 1u << 20;

/// One malformed file or folder: the path and what is wrong with it, in words.
struct CatalogIssue {
    std::filesystem::path path;
    std::string message;
};

struct Catalog {
    std::vector<Problem> problems;    // sorted by number
    std::vector<CatalogIssue> issues; // every malformed file; loading went on past each

    const Problem* findByNumber(int number) const;
    /// Accepts "7", "07", "p07", "07_slug", "family/07_slug", "family/07_slug.py" or a path to the file;
    /// a bare slug ("paged_gqa_decode") is accepted too when exactly one problem has it.
    const Problem* find(const std::string& nameOrNumber) const;
    /// Problems whose name ("family/NN_slug"), code ("pNN"), file stem ("NN_slug") or family matches a shell glob.
    std::vector<const Problem*> select(const std::string& glob) const;
    /// The issues of the malformed files a name, number or path (the forms find() accepts) points at, so a caller can
    /// say why the file is not a problem rather than that nothing matched.
    std::vector<const CatalogIssue*> issuesFor(const std::string& nameOrNumber) const;
    /// The first "duplicate number" issue of a file that the glob would select (as select() matches problems), or
    /// nullptr: a run must not go ahead on a number two files claim.
    const CatalogIssue* duplicateSelectedBy(const std::string& glob) const;
};

/// Scans each suite root; never throws; malformed files become issues. A file with any issue (including one whose
/// number is also used by another file: both are reported and neither is loaded) is not a problem of the catalog.
Catalog loadCatalog(const std::vector<std::filesystem::path>& suiteRoots);

/// The DSL ids that have a shipped solution for the problem: files `<family>/_solutions/<NN>_<slug>.<dsl>.py`
/// beside it, sorted.
std::vector<std::string> solutionDsls(const Problem& problem);

/// The path a solution for the problem and DSL has (whether or not it exists).
std::filesystem::path solutionPath(const Problem& problem, const std::string& dslId);

} // namespace mkb
