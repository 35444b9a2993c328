// Resolution of data folders from the environment, the build tree and the install prefix.
#include "core/util/paths.h"

#include "mkb/version.h"

#include <cstdlib>

namespace mkb {
namespace {

std::filesystem::path fromEnvironment(const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? std::filesystem::path(value) : std::filesystem::path();
}

} // namespace

std::filesystem::path dataDir() {
    if (auto fromEnv = fromEnvironment("MKB_DATA_DIR"); !fromEnv.empty()) {
        return fromEnv;
    }
    std::error_code ec;
    std::filesystem::path source(kSourceDir);
    if (std::filesystem::exists(source / "resources" / "dsls", ec)) {
        return source;
    }
    return std::filesystem::path(kInstallDataDir);
}

std::filesystem::path shippedProblemsDir() { return dataDir() / "problems"; }
std::filesystem::path resourcesDir() { return dataDir() / "resources"; }

std::filesystem::path graderPackageDir() {
    std::filesystem::path root = dataDir();
    std::error_code ec;
    if (std::filesystem::exists(root / "core" / "grader", ec)) {
        return root / "core" / "grader";
    }
    return root / "grader";
}

std::filesystem::path userDataDir() {
    if (auto xdg = fromEnvironment("XDG_DATA_HOME"); !xdg.empty()) {
        return xdg / "mkb";
    }
    if (auto home = fromEnvironment("HOME"); !home.empty()) {
        return home / ".local" / "share" / "mkb";
    }
    return std::filesystem::current_path() / ".mkb";
}

std::filesystem::path defaultStorePath() {
    if (auto fromEnv = fromEnvironment("MKB_STORE"); !fromEnv.empty()) {
        return fromEnv;
    }
    return userDataDir() / "default.mkb.sqlite";
}

} // namespace mkb
