// Python's own verdict on problem files: each is compiled (never run) by an interpreter in a child process, so that
// `mkb problems validate` refuses whatever the interpreter would, beyond what the static reading of the file sees.
#pragma once

#include "core/catalog/catalog.h"
#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mkb {

/// Compiles each file with `python -I -S` (compile(source, path, "exec"), nothing executed) and returns one issue
/// per file that does not compile: "Python cannot compile it: <error> (line L)". A file that makes the interpreter
/// itself crash is named as such. Fails only when the interpreter cannot be started; the error says so.
Result<std::vector<CatalogIssue>> pythonSyntaxIssues(const std::vector<std::filesystem::path>& files,
                                                     const std::string& python);

} // namespace mkb
