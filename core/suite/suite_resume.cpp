// Resuming a suite check: reads an earlier --json report back into ProblemChecks and decides which still hold.
#include "core/suite/suite_resume.h"

#include "core/catalog/catalog.h"
#include "core/suite/suite_report.h"
#include "core/util/json_fields.h"
#include "core/util/json_input.h"
#include "core/util/shell_words.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"
#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace mkb {
namespace {

using Json = nlohmann::json;

/// True when `device` is `devices` or one of its comma-separated members (a pool: "cuda:0,cuda:1").
bool amongDevices(const std::string& device, const std::string& devices) {
    std::size_t start = 0;
    while (start <= devices.size()) {
        const std::size_t end = std::min(devices.find(',', start), devices.size());
        if (devices.compare(start, end - start, device) == 0) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

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

FlakinessCheck flakinessFromJson(const Json& object) {
    FlakinessCheck repeat;
    repeat.dsl = jsonText(object, "dsl");
    repeat.gradings = jsonWhole(object, "gradings").value_or(0);
    repeat.held = jsonWhole(object, "correct").value_or(0);
    repeat.failures = jsonTexts(object, "failures");
    repeat.pooled = jsonFlag(object, "pooled").value_or(false);
    repeat.drawsPerGrading = jsonWhole(object, "draws_per_grading").value_or(0);
    repeat.sharedDraws = jsonFlag(object, "shared_draws").value_or(false);
    return repeat;
}

} // namespace

Result<EarlierSuiteReport> loadEarlierSuiteReport(const std::filesystem::path& path, const std::string& label) {
    auto text = readFile(path);
    if (!text) {
        return makeError(label + " " + path.string() + ": " + text.error().message);
    }
    Json root = parseJsonInputOrDiscarded<Json>(*text);
    if (root.is_discarded() || !root.is_object() || !root.contains("problems") || !root["problems"].is_array()) {
        return makeError(label + " " + path.string() +
                         ": not a report of `mkb suite check --json` (no JSON object with a \"problems\" list)");
    }
    EarlierSuiteReport earlier;
    earlier.path = path;
    earlier.graderFingerprint = jsonText(root, "grader_fingerprint");
    earlier.boundary = boundaryOrLegacy(jsonText(root, "boundary"));
    earlier.device = jsonText(root, "device");
    earlier.dsls = jsonTexts(root, "dsls");
    earlier.gradings = jsonWhole(root, "gradings").value_or(-1);
    earlier.flakiness = flakinessModeFromName(jsonText(root, "flakiness_mode"));
    earlier.everySolutionRepeated = jsonText(root, "flakiness_scope") == kFlakinessEverySolution;
    earlier.validateOnly = jsonFlag(root, "validate_only").value_or(false);
    for (const Json& entry : root["problems"]) {
        std::string name = entry.is_object() ? jsonText(entry, "name") : std::string();
        if (name.empty()) {
            continue;
        }
        if (!earlier.drawsPerGrading && entry.contains("solutions") && entry["solutions"].is_array()) {
            for (const Json& solution : entry["solutions"]) {
                auto repeat = solution.is_object() ? solution.find("flakiness") : solution.end();
                if (repeat != solution.end() && repeat->is_object()) {
                    if (auto draws = jsonWhole(*repeat, "draws_per_grading"); draws && *draws > 0) {
                        earlier.drawsPerGrading = draws;
                        break;
                    }
                }
            }
        }
        if (!earlier.entries.count(name)) {
            earlier.names.push_back(name);
        }
        earlier.entries[name] = entry.dump();
    }
    earlier.deviceName = jsonText(root, "device_name");
    earlier.date = jsonText(root, "date");
    earlier.command = jsonText(root, "command");
    earlier.commandWords = jsonTexts(root, "command_words");
    if (earlier.commandWords.empty()) {
        earlier.commandWords = shellWords(earlier.command);
    }
    earlier.storePath = jsonText(root, "store", optionValue(earlier.commandWords, "--store"));
    earlier.suiteRoot = jsonText(root, "suite_root");
    if (auto peaks = root.find("peaks"); peaks != root.end() && peaks->is_object()) {
        earlier.peaksJson = peaks->dump();
    }
    earlier.peaksNote = jsonText(root, "peaks_note");
    if (auto target = root.find("eager_target_ms"); target != root.end() && target->is_number()) {
        earlier.eagerTargetMs = target->get<double>();
    }
    earlier.catalogIssues = jsonTexts(root, "catalog_issues");
    earlier.unchecked = jsonTexts(root, "unchecked");
    return earlier;
}

Result<ProblemCheck> reusableCheck(const EarlierSuiteReport& earlier, const Problem& problem,
                                   const SuiteCheckOptions& options, const std::string& graderFingerprint) {
    auto found = earlier.entries.find(problem.name());
    if (found == earlier.entries.end()) {
        return makeError("not in the earlier report");
    }
    if (earlier.graderFingerprint != graderFingerprint) {
        return makeError("the grader changed");
    }
    if (earlier.boundary != options.settings.boundary) {
        return makeError("it was graded under boundary " + earlier.boundary + ", this check grades under " +
                         options.settings.boundary);
    }
    if (earlier.validateOnly != options.validateOnly) {
        return makeError(earlier.validateOnly ? "it was validated alone (--validate-only), its solutions not graded"
                                              : "it was checked with its solutions, not validated alone");
    }
    if (earlier.dsls != options.dsls || earlier.gradings != options.gradings ||
        earlier.flakiness != options.flakiness) {
        return makeError("the DSLs or flakiness settings differ");
    }
    if (!earlier.everySolutionRepeated && options.gradings > 1) {
        return makeError("its flakiness repeats covered one solution, not each");
    }
    const Json entry = Json::parse(found->second);
    const std::string checkedOn = jsonText(entry, "device", earlier.device);
    if (!amongDevices(checkedOn, options.device)) {
        return makeError("it was checked on another device");
    }
    const std::string thenName = entry.contains("validation") && entry["validation"].is_object()
                                     ? jsonText(entry["validation"], "device_name", earlier.deviceName)
                                     : earlier.deviceName;
    if (auto now = options.deviceNames.find(checkedOn);
        now != options.deviceNames.end() && !now->second.empty() && !thenName.empty() && thenName != now->second) {
        return makeError("it was checked on " + thenName + ", not " + now->second);
    }
    if (jsonFlag(entry, "infrastructure_error").value_or(true)) {
        return makeError("it ended with an infrastructure error");
    }
    auto check = checkFromReport(earlier, problem);
    if (!check) {
        return check;
    }
    // A step that did not fit in memory says nothing about the problem: check it again (more memory may be free now).
    for (const std::string& issue : check->validation.issues) {
        if (issue.rfind("cannot check ", 0) == 0) {
            return makeError("a validation step did not fit in memory then");
        }
    }
    check->reused = true;
    return check;
}

Result<ProblemCheck> checkFromReport(const EarlierSuiteReport& earlier, const Problem& problem) {
    auto found = earlier.entries.find(problem.name());
    if (found == earlier.entries.end()) {
        return makeError("not in the earlier report");
    }
    const Json entry = Json::parse(found->second);
    if (jsonText(entry, "problem_fingerprint") != problem.fingerprint) {
        return makeError("the problem file changed");
    }

    ProblemCheck check;
    check.problem = problem;
    check.infrastructureError = jsonFlag(entry, "infrastructure_error").value_or(true);
    check.device = jsonText(entry, "device");
    if (auto seconds = jsonNumber(entry, "check_s"); seconds && *seconds >= 0) {
        check.checkSeconds = seconds;
    }
    check.problems = jsonTexts(entry, "issues");
    auto validation = entry.find("validation");
    if (validation == entry.end() || !validation->is_object()) {
        return makeError("its validation is missing");
    }
    auto parsed = validationFromJson(validation->dump());
    if (!parsed) {
        return makeError("its validation is unreadable");
    }
    check.validation = *parsed;
    check.validation.json = validation->dump();
    auto solutions = entry.find("solutions");
    if (solutions == entry.end() || !solutions->is_array()) {
        return makeError("its solutions are missing");
    }
    for (const Json& item : *solutions) {
        SolutionCheck solution;
        solution.dsl = jsonText(item, "dsl");
        solution.path = solutionPath(problem, solution.dsl); // where this checkout has it, not where the report was
        solution.present = jsonFlag(item, "present").value_or(false);
        solution.sha256 = jsonText(item, "sha256");
        solution.problem = jsonText(item, "problem");
        solution.prestarted = jsonFlag(item, "prestarted").value_or(false);
        if (solution.present != std::filesystem::is_regular_file(solution.path) ||
            (solution.present && (solution.sha256.empty() || solutionFileSha256(solution.path) != solution.sha256))) {
            return makeError("the " + solution.dsl + " solution changed");
        }
        if (auto verdict = item.find("verdict"); verdict != item.end() && verdict->is_object()) {
            auto read = verdictFromJson(verdict->dump());
            if (!read) {
                return makeError("a verdict is unreadable");
            }
            solution.verdict = *read;
        }
        if (auto flakiness = item.find("flakiness"); flakiness != item.end() && flakiness->is_object()) {
            solution.flakiness = flakinessFromJson(*flakiness);
        }
        check.solutions.push_back(std::move(solution));
    }
    std::vector<std::string> dsls;
    for (const SolutionCheck& solution : check.solutions) {
        dsls.push_back(solution.dsl);
    }
    if (dsls != earlier.dsls) {
        return makeError("its solutions are not those of the chosen DSLs");
    }
    return check;
}

} // namespace mkb
