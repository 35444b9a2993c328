// reportOptionsFromArguments follows app/cli/cmd_report.cpp's runReport option by option, through the same core
// parsers; tests/paper/tst_paper_tables.cpp compares its tables with the mkb binary's, byte for byte.
#include "gui/paper/paper_table.h"

#include "core/analysis/comparison.h"
#include "core/store/store.h"
#include "core/util/output_file.h"
#include "core/vocabulary/boundary.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace mkb::gui::paper {
namespace {

/// The options `mkb report` takes besides --store, --format and --output, which the manifest sets.
const std::set<std::string> kValueOptions = {"split",    "metrics", "model", "direction",  "family", "problems",
                                             "boundary", "golden",  "delta", "thresholds", "timing"};
constexpr const char* kFlag = "unclipped";

/// The words read as --name VALUE, --name=VALUE and --unclipped, each option once.
struct ReadArguments {
    std::map<std::string, std::string> values;
    bool unclipped = false;

    std::optional<std::string> value(const std::string& name) const {
        const auto found = values.find(name);
        return found == values.end() ? std::nullopt : std::optional<std::string>(found->second);
    }
};

Result<ReadArguments> readArguments(const QStringList& arguments) {
    ReadArguments read;
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const std::string word = arguments[i].toStdString();
        if (word.size() < 3 || word.rfind("--", 0) != 0) {
            return makeError("report takes no positional argument (got '" + word + "'); see mkb report --help");
        }
        std::string name = word.substr(2);
        std::optional<std::string> inlineValue;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (name == kFlag) {
            if (inlineValue) {
                return makeError("--" + name + " takes no value");
            }
            read.unclipped = true;
        } else if (kValueOptions.count(name) > 0) {
            if (!inlineValue && i + 1 >= arguments.size()) {
                return makeError("--" + name + " needs a value");
            }
            const std::string value = inlineValue ? *inlineValue : arguments[++i].toStdString();
            if (!read.values.emplace(name, value).second) {
                return makeError("--" + name + " is given twice");
            }
        } else {
            return makeError("unknown option '--" + name + "' (see mkb report --help)");
        }
    }
    return read;
}

/// --delta's number: finite and wholly a number, as the CLI's doubleOption reads it.
Result<double> readDelta(const std::string& text) {
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (errno != 0 || end == text.c_str() || *end != '\0') {
        return makeError("--delta takes a number, not '" + text + "'");
    }
    if (!std::isfinite(value)) {
        return makeError("--delta takes a finite number, not '" + text + "'");
    }
    if (value < 0) {
        return makeError("--delta must be a non-negative number (got " + text + ")");
    }
    return value;
}

} // namespace

Result<report::ReportOptions> reportOptionsFromArguments(const QStringList& arguments) {
    Result<ReadArguments> read = readArguments(arguments);
    if (!read) {
        return read.error();
    }
    report::ReportOptions options;
    if (auto split = read->value("split")) {
        auto parsed = report::parseReportSplit(*split);
        if (!parsed) {
            return parsed.error();
        }
        options.split = *parsed;
    }
    if (auto metrics = read->value("metrics")) {
        auto parsed = report::parseMetricSets(*metrics);
        if (!parsed) {
            return parsed.error();
        }
        options.metrics = std::move(*parsed);
    }
    if (auto thresholds = read->value("thresholds")) {
        auto parsed = report::parseThresholds(*thresholds);
        if (!parsed) {
            return parsed.error();
        }
        options.settings.thresholds = std::move(*parsed);
    }
    if (auto delta = read->value("delta")) {
        auto parsed = readDelta(*delta);
        if (!parsed) {
            return parsed.error();
        }
        options.settings.delta = *parsed;
    }
    options.settings.clipEffectiveSpeedup = !read->unclipped;
    if (auto timing = read->value("timing")) {
        auto parsed = report::parseTimingRule(*timing);
        if (!parsed) {
            return parsed.error();
        }
        options.settings.timing = *parsed;
    }
    options.model = read->value("model");
    options.direction = read->value("direction");
    options.family = read->value("family");
    options.problems = read->value("problems");
    options.golden = read->value("golden");
    const bool portability = std::find(options.metrics.begin(), options.metrics.end(),
                                       report::MetricSet::KbxPortability) != options.metrics.end();
    if (portability != options.golden.has_value()) {
        return makeError(portability ? "--metrics kbx-portability needs --golden DIR (KernelBench-X's "
                                       "metrics/golden_results, with this GPU's folder from "
                                       "bench/kbx_golden_timing.py)"
                                     : "--golden is read only by --metrics kbx-portability");
    }
    if (auto boundary = read->value("boundary")) {
        if (*boundary != kBoundaryLegacy) {
            auto parsed = parseBoundary(*boundary);
            if (!parsed) {
                return makeError(parsed.error().message + "; or legacy");
            }
        }
        options.boundary = *boundary;
    }
    if (options.direction && !analysis::parseSkillArm(*options.direction + "_skill")) {
        return makeError("--direction '" + *options.direction + "' is not a direction like triton2cuda");
    }
    return options;
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
