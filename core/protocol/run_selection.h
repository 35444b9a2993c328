// What a run selects before it plans (`mkb run`, plan, retime, calibrate): problems from suite folders by glob, and
// each DSL by id with its descriptor (test DSLs from extra folders read leniently).
#pragma once

#include "core/catalog/catalog.h"
#include "core/protocol/runner.h"
#include "core/records/problem.h"
#include "core/util/result.h"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace mkb {

struct ProblemSelection {
    std::vector<Problem> problems;    // in catalog order, never empty
    std::size_t malformedLeftOut = 0; // malformed problem files of the suites (mkb problems validate lists them)
};

/// The one line for a --problems glob that selected nothing: why the file it names is not a valid problem, when it
/// names a malformed one, else that nothing has that name. `verb` opens the line ("run: ...").
std::string noProblemMatched(const Catalog& catalog, const std::string& glob, const std::string& verb);

/// Loads the suites (default: the shipped problems) and selects by glob. The error, opened by `verb`, names a
/// suite folder that is not one, two files that claim one selected number, or a glob that selected nothing.
Result<ProblemSelection> selectRunProblems(const std::vector<std::filesystem::path>& suites, const std::string& glob,
                                           const std::string& verb);

/// Adds the problems of `more` that `into` lacks (compared by number) and keeps `into` in number order: the union of
/// several --problems globs, each problem once.
void addProblemsOnce(std::vector<Problem>& into, std::vector<Problem> more);

/// The DSL's descriptor as data and as JSON: <dir>/<id>.json from the extra folders first, then resources/dsls/.
/// Descriptors from extra folders that the registry's strict checks refuse (test DSLs such as cpusim, whose
/// adapter only the grader knows) are read leniently: id, display name, prompt, doc pack and compliance lists.
Result<RunDsl> loadRunDsl(const std::string& id, const std::vector<std::filesystem::path>& extraDirs);

/// A lookup of each DSL's descriptor JSON by id through loadRunDsl, each id loaded once (the answer, error included,
/// is kept): what RetimeJob::dslDescriptor takes.
std::function<Result<std::string>(const std::string&)>
cachedDescriptorLookup(std::vector<std::filesystem::path> extraDirs);

} // namespace mkb
