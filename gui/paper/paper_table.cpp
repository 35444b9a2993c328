// The paper build's tables: a manifest table's arguments are read with `mkb report`'s own option table and mapping
// (core/report/report_options.h), and the table is built by the same report model; tests/paper/tst_paper_tables.cpp
// compares its tables with the mkb binary's, byte for byte.
#include "gui/paper/paper_table.h"

#include "core/report/report_options.h"
#include "core/store/store.h"
#include "core/util/output_file.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mkb::gui::paper {

Result<report::ReportOptions> reportOptionsFromArguments(const QStringList& arguments) {
    std::vector<std::string> words;
    words.reserve(static_cast<std::size_t>(arguments.size()));
    for (const QString& argument : arguments) {
        words.push_back(argument.toStdString());
    }
    return report::reportOptionsFromWords(words);
}

Status writeReportTable(const QStringList& arguments, const QString& format, const QString& storePath,
                        const QString& output) {
    Result<report::ReportFormat> parsedFormat = report::parseReportFormat(format.toStdString());
    if (!parsedFormat) {
        return parsedFormat.error();
    }
    Result<report::ReportOptions> options = reportOptionsFromArguments(arguments);
    if (!options) {
        return options.error();
    }
    const std::filesystem::path store = storePath.toStdString();
    const std::filesystem::path target = output.toStdString();
    const OutputRules rules{"the table's output", storeFiles(store)};
    if (Status writable = checkOutputPath(target, rules); !writable) {
        return writable;
    }
    auto opened = Store::open(store, OpenMode::ReadExisting);
    if (!opened) {
        return opened.error();
    }
    Result<report::Report> built = report::buildReportFromStore(**opened, *options);
    if (!built) {
        return built.error();
    }
    return writeOutputFile(target, report::renderReport(*built, *parsedFormat), rules);
}

} // namespace mkb::gui::paper
