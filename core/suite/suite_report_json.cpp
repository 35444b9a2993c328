// The suite check as JSON: everything, the grader's own validation and verdict objects inside (`--json`, `--resume`).
#include "core/suite/suite_report.h"

#include "core/util/json_input.h"
#include "core/wire/verdict_json.h"

#include <nlohmann/json.hpp>

namespace mkb {
namespace {

using Json = nlohmann::ordered_json;

Json verdictObject(const Verdict& verdict) {
    Json object = Json::parse(withNonFiniteAsNull(verdict.json), nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
        object = Json::parse(verdictToJson(verdict), nullptr, false);
    }
    if (!verdict.device.empty()) {
        object["device"] = verdict.device; // the device that graded it (a pool device with --devices)
    }
    return object;
}

Json flakinessObject(const FlakinessCheck& flakiness) {
    Json object = {{"dsl", flakiness.dsl},       {"gradings", flakiness.gradings},
                   {"correct", flakiness.held},  {"failures", flakiness.failures},
                   {"pooled", flakiness.pooled}, {"draws_per_grading", flakiness.drawsPerGrading}};
    if (flakiness.sharedDraws) {
        object["shared_draws"] = true;
    }
    return object;
}

} // namespace

std::string suiteReportJson(const SuiteCheckReport& report) {
    Json root;
    root["command"] = report.command;
    root["command_words"] = report.commandWords;
    root["suite_root"] = report.suiteRoot.string();
    root["store"] = report.storePath.string();
    root["date"] = report.date;
    root["device"] = report.device;
    root["device_name"] = report.deviceName;
    root["grader_fingerprint"] = report.graderFingerprint;
    root["boundary"] = report.boundary;
    Json peaks = report.peaksJson.empty() ? Json(nullptr) : Json::parse(report.peaksJson, nullptr, false);
    root["peaks"] = peaks.is_discarded() ? Json(nullptr) : peaks;
    root["peaks_note"] = report.peaksNote;
    root["dsls"] = report.dsls;
    root["gradings"] = report.gradings;
    root["flakiness_mode"] = flakinessModeName(report.flakiness);
    root["flakiness_scope"] = kFlakinessEverySolution;
    root["eager_target_ms"] = report.eagerTargetMs;
    if (report.validateOnly) { // only then, so that a full check's report reads as it always did
        root["validate_only"] = true;
    }
    root["clean"] = report.clean();
    root["complete"] = report.unchecked.empty();
    root["unchecked"] = report.unchecked;
    root["summary"] = suiteSummary(report);
    root["catalog_issues"] = report.catalogIssues;
    Json problems = Json::array();
    for (const ProblemCheck& check : report.problems) {
        Json entry;
        entry["name"] = check.problem.name();
        entry["number"] = check.problem.number;
        entry["family"] = check.problem.family;
        entry["slug"] = check.problem.slug;
        entry["title"] = check.problem.title;
        entry["tags"] = check.problem.meta.tags;
        entry["path"] = check.problem.path.string();
        entry["problem_fingerprint"] = check.problem.fingerprint;
        entry["clean"] = check.clean();
        entry["reused"] = check.reused;
        entry["device"] = check.device;
        entry["check_s"] = check.checkSeconds ? Json(*check.checkSeconds) : Json(nullptr);
        entry["infrastructure_error"] = check.infrastructureError;
        entry["issues"] = check.problems;
        Json validation = Json::parse(check.validation.json, nullptr, false);
        entry["validation"] = validation.is_discarded() ? Json(nullptr) : validation;
        Json solutions = Json::array();
        for (const SolutionCheck& solution : check.solutions) {
            Json item;
            item["dsl"] = solution.dsl;
            item["path"] = solution.path.string();
            item["present"] = solution.present;
            item["sha256"] = solution.sha256;
            item["passed"] = solution.verdict && solution.verdict->passed;
            item["problem"] = solution.problem;
            item["verdict"] = solution.verdict ? verdictObject(*solution.verdict) : Json(nullptr);
            item["flakiness"] = solution.flakiness ? flakinessObject(*solution.flakiness) : Json(nullptr);
            item["prestarted"] = solution.prestarted;
            solutions.push_back(std::move(item));
        }
        entry["solutions"] = std::move(solutions);
        problems.push_back(std::move(entry));
    }
    root["problems"] = std::move(problems);
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace mkb
