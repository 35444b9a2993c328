// What `mkb run` and `mkb plan` select: suites, problems by glob, and the DSL pair.
#pragma once

#include "core/catalog/catalog.h"
#include "core/protocol/runner.h"
#include "core/records/problem.h"
#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace mkb::cli {

/// A selection error with the exit code it maps to (command.h).
struct SelectionError {
    int exitCode = 0;
    std::string message;
};

/// "A,B" → the two trimmed, different ids; the error names the flag value.
Result<std::pair<std::string, std::string>> parseDslPair(const std::string& text, const std::string& verb);

/// The one line for a --problems glob that selected nothing: why the file it names is not a valid problem, when it
/// names a malformed one, else that nothing has that name.
std::string noProblemMatched(const Catalog& catalog, const std::string& glob, const std::string& verb);

/// Loads the suites (default: the shipped problems) and selects by glob. On failure, *error is set and the
/// result is empty. Malformed problem files are reported on stderr as a note, like mkb plan does.
std::vector<Problem> selectProblems(const std::vector<std::filesystem::path>& suites, const std::string& glob,
                                    const std::string& verb, SelectionError* error);

/// The DSL's descriptor as data and as JSON: <dir>/<id>.json from the extra folders first, then resources/dsls/.
/// Descriptors from extra folders that the registry's strict checks refuse (test DSLs such as cpusim, whose
/// adapter only the grader knows) are read leniently: id, display name, prompt, doc pack and compliance lists.
Result<RunDsl> loadRunDsl(const std::string& id, const std::vector<std::filesystem::path>& extraDirs);

} // namespace mkb::cli
