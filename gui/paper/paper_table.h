// One table of a paper manifest built in this process: its `mkb report` arguments read into report options as the
// verb reads them, the report built from the store by core and written as `mkb report --output` writes it.
#pragma once

#include "core/report/report_model.h"
#include "core/report/report_writers.h"
#include "core/util/result.h"

#include <QString>
#include <QStringList>

namespace mkb::gui::paper {

/// The report a table asks for: `mkb report` arguments (without --store, --format and --output) read with the verb's
/// own option table and checks (report::reportOptionsFromWords); an error names the argument in the verb's words.
Result<report::ReportOptions> reportOptionsFromArguments(const QStringList& arguments);

/// Builds the report of arguments from the store at storePath (opened read-only) and writes it to output in format,
/// byte for byte what `mkb report --store storePath --format format --output output arguments` writes.
Status writeReportTable(const QStringList& arguments, const QString& format, const QString& storePath,
                        const QString& output);

} // namespace mkb::gui::paper
