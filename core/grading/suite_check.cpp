// Suite validation through one grader session, and its summary, JSON and markdown table.
#include "core/grading/suite_check.h"

#include "core/catalog/catalog.h"
#include "core/grading/gpu_lock.h"
#include "core/grading/verdict_json.h"
#include "core/util/json_input.h"
#include "core/util/sha256.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <unistd.h>

namespace mkb {
namespace {

using Json = nlohmann::ordered_json;

std::optional<double> optionalNumber(const Json& object, const char* key) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_number()) {
        return std::nullopt;
    }
    return it->get<double>();
}

std::optional<bool> optionalBool(const Json& object, const char* key) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_boolean()) {
        return std::nullopt;
    }
    return it->get<bool>();
}

std::string stringOr(const Json& object, const char* key, const std::string& fallback = "") {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string format(const char* pattern, double value) {
    char text[64];
    std::snprintf(text, sizeof text, pattern, value);
    return text;
}

std::string shortError(const std::string& text, std::size_t limit = 300) {
    std::string line = text.substr(0, text.find('\n'));
    return line.size() > limit ? line.substr(0, limit) + "…" : line;
}

std::string requestId(const char* prefix, long counter) {
    return std::string(prefix) + std::to_string(::getpid()) + "-" + std::to_string(counter);
}

/// One line for a solution that did not pass its full grading.
std::string solutionFailure(const Verdict& verdict) {
    if (verdict.infrastructureError) {
        return "grader failure at stage " + verdict.stage + ": " + shortError(verdict.error);
    }
    if (verdict.timedOut) {
        return "timed out at stage " + verdict.stage + ": " + shortError(verdict.error);
    }
    std::string what = verdict.error.empty() ? verdict.mismatch : verdict.error;
    return "fails at stage " + verdict.stage + ": " + shortError(what);
}

std::string yesNoCount(int count, int total) {
    return std::to_string(count) + "/" + std::to_string(total);
}

} // namespace

Result<ProblemValidation> validationFromJson(const std::string& objectText) {
    Json object = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(objectText));
    if (object.is_discarded() || !object.is_object()) {
        return makeError("the grader's validation is not a JSON object; update the grader");
    }
    if (!object.contains("clean") || !object["clean"].is_boolean() || !object.contains("issues") ||
        !object["issues"].is_array()) {
        return makeError("the grader's validation lacks a boolean \"clean\" or an \"issues\" list; update the grader");
    }
    ProblemValidation validation;
    validation.clean = object["clean"].get<bool>();
    validation.error = stringOr(object, "error");
    validation.deterministic = optionalBool(object, "deterministic");
    validation.determinismNote = stringOr(object, "determinism_note");
    validation.nearZero = optionalBool(object, "near_zero");
    validation.sensitive = optionalBool(object, "sensitive");
    validation.eagerMedianMs = optionalNumber(object, "eager_median_ms");
    validation.eagerIqrMs = optionalNumber(object, "eager_iqr_ms");
    validation.eagerTargetMs = optionalNumber(object, "eager_target_ms").value_or(0.05);
    validation.eagerOk = optionalBool(object, "eager_ok");
    validation.deviceName = stringOr(object, "device_name");
    validation.seconds = optionalNumber(object, "seconds").value_or(0);
    for (const Json& issue : object["issues"]) {
        if (issue.is_string()) {
            validation.issues.push_back(issue.get<std::string>());
        }
    }
    if (object.contains("near_zero_outputs") && object["near_zero_outputs"].is_array()) {
        for (const Json& note : object["near_zero_outputs"]) {
            if (note.is_string()) {
                validation.nearZeroOutputs.push_back(note.get<std::string>());
            }
        }
    }
    if (object.contains("inputs") && object["inputs"].is_array()) {
        for (const Json& entry : object["inputs"]) {
            if (!entry.is_object()) {
                continue;
            }
            InputSensitivity input;
            input.index = static_cast<int>(optionalNumber(entry, "index").value_or(0));
            input.name = stringOr(entry, "name");
            input.description = stringOr(entry, "description");
            input.tensor = optionalBool(entry, "tensor").value_or(false);
            input.changed = optionalBool(entry, "changed");
            input.exempt = optionalBool(entry, "exempt").value_or(false);
            input.maxDiff = optionalNumber(entry, "max_diff");
            input.allowance = optionalNumber(entry, "allowance");
            input.note = stringOr(entry, "note");
            input.skipped = stringOr(entry, "skipped");
            input.error = optionalBool(entry, "error").value_or(false);
            validation.inputs.push_back(std::move(input));
        }
    }
    validation.json = object.dump();
    return validation;
}

ProblemValidation failedValidation(const std::string& message) {
    ProblemValidation validation;
    validation.infrastructureError = true;
    validation.error = message;
    validation.issues.push_back(message);
    Json object = {{"clean", false}, {"error", message}, {"infrastructure_error", true}, {"issues", {message}}};
    validation.json = object.dump();
    return validation;
}

std::string validateRequestJson(const ValidateRequest& request, const std::string& id) {
    Json line;
    line["type"] = "validate";
    line["id"] = id;
    line["problem"] = request.problemPath.string();
    line["device"] = request.device;
    line["eager_target_ms"] = request.eagerTargetMs;
    line["settings"] = {{"warmup_draws", request.settings.warmupDraws},
                        {"timing_draws", request.settings.timingDraws},
                        {"timeout_s", request.settings.timeoutS}};
    if (!request.problemMetaJson.empty()) {
        Json meta = Json::parse(request.problemMetaJson, nullptr, false);
        if (!meta.is_discarded() && meta.is_object()) {
            line["problem_meta"] = meta;
        }
    }
    return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

ProblemValidation validateProblem(GraderProcess& grader, const ValidateRequest& request, bool lockDevice,
                                  const std::atomic<bool>* cancel) {
    std::optional<GpuLock> lock;
    if (lockDevice) {
        auto acquired = GpuLock::acquire(request.device, {}, cancel);
        if (!acquired) {
            return failedValidation(acquired.error().message);
        }
        lock.emplace(std::move(acquired).value());
    }
    static long counter = 0;
    const std::string id = requestId("v", ++counter);
    auto reply = grader.exchange(validateRequestJson(request, id), id, request.settings.timeoutS + 30, {}, cancel);
    if (!reply) {
        return failedValidation("validation failed in the grader: " + shortError(reply.error().message));
    }
    Json message = parseJsonInputOrDiscarded<Json>(withNonFiniteAsNull(reply->line));
    if (message.value("type", "") == "error") {
        return failedValidation("the grader refused the validate request: " +
                                shortError(stringOr(message, "message", message.dump())));
    }
    if (!message.contains("validation") || !message["validation"].is_object()) {
        return failedValidation("the grader's reply has no \"validation\" object; update the grader");
    }
    auto validation = validationFromJson(message["validation"].dump());
    if (!validation) {
        return failedValidation(validation.error().message);
    }
    return std::move(validation).value();
}

std::string solutionFileSha256(const std::filesystem::path& path) {
    auto bytes = readFile(path);
    return bytes ? sha256Hex(*bytes) : std::string();
}

void creditPooledGradings(const Verdict& pooled, int gradings, int drawsPerGrading, int firstNumber,
                          FlakinessCheck& into) {
    const bool completed = !pooled.infrastructureError && !pooled.timedOut && pooled.compliant &&
                           pooled.totalDraws == gradings * drawsPerGrading;
    std::vector<bool> failed(static_cast<size_t>(std::max(0, gradings)), !completed);
    for (int draw : pooled.failedDraws) {
        if (draw >= 0 && drawsPerGrading > 0 && draw / drawsPerGrading < gradings) {
            failed[static_cast<size_t>(draw / drawsPerGrading)] = true;
        }
    }
    const std::string why = shortError(pooled.mismatch.empty() ? pooled.error : pooled.mismatch);
    for (int g = 0; g < gradings; ++g) {
        ++into.gradings;
        if (!failed[static_cast<size_t>(g)]) {
            ++into.held;
        } else if (into.failures.size() < 3) {
            into.failures.push_back("grading " + std::to_string(firstNumber + g) + " (pooled draws " +
                                    std::to_string(g * drawsPerGrading + 1) + "-" +
                                    std::to_string((g + 1) * drawsPerGrading) + "): " + why);
        }
    }
}

bool correctnessHeld(const Verdict& verdict) {
    return !verdict.infrastructureError && !verdict.timedOut && verdict.compliant && verdict.totalDraws > 0 &&
           verdict.correctDraws == verdict.totalDraws && verdict.recheckCorrect != std::optional<bool>(false);
}

ProblemCheck checkProblem(GraderProcess& grader, const Problem& problem, const SuiteCheckOptions& options,
                          const std::function<void(const std::string&)>& progress, const std::atomic<bool>* cancel) {
    auto say = [&](const std::string& what) {
        if (progress) {
            progress(what);
        }
    };
    ProblemCheck check;
    check.problem = problem;
    const std::string name = problem.name();
    const std::string metaJson = problemMetaJson(problem.meta);

    say("validate");
    ValidateRequest validate;
    validate.problemPath = problem.path;
    validate.device = options.device;
    validate.settings = options.settings;
    validate.eagerTargetMs = options.eagerTargetMs;
    validate.problemMetaJson = metaJson;
    check.validation = validateProblem(grader, validate, options.lockDevice, cancel);
    check.infrastructureError = check.validation.infrastructureError;
    for (const std::string& issue : check.validation.issues) {
        check.problems.push_back(name + ": " + issue);
    }

    auto gradeOnce = [&](const SolutionCheck& solution, const GradeSettings& settings) {
        GradeRequest request;
        request.problemPath = problem.path;
        request.kernelPath = solution.path;
        request.dsl = solution.dsl;
        request.dslDescriptorJson = options.descriptors.at(solution.dsl);
        request.device = options.device;
        request.settings = settings;
        request.peaksJson = options.peaksJson;
        request.problemMetaJson = metaJson;
        return grader.grade(request, {}, cancel);
    };

    for (const std::string& dsl : options.dsls) {
        if (cancel && cancel->load()) {
            break;
        }
        SolutionCheck solution;
        solution.dsl = dsl;
        solution.path = solutionPath(problem, dsl);
        std::error_code ec;
        solution.present = std::filesystem::is_regular_file(solution.path, ec);
        if (solution.present) {
            solution.sha256 = solutionFileSha256(solution.path);
        }
        if (!options.descriptors.count(dsl)) {
            auto why = options.descriptorErrors.find(dsl);
            solution.problem = name + " [" + dsl + "]: cannot grade: " +
                               (why != options.descriptorErrors.end() ? why->second : "no descriptor for " + dsl);
        } else if (!solution.present) {
            solution.problem = name + " [" + dsl + "]: missing solution " + solution.path.string();
        } else {
            say("grade " + dsl);
            solution.verdict = gradeOnce(solution, options.settings);
            if (!solution.verdict->passed) {
                solution.problem = name + " [" + dsl + "]: " + solutionFailure(*solution.verdict);
                check.infrastructureError = check.infrastructureError || solution.verdict->infrastructureError;
            }
        }
        if (!solution.problem.empty()) {
            check.problems.push_back(solution.problem);
        }
        check.solutions.push_back(std::move(solution));
    }

    if (options.gradings >= 1) {
        const SolutionCheck* chosen = nullptr;
        for (const SolutionCheck& solution : check.solutions) {
            if (solution.verdict && solution.verdict->passed) {
                chosen = &solution;
                break;
            }
        }
        // With no passing solution there is nothing to repeat; the solutions' own lines already say why.
        if (chosen) {
            FlakinessCheck flakiness;
            flakiness.dsl = chosen->dsl;
            flakiness.gradings = 1;
            flakiness.held = correctnessHeld(*chosen->verdict) ? 1 : 0;
            GradeSettings correctnessOnly = options.settings;
            correctnessOnly.warmupDraws = 0;
            correctnessOnly.timingDraws = 0;
            correctnessOnly.recheckDraws = 0;
            correctnessOnly.outliers = false; // outlier draws never decide correctness; they only cost time
            flakiness.pooled = options.pooledFlakiness;
            flakiness.drawsPerGrading = options.settings.correctnessDraws;
            if (options.pooledFlakiness) {
                if (options.gradings > 1 && !(cancel && cancel->load())) {
                    const int repeats = options.gradings - 1;
                    GradeSettings pooled = correctnessOnly;
                    pooled.correctnessDraws = repeats * options.settings.correctnessDraws;
                    pooled.timeoutS = options.settings.timeoutS * repeats; // the bound the separate gradings had in all
                    say("flakiness 2-" + std::to_string(options.gradings) + "/" + std::to_string(options.gradings) +
                        " pooled (" + std::to_string(pooled.correctnessDraws) + " draws)");
                    Verdict verdict = gradeOnce(*chosen, pooled);
                    creditPooledGradings(verdict, repeats, options.settings.correctnessDraws, 2, flakiness);
                    check.infrastructureError = check.infrastructureError || verdict.infrastructureError;
                }
            } else {
                for (int round = 1; round < options.gradings; ++round) {
                    if (cancel && cancel->load()) {
                        break;
                    }
                    say("flakiness " + std::to_string(round + 1) + "/" + std::to_string(options.gradings));
                    Verdict verdict = gradeOnce(*chosen, correctnessOnly);
                    ++flakiness.gradings;
                    check.infrastructureError = check.infrastructureError || verdict.infrastructureError;
                    if (correctnessHeld(verdict)) {
                        ++flakiness.held;
                    } else if (flakiness.failures.size() < 3) {
                        std::string why = verdict.mismatch.empty() ? verdict.error : verdict.mismatch;
                        flakiness.failures.push_back("grading " + std::to_string(round + 1) + ": " + shortError(why));
                    }
                }
            }
            if (flakiness.held != flakiness.gradings) {
                check.problems.push_back(name + " [" + flakiness.dsl + "]: flaky: correct in " +
                                         yesNoCount(flakiness.held, flakiness.gradings) + " gradings" +
                                         (flakiness.failures.empty() ? "" : "; " + flakiness.failures.front()));
            }
            check.flakiness = std::move(flakiness);
        }
    }
    return check;
}

bool SuiteCheckReport::clean() const {
    if (!catalogIssues.empty() || problems.empty() || !unchecked.empty()) {
        return false;
    }
    for (const ProblemCheck& check : problems) {
        if (!check.clean()) {
            return false;
        }
    }
    return true;
}

bool SuiteCheckReport::anyInfrastructureError() const {
    for (const ProblemCheck& check : problems) {
        if (check.infrastructureError) {
            return true;
        }
    }
    return false;
}

std::string problemLine(const ProblemCheck& check, int gradings) {
    const ProblemValidation& v = check.validation;
    std::ostringstream line;
    line << (check.clean() ? "ok    " : "ISSUE ") << check.problem.name() << ": ";
    if (!v.error.empty()) {
        line << "validation failed";
    } else {
        line << (v.deterministic == true ? "deterministic" : "NOT deterministic");
        int tensors = 0;
        int responsive = 0;
        int unchecked = 0; // a step that could not run (memory) or broke its process: named in the issues
        for (const InputSensitivity& input : v.inputs) {
            if (input.tensor) {
                ++tensors;
                responsive += (input.changed == true || (input.exempt && input.changed == false)) ? 1 : 0;
                unchecked += !input.changed ? 1 : 0;
            }
        }
        const char* sensitivity = v.sensitive == true    ? "sensitive"
                                  : v.sensitive == false ? "NOT sensitive"
                                                         : "sensitivity not fully checked";
        line << ", " << sensitivity << " (" << responsive << "/" << tensors << " inputs"
             << (unchecked > 0 ? ", " + std::to_string(unchecked) + " not checked" : std::string())
             << (v.nearZero == true ? ", output near zero" : "") << ")";
        if (v.eagerMedianMs) {
            line << ", eager " << format("%.3f", *v.eagerMedianMs) << " ms"
                 << (v.eagerOk == false ? " (< target)" : "");
        }
    }
    for (const SolutionCheck& solution : check.solutions) {
        line << "; " << solution.dsl << " ";
        if (!solution.present) {
            line << "missing";
        } else if (!solution.verdict) {
            line << "not graded";
        } else if (solution.verdict->passed) {
            line << "pass " << format("%.2fx", solution.verdict->speedupVsEager);
        } else {
            line << "FAIL (" << solution.verdict->stage << ")";
        }
    }
    if (check.flakiness) {
        line << "; flakiness " << check.flakiness->held << "/" << check.flakiness->gradings << " ("
             << check.flakiness->dsl << (check.flakiness->pooled ? ", pooled" : "") << ")";
    } else if (gradings > 0) {
        line << "; flakiness not checked";
    }
    if (check.reused) {
        line << " [reused]";
    }
    return line.str();
}

std::string suiteSummary(const SuiteCheckReport& report) {
    const int total = static_cast<int>(report.problems.size());
    int deterministic = 0;
    int sensitive = 0;
    int eagerOk = 0;
    int eagerMeasured = 0;
    int flakinessClean = 0;
    std::vector<std::string> sensitivityIssues;
    for (const ProblemCheck& check : report.problems) {
        const ProblemValidation& v = check.validation;
        deterministic += v.deterministic == true ? 1 : 0;
        if (v.sensitive == true) {
            ++sensitive;
        } else {
            std::string first;
            for (const std::string& issue : v.issues) {
                if (issue.find("input ") != std::string::npos || issue.find("near zero") != std::string::npos) {
                    first = issue;
                    break;
                }
            }
            sensitivityIssues.push_back(check.problem.name() + ": " +
                                        (first.empty() ? (v.error.empty() ? "not checked" : v.error) : first));
        }
        if (v.eagerMedianMs) {
            ++eagerMeasured;
            eagerOk += v.eagerOk == true ? 1 : 0;
        }
        if (check.flakiness && check.flakiness->held == check.flakiness->gradings &&
            check.flakiness->gradings == report.gradings) {
            ++flakinessClean;
        }
    }
    std::ostringstream out;
    out << total << " problems: " << deterministic << " deterministic, " << sensitive << " sensitive";
    if (!sensitivityIssues.empty()) {
        out << " (" << sensitivityIssues.size() << (sensitivityIssues.size() == 1 ? " issue: " : " issues, first: ")
            << sensitivityIssues.front() << ")";
    }
    out << ", eager >= " << format("%g", report.eagerTargetMs * 1000) << " us: " << eagerOk << "/" << total;
    if (eagerMeasured < total) {
        out << " (" << total - eagerMeasured << " not measured)";
    }
    out << "; solutions:";
    bool firstDsl = true;
    for (const std::string& dsl : report.dsls) {
        int present = 0;
        int passed = 0;
        int beat = 0;
        for (const ProblemCheck& check : report.problems) {
            for (const SolutionCheck& solution : check.solutions) {
                if (solution.dsl != dsl) {
                    continue;
                }
                present += solution.present ? 1 : 0;
                if (solution.verdict && solution.verdict->passed) {
                    ++passed;
                    beat += solution.verdict->speedupVsEager > 1.0 ? 1 : 0;
                }
            }
        }
        out << (firstDsl ? " " : "; ") << dsl << " " << passed << "/" << total << " pass, " << beat << " beat eager";
        if (present < total) {
            out << ", " << total - present << " missing";
        }
        firstDsl = false;
    }
    out << "; flakiness " << report.gradings << "/" << report.gradings << " on " << flakinessClean << "/" << total;
    if (!report.catalogIssues.empty()) {
        out << "; " << report.catalogIssues.size() << " malformed problem file(s)";
    }
    return out.str();
}

namespace {

Json verdictObject(const Verdict& verdict) {
    Json object = Json::parse(withNonFiniteAsNull(verdict.json), nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
        object = Json::parse(verdictToJson(verdict), nullptr, false);
    }
    return object;
}

} // namespace

std::string suiteReportJson(const SuiteCheckReport& report) {
    Json root;
    root["command"] = report.command;
    root["date"] = report.date;
    root["device"] = report.device;
    root["device_name"] = report.deviceName;
    root["grader_fingerprint"] = report.graderFingerprint;
    Json peaks = report.peaksJson.empty() ? Json(nullptr) : Json::parse(report.peaksJson, nullptr, false);
    root["peaks"] = peaks.is_discarded() ? Json(nullptr) : peaks;
    root["peaks_note"] = report.peaksNote;
    root["dsls"] = report.dsls;
    root["gradings"] = report.gradings;
    root["flakiness_mode"] = report.pooledFlakiness ? "pooled" : "separate";
    root["eager_target_ms"] = report.eagerTargetMs;
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
            solutions.push_back(std::move(item));
        }
        entry["solutions"] = std::move(solutions);
        if (check.flakiness) {
            entry["flakiness"] = {
                {"dsl", check.flakiness->dsl},       {"gradings", check.flakiness->gradings},
                {"correct", check.flakiness->held},  {"failures", check.flakiness->failures},
                {"pooled", check.flakiness->pooled}, {"draws_per_grading", check.flakiness->drawsPerGrading}};
        } else {
            entry["flakiness"] = nullptr;
        }
        problems.push_back(std::move(entry));
    }
    root["problems"] = std::move(problems);
    return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {

std::string displayDsl(const std::string& dsl) {
    if (dsl == "triton") {
        return "Triton";
    }
    if (dsl == "cuda") {
        return "CUDA";
    }
    return dsl;
}

std::string cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
    }
    return out;
}

std::string ratioOrDash(const std::optional<double>& value) {
    return value && std::isfinite(*value) ? format("%.2f", *value) : "–";
}

} // namespace

std::string flakinessMethod(const SuiteCheckReport& report) {
    if (report.gradings <= 1) {
        return "not checked";
    }
    std::string first = "the full grading, then ";
    std::string repeats = std::to_string(report.gradings - 1);
    if (report.pooledFlakiness) {
        return first + repeats + " correctness-only gradings pooled into one evaluation (" + repeats + " x " +
               std::to_string(report.drawsPerGrading) +
               " correctness draws, each with a fresh seed; a grading counts as correct when all of its draws held)";
    }
    return first + repeats + " correctness-only gradings, each its own evaluation with fresh seeds";
}

std::string suiteTableMarkdown(const SuiteCheckReport& report) {
    std::ostringstream out;
    out << "# Problem suite\n\n";
    out << "Generated by `mkb suite check`; do not edit by hand. Speedup = eager PyTorch median / solution median "
           "(DESIGN §5.1); IOU and MFU are achieved bandwidth and FLOP/s over the device's measured peaks "
           "(DESIGN §5.3).\n\n";
    out << "- device: " << (report.deviceName.empty() ? report.device : report.deviceName + " (" + report.device + ")")
        << "\n";
    out << "- date: " << report.date << "\n";
    out << "- grader fingerprint: `" << report.graderFingerprint << "`\n";
    out << "- peaks: " << (report.peaksNote.empty() ? "none" : report.peaksNote) << "\n";
    out << "- command: `" << report.command << "`\n";
    out << "- flakiness: " << flakinessMethod(report) << "\n";
    if (!report.unchecked.empty()) {
        out << "- **partial**: " << report.problems.size() << " of " << report.problems.size() + report.unchecked.size()
            << " problems checked; not yet checked: " << report.unchecked.size() << " (continue with --resume)\n";
    }
    out << "\n";
    out << "| problem | family | tags | eager ms |";
    for (const std::string& dsl : report.dsls) {
        out << " " << displayDsl(dsl) << " speedup | " << displayDsl(dsl) << " IOU / MFU |";
    }
    out << " validation |\n|---|---|---|---:|";
    for (std::size_t i = 0; i < report.dsls.size(); ++i) {
        out << "---:|---:|";
    }
    out << "---|\n";
    for (const ProblemCheck& check : report.problems) {
        std::string tags;
        for (const std::string& tag : check.problem.meta.tags) {
            tags += (tags.empty() ? "" : ", ") + tag;
        }
        const ProblemValidation& v = check.validation;
        out << "| " << cell(check.problem.name()) << " | " << cell(check.problem.family) << " | " << cell(tags) << " | "
            << (v.eagerMedianMs ? format("%.3f", *v.eagerMedianMs) : "–") << " |";
        for (const std::string& dsl : report.dsls) {
            const SolutionCheck* found = nullptr;
            for (const SolutionCheck& solution : check.solutions) {
                if (solution.dsl == dsl) {
                    found = &solution;
                }
            }
            if (!found || !found->present) {
                out << " missing | – |";
            } else if (!found->verdict) {
                out << " not graded | – |";
            } else if (!found->verdict->passed) {
                out << " fail (" << cell(found->verdict->stage) << ") | – |";
            } else {
                const auto& roofline = found->verdict->roofline;
                out << " " << format("%.2fx", found->verdict->speedupVsEager) << " | "
                    << (roofline ? ratioOrDash(roofline->iou) + " / " + ratioOrDash(roofline->mfu) : "– / –") << " |";
            }
        }
        std::string validation;
        if (v.clean) {
            validation = "clean";
        } else {
            validation = std::to_string(v.issues.size()) + (v.issues.size() == 1 ? " issue" : " issues");
        }
        if (check.flakiness) {
            validation += ", " + std::to_string(check.flakiness->held) + "/" +
                          std::to_string(check.flakiness->gradings) + " gradings correct";
        }
        out << " " << cell(validation) << " |\n";
    }
    out << "\n" << suiteSummary(report) << "\n";
    bool anyIssue = !report.catalogIssues.empty();
    for (const ProblemCheck& check : report.problems) {
        anyIssue = anyIssue || !check.problems.empty();
    }
    if (anyIssue) {
        out << "\n## Issues\n\n";
        for (const std::string& issue : report.catalogIssues) {
            out << "- " << issue << "\n";
        }
        for (const ProblemCheck& check : report.problems) {
            for (const std::string& issue : check.problems) {
                out << "- " << issue << "\n";
            }
        }
    }
    return out.str();
}

} // namespace mkb
