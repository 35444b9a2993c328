// `mkb report`'s options, declared once (name, type, default, range, help): the verb parses its command line with
// them, and the paper build reads a manifest table's arguments with the same table and the same mapping, so the two
// cannot disagree on what a word means.
#pragma once

#include "core/report/report_model.h"
#include "core/util/option_table.h"
#include "core/util/result.h"

#include <string>
#include <vector>

namespace mkb::report {

/// Every option of `mkb report`: --store, --format and --output (where the tables go), then what they hold.
const OptionTable& reportOptionTable();

/// The options that say where the tables go rather than what they hold; a paper manifest sets these itself.
inline const std::vector<std::string> kReportDestinationOptions = {"store", "format", "output"};

/// What a parsed `mkb report` command line asks for (the split, metrics, filters, settings and boundary), each
/// value checked; the first problem found is the error, in the verb's words.
Result<ReportOptions> reportOptionsFrom(const ParsedOptions& parsed);

/// A manifest table's arguments (the words after `mkb report`, without --store, --format or --output) read as the
/// verb reads them: the same table and mapping, and the verb's messages. A destination option or a positional word
/// is refused.
Result<ReportOptions> reportOptionsFromWords(const std::vector<std::string>& words);

} // namespace mkb::report
