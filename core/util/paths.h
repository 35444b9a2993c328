// Where things live: the default project store, the shipped problems, resources and the grader package.
#pragma once

#include <filesystem>

namespace mkb {

/// The folder holding problems/, resources/ and the grader: $MKB_DATA_DIR, else the source tree this
/// binary was built from, else the installed data folder.
std::filesystem::path dataDir();

std::filesystem::path shippedProblemsDir();   // dataDir()/problems
std::filesystem::path resourcesDir();         // dataDir()/resources
std::filesystem::path graderPackageDir();     // the folder to put on PYTHONPATH (holds mkbgrader/)

/// The per-user data folder: $XDG_DATA_HOME/mkb or ~/.local/share/mkb.
std::filesystem::path userDataDir();

/// The store opened when none is named: $MKB_STORE, else userDataDir()/default.mkb.sqlite.
std::filesystem::path defaultStorePath();

} // namespace mkb
