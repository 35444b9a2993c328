// Building blocks of MetaKernelBench results folders written by tests: a file with its folders, a trial's record.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace mkbtest {

/// Writes text to path, creating the folders above it.
inline void writeText(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

/// A trial's record.json with the given rewards, no error, not skipped and no usage.
inline std::string recordJson(double passed, double speedup) {
    return R"({"rewards": {"imported": 1.0, "correct": )" + std::to_string(passed) + R"(, "speedup_vs_eager": )" +
           std::to_string(speedup) + R"(, "passed": )" + std::to_string(passed) +
           R"(}, "timed_out": false, "error": null, "skipped": null,
              "stamps": {"task_fingerprint": "fp1", "skill_sha256": null}})";
}

} // namespace mkbtest
