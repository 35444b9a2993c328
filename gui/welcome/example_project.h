// The example project that ships with the workbench: where the installed copy lies and the user's own writable copy.
#pragma once

#include "core/util/result.h"

#include <QString>

namespace mkb::gui {

/// The example stores that ship (resources/example/README.md says where each comes from).
enum class ExampleProject {
    ReferenceCpusim, // reference-cpusim.sqlite: a reference-driver run on the CPU fixture suite, its model labelled
                     // reference-solutions (reference kernels, not a model's)
    KbxCorpusH200,   // kbx-corpus-h200.sqlite: KernelBench-X's corpus regraded on an NVIDIA H200 under both
                     // boundaries, its transitions re-timed
};

/// The shipped example store (resourcesDir()/example/<file>).
QString shippedExampleProject(ExampleProject example = ExampleProject::ReferenceCpusim);

/// The user's copy (userDataDir()/example/<file>), made from the shipped one when missing, so the installed file is
/// never opened for writing. The error names the file and what to do.
Result<QString> userExampleProject(ExampleProject example = ExampleProject::ReferenceCpusim);

} // namespace mkb::gui
