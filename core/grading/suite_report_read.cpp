// Reading a suite report back for rendering: heading facts from the JSON root, each problem through checkFromReport.
#include "core/grading/suite_report_read.h"

#include "core/catalog/catalog.h"
#include "core/grading/boundary.h"
#include "core/grading/suite_resume.h"
#include "core/util/json_fields.h"
#include "core/util/json_input.h"
#include "core/util/shell_words.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

namespace mkb {
namespace {

using Json = nlohmann::json;

/// The value of `--name VALUE` or `--name=VALUE` among the words; "" when absent.
std::string optionValue(const std::vector<std::string>& words, const std::string& name) {
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (words[i] == name && i + 1 < words.size()) {
            return words[i + 1];
        }
        if (words[i].rfind(name + "=", 0) == 0) {
            return words[i].substr(name.size() + 1);
        }
    }
    return "";
}

} // namespace

Result<SuiteCheckReport> readSuiteReport(const std::filesystem::path& reportPath,
                                         const std::filesystem::path& suiteRoot) {
    auto earlier = loadEarlierSuiteReport(reportPath);
    if (!earlier) {
        return makeError(earlier.error().message);
    }
    auto text = readFile(reportPath);
    if (!text) {
        return makeError(reportPath.string() + ": " + text.error().message);
    }
    const Json root = parseJsonInputOrDiscarded<Json>(*text);

    SuiteCheckReport report;
    report.dsls = earlier->dsls;
    report.gradings = earlier->gradings;
    report.pooledFlakiness = earlier->pooledFlakiness;
    report.device = earlier->device;
    report.deviceName = jsonText(root, "device_name");
    report.graderFingerprint = earlier->graderFingerprint;
    report.boundary = earlier->boundary;
    report.peaksNote = jsonText(root, "peaks_note");
    if (auto peaks = root.find("peaks"); peaks != root.end() && peaks->is_object()) {
        report.peaksJson = peaks->dump();
    }
    report.date = jsonText(root, "date");
    report.command = jsonText(root, "command");
    // Reports written before these fields existed: the words are the recorded command line's, the store its --store.
    report.commandWords = jsonTexts(root, "command_words");
    if (report.commandWords.empty()) {
        report.commandWords = shellWords(report.command);
    }
    const std::string store = jsonText(root, "store");
    report.storePath = store.empty() ? optionValue(report.commandWords, "--store") : store;
    const std::string checkedRoot = jsonText(root, "suite_root");
    report.suiteRoot = checkedRoot.empty() ? suiteRoot : std::filesystem::path(checkedRoot);
    if (auto target = root.find("eager_target_ms"); target != root.end() && target->is_number()) {
        report.eagerTargetMs = target->get<double>();
    }
    report.catalogIssues = jsonTexts(root, "catalog_issues");
    report.unchecked = jsonTexts(root, "unchecked");
    for (const Json& entry : root["problems"]) {
        if (!entry.is_object() || !entry.contains("solutions") || !entry["solutions"].is_array()) {
            continue;
        }
        for (const Json& solution : entry["solutions"]) {
            if (auto flakiness = solution.find("flakiness"); flakiness != solution.end() && flakiness->is_object()) {
                if (auto draws = flakiness->find("draws_per_grading");
                    draws != flakiness->end() && draws->is_number()) {
                    report.drawsPerGrading = draws->get<int>();
                }
            }
        }
    }

    const Catalog catalog = loadCatalog({suiteRoot});
    for (const Json& entry : root["problems"]) {
        const std::string name = entry.is_object() ? jsonText(entry, "name") : std::string();
        if (name.empty()) {
            continue;
        }
        const Problem* problem = catalog.find(name);
        if (!problem) {
            return makeError(reportPath.string() + ": " + name + " is not a problem of " + suiteRoot.string() +
                             " (the report was made for another suite, or the problem was removed)");
        }
        auto check = checkFromReport(*earlier, *problem);
        if (!check) {
            return makeError(reportPath.string() + ": " + name + ": " + check.error().message +
                             " since the report was made; check it again (mkb suite check --resume " +
                             reportPath.string() + ")");
        }
        report.problems.push_back(std::move(check).value());
    }
    return report;
}

} // namespace mkb
