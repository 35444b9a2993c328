// Resolution of data folders from the environment, the installed layout, the build tree and the install prefix.
#include "core/util/paths.h"

#include "mkb/version.h"

#include <cstdlib>

namespace mkb {
namespace {

// Where an installed tree keeps its data relative to the binaries (GNUInstallDirs: bin/ and share/mkb/).
constexpr const char* kDataBesideBinaries = "../share/mkb";

std::filesystem::path fromEnvironment(const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? std::filesystem::path(value) : std::filesystem::path();
}

bool holdsData(const std::filesystem::path& root) {
    std::error_code ec;
    return std::filesystem::is_directory(root / "resources" / "dsls", ec);
}

// The running binary, read from the kernel (Linux); empty where that is unavailable.
std::filesystem::path runningExecutable() {
    std::error_code ec;
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : self;
}

} // namespace

std::filesystem::path installedDataDirBeside(const std::filesystem::path& executable) {
    if (executable.empty()) {
        return {};
    }
    std::filesystem::path candidate = (executable.parent_path() / kDataBesideBinaries).lexically_normal();
    return holdsData(candidate) ? candidate : std::filesystem::path();
}

std::filesystem::path dataDir() {
    if (auto fromEnv = fromEnvironment("MKB_DATA_DIR"); !fromEnv.empty()) {
        return fromEnv;
    }
    static const std::filesystem::path besideBinary = installedDataDirBeside(runningExecutable());
    if (!besideBinary.empty()) {
        return besideBinary;
    }
    std::filesystem::path source(kSourceDir);
    if (holdsData(source)) {
        return source;
    }
    return std::filesystem::path(kInstallDataDir);
}

std::filesystem::path shippedProblemsDir() {
    return dataDir() / "problems";
}
std::filesystem::path resourcesDir() {
    return dataDir() / "resources";
}

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
