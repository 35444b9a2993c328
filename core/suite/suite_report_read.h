// Reading a suite report back for rendering (`mkb suite table`): the heading facts and every problem's check of an
// earlier `mkb suite check --json`, matched to the problem files of a checkout of the suite.
#pragma once

#include "core/suite/suite_check.h"
#include "core/util/result.h"

#include <filesystem>

namespace mkb {

/// The report at `reportPath` as a SuiteCheckReport, its problems taken from the suite at `suiteRoot` (this
/// checkout's files; the report may have been made on another machine). The error names the report and what is
/// wrong: unreadable, not a suite report, a problem the suite no longer has, or a problem or solution file that
/// changed since the report was made (the table would describe files that are not there any more).
Result<SuiteCheckReport> readSuiteReport(const std::filesystem::path& reportPath,
                                         const std::filesystem::path& suiteRoot);

} // namespace mkb
