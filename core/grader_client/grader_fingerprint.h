// The grader's fingerprint computed from its sources on disk, without starting Python; equals the server's own.
#pragma once

#include "core/util/result.h"

#include <filesystem>
#include <string>

namespace mkb {

/// SHA-256 over the grader package's Python sources (mkbgrader/**/*.py and mkb_cuda.py), each as
/// "relative path\0content\0" in path order: the same digest the grader reports in its "ready" line
/// (mkbgrader/fingerprint.py). packageDir is the folder that holds mkbgrader/ (mkb::graderPackageDir()).
Result<std::string> graderFingerprintOf(const std::filesystem::path& packageDir);

} // namespace mkb
