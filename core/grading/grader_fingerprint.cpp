// Hashing the grader package exactly as mkbgrader/fingerprint.py does, so planning needs no Python.
#include "core/grading/grader_fingerprint.h"

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
    for (auto it = fs::recursive_directory_iterator(package, ec); it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (ec) {
            return makeError("cannot list " + package.string() + ": " + ec.message());
        }
        if (it->is_directory() && it->path().filename() == "__pycache__") {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file() && it->path().extension() == ".py") {
            relativePaths.push_back(it->path().lexically_relative(packageDir).generic_string());
        }
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
