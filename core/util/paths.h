// Where things live: the default project store, the shipped problems, resources and the grader package.
#pragma once

#include <filesystem>

namespace mkb {

/// The folder holding problems/, resources/ and the grader, first found of:
///   1. $MKB_DATA_DIR;
///   2. the installed layout beside the running binary: <bindir>/../share/mkb (a package or `cmake --install`
///      tree, wherever it was unpacked);
///   3. the source tree this binary was built from (build-tree binaries);
///   4. the data folder under the configured install prefix.
std::filesystem::path dataDir();

/// The installed data folder of the binary at executable, <dir>/../share/mkb, when it holds resources/dsls;
/// empty otherwise. dataDir() asks this of the running binary.
std::filesystem::path installedDataDirBeside(const std::filesystem::path& executable);

std::filesystem::path shippedProblemsDir(); // dataDir()/problems
std::filesystem::path resourcesDir();       // dataDir()/resources
std::filesystem::path graderPackageDir();   // the folder to put on PYTHONPATH (holds mkbgrader/)

/// The per-user data folder: $XDG_DATA_HOME/mkb or ~/.local/share/mkb.
std::filesystem::path userDataDir();

/// The store opened when none is named: $MKB_STORE, else userDataDir()/default.mkb.sqlite.
std::filesystem::path defaultStorePath();

} // namespace mkb
