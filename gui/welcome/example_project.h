// The example project that ships with the workbench: where the installed copy lies and the user's own writable copy.
#pragma once

#include "core/util/result.h"

#include <QString>

namespace mkb::gui {

/// The shipped example store (resourcesDir()/example/reference-cpusim.sqlite): a reference-driver run on the CPU
/// fixture suite, its model labelled reference-solutions (reference kernels, not a model's).
QString shippedExampleProject();

/// The user's copy (userDataDir()/example/reference-cpusim.sqlite), made from the shipped one when missing, so the
/// installed file is never opened for writing. The error names the file and what to do.
Result<QString> userExampleProject();

} // namespace mkb::gui
