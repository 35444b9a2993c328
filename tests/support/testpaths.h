// Where tests find the source tree, the build tree, the mkb binary and the grader interpreter.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace mkbtest {

inline std::string envOr(const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return value && *value ? value : fallback;
}
inline std::filesystem::path sourceDir() { return envOr("MKB_SOURCE_DIR", MKB_SOURCE_DIR); }
inline std::filesystem::path binaryDir() { return envOr("MKB_BINARY_DIR", "."); }
inline std::string cliPath() { return envOr("MKB_CLI", "mkb"); }
inline std::string testPython() { return envOr("MKB_TEST_PYTHON", "/usr/bin/python3"); }

} // namespace mkbtest
