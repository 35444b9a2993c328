// The import summary in words, one line, as both `mkb import` and the workbench say it.
#pragma once

#include "core/io/mkb_results_import.h"

#include <string>

namespace mkb {

/// "2 model(s): 5 new trial(s), 0 replaced, 1 unchanged, 7 submission(s), 2 invocation(s); 0 issue(s)".
std::string importCountsText(const ImportSummary& summary);

/// The counts; for an import stopped by its progress callback, "cancelled after 3 of 9 trial(s) (<counts>);
/// importing the folder again completes it".
std::string importOutcomeText(const ImportSummary& summary);

} // namespace mkb
