// Hashing the grader package (both its parent and child packages) exactly as mkbgrader/fingerprint.py does, so
// planning needs no Python.
#include "core/grader_client/grader_fingerprint.h"

#include "core/util/dir_walk.h"
#include "core/util/sha256.h"
#include "core/util/text.h"

#include <algorithm>
#include <vector>

namespace mkb {

Result<std::string> graderFingerprintOf(const std::filesystem::path& packageDir) {
    namespace fs = std::filesystem;
    const fs::path package = packageDir / "mkbgrader";
    std::error_code ec;
    if (!fs::is_directory(package, ec)) {
        return makeError("grader package " + package.string() +
                         " is missing (set MKB_DATA_DIR to the workbench's data)");
    }
    std::vector<std::string> relativePaths;
    // Like os.walk in fingerprint.py: linked folders are not entered, __pycache__ is skipped.
    WalkOptions walk;
    walk.followLinks = false;
    const std::vector<WalkProblem> problems = walkFolder(
        package,
        [&](const WalkEntry& entry) {
            if (entry.kind == WalkEntryKind::Folder) {
                return entry.path.filename() != "__pycache__";
            }
            if (entry.kind == WalkEntryKind::RegularFile && entry.path.extension() == ".py") {
                relativePaths.push_back(entry.path.lexically_relative(packageDir).generic_string());
            }
            return false;
        },
        walk);
    if (!problems.empty()) {
        return makeError("cannot list the grader package: " + problems.front().path.string() + ": " +
                         problems.front().message);
    }
    if (fs::is_regular_file(packageDir / "mkb_cuda.py", ec)) {
        relativePaths.emplace_back("mkb_cuda.py");
    }
    std::sort(relativePaths.begin(), relativePaths.end());
    std::string hashed;
    for (const std::string& relative : relativePaths) {
        auto content = readFile(packageDir / relative);
        if (!content) {
            return content.error();
        }
        hashed += relative;
        hashed += '\0';
        hashed += *content;
        hashed += '\0';
    }
    return sha256Hex(hashed);
}

} // namespace mkb
