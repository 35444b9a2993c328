// Checking one problem of a suite through one grader session: validation, each solution graded, then repeated for
// flakiness.
#include "core/suite/suite_check.h"

#include "core/catalog/catalog.h"
#include "core/util/sha256.h"
#include "core/util/text.h"
#include "core/wire/pool_request.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace mkb {
namespace {

/// One line for a solution that did not pass its full grading.
std::string solutionFailure(const Verdict& verdict) {
    if (verdict.infrastructureError) {
        return "grader failure at stage " + verdict.stage + ": " + shortGraderMessage(verdict.error);
    }
    if (verdict.timedOut) {
        return "timed out at stage " + verdict.stage + ": " + shortGraderMessage(verdict.error);
    }
    std::string what = verdict.error.empty() ? verdict.mismatch : verdict.error;
    return "fails at stage " + verdict.stage + ": " + shortGraderMessage(what);
}

std::string yesNoCount(int count, int total) {
    return std::to_string(count) + "/" + std::to_string(total);
}

// Milliseconds a correctness draw took in this evaluation (the grader's stage_s.correctness over its draws, the
// first call's compile included); unset when the verdict does not say.
std::optional<double> msPerCorrectnessDraw(const Verdict& verdict) {
    const auto parsed = nlohmann::json::parse(verdict.json, nullptr, false);
    if (!parsed.is_object() || verdict.totalDraws <= 0) {
        return std::nullopt;
    }
    const auto stages = parsed.find("stage_s");
    if (stages == parsed.end() || !stages->is_object()) {
        return std::nullopt;
    }
    const auto correctness = stages->find("correctness");
    if (correctness == stages->end() || !correctness->is_number()) {
        return std::nullopt;
    }
    return correctness->get<double>() * 1000.0 / verdict.totalDraws;
}

} // namespace

const char* flakinessModeName(FlakinessMode mode) {
    switch (mode) {
    case FlakinessMode::Pooled:
        return "pooled";
    case FlakinessMode::Single:
        return "single";
    case FlakinessMode::Separate:
        break;
    }
    return "separate";
}

FlakinessMode flakinessModeFromName(const std::string& name) {
    if (name == "pooled") {
        return FlakinessMode::Pooled;
    }
    return name == "single" ? FlakinessMode::Single : FlakinessMode::Separate;
}

std::vector<std::string> checkingOrder(const std::vector<std::string>& dsls, const std::string& warmDsl) {
    std::vector<std::string> order = dsls;
    if (order.size() > 1 && warmDsl == order.back()) {
        std::reverse(order.begin(), order.end());
    }
    return order;
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
    const std::string why = shortGraderMessage(pooled.mismatch.empty() ? pooled.error : pooled.mismatch);
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
    const auto started = std::chrono::steady_clock::now();
    ProblemCheck check;
    check.problem = problem;
    const std::string name = problem.name();

    say("validate");
    check.validation =
        validateProblem(grader, makeValidateRequest(problem, options.device, options.settings, options.eagerTargetMs),
                        options.lockDevice, cancel);
    check.infrastructureError = check.validation.infrastructureError;
    for (const std::string& issue : check.validation.issues) {
        check.problems.push_back(name + ": " + issue);
    }

    // `next`: the DSL graded after this grading ("" when it is the same one), which the grader pre-starts its next
    // child for as this grading starts, so that child warms up beside it (DESIGN §5.4).
    auto gradeOnce = [&](const SolutionCheck& solution, const GradeSettings& settings, const std::string& next) {
        GradeRequest request =
            makeGradeRequest(problem, solution.path, solution.dsl, options.descriptors.at(solution.dsl), options.device,
                             settings, options.peaksJson);
        if (!next.empty() && next != solution.dsl) {
            request.nextDsl = next;
            request.nextDslDescriptorJson = options.descriptors.at(next);
        }
        return grader.grade(request, {}, cancel);
    };
    // The settings of a correctness-only repeat: the full grading's, without warm-up, timing, re-check or outlier draws
    // (outlier draws never decide correctness; they only cost time).
    GradeSettings correctnessOnly = options.settings;
    correctnessOnly.warmupDraws = 0;
    correctnessOnly.timingDraws = 0;
    correctnessOnly.recheckDraws = 0;
    correctnessOnly.outliers = false;
    // gradings-1 correctness-only repeats of a solution whose full grading passed ("20/20"); `next` as gradeOnce's,
    // for the last of them.
    auto repeatForFlakiness = [&](const SolutionCheck& solution, const std::string& next, bool pooledRepeats) {
        FlakinessCheck flakiness;
        flakiness.dsl = solution.dsl;
        flakiness.gradings = 1;
        flakiness.held = correctnessHeld(*solution.verdict) ? 1 : 0;
        flakiness.pooled = pooledRepeats;
        flakiness.drawsPerGrading = options.settings.correctnessDraws;
        if (pooledRepeats) {
            if (options.gradings > 1 && !(cancel && cancel->load())) {
                const int repeats = options.gradings - 1;
                GradeSettings pooled = correctnessOnly;
                pooled.correctnessDraws = repeats * options.settings.correctnessDraws;
                pooled.timeoutS = options.settings.timeoutS * repeats; // the bound the separate gradings had in all
                say("flakiness " + solution.dsl + " 2-" + std::to_string(options.gradings) + "/" +
                    std::to_string(options.gradings) + " pooled (" + std::to_string(pooled.correctnessDraws) +
                    " draws)");
                Verdict verdict = gradeOnce(solution, pooled, next);
                creditPooledGradings(verdict, repeats, options.settings.correctnessDraws, 2, flakiness);
                check.infrastructureError = check.infrastructureError || verdict.infrastructureError;
            }
            return flakiness;
        }
        for (int round = 1; round < options.gradings; ++round) {
            if (cancel && cancel->load()) {
                break;
            }
            say("flakiness " + solution.dsl + " " + std::to_string(round + 1) + "/" + std::to_string(options.gradings));
            Verdict verdict = gradeOnce(solution, correctnessOnly, round + 1 == options.gradings ? next : "");
            ++flakiness.gradings;
            check.infrastructureError = check.infrastructureError || verdict.infrastructureError;
            if (correctnessHeld(verdict)) {
                ++flakiness.held;
            } else if (flakiness.failures.size() < 3) {
                std::string why = verdict.mismatch.empty() ? verdict.error : verdict.mismatch;
                flakiness.failures.push_back("grading " + std::to_string(round + 1) + ": " + shortGraderMessage(why));
            }
        }
        return flakiness;
    };

    // Each DSL's solution is graded, then (when it passed) repeated, before the next DSL's: the server pre-starts its
    // next child for the DSL it graded last, so the repeats find that DSL imported and the device ready. The DSLs go
    // in reverse when the grader is warm for the last one (the previous problem's), so a problem starts where the
    // one before ended. Solutions and issue lines still follow options.dsls.
    const std::vector<std::string> order = checkingOrder(options.dsls, grader.prestartedDsl());
    // --flakiness single: one evaluation holds every grading's correctness draws, then the timing.
    const bool single = options.flakiness == FlakinessMode::Single && options.gradings > 1;
    // Whether the problem ships a solution in `dsl` that this check can grade (its descriptor loaded).
    auto gradable = [&](const std::string& dsl) {
        std::error_code ec;
        return options.descriptors.count(dsl) && std::filesystem::is_regular_file(solutionPath(problem, dsl), ec);
    };
    // The DSL of the next solution this problem grades after order[i]: "" after the last one, whose DSL the next
    // problem starts with (checkingOrder).
    auto gradedAfter = [&](std::size_t i) -> std::string {
        for (std::size_t j = i + 1; j < order.size(); ++j) {
            if (gradable(order[j])) {
                return order[j];
            }
        }
        return "";
    };
    // The gradings-1 repeats of every passing solution in one pool, each draw's reference and anchor computed once; a
    // solution the pool did not finish (it timed out, died, or another solution broke the CUDA context) is repeated
    // alone, so no solution's record depends on another's failure.
    auto shareRepeats = [&](std::map<std::string, SolutionCheck>& solutions) {
        const int repeats = options.gradings - 1;
        GradeSettings pooled = correctnessOnly;
        pooled.correctnessDraws = repeats * options.settings.correctnessDraws;
        PoolRequest request = makePoolRequest(problem, options.device, pooled);
        for (const auto& [dsl, solution] : solutions) {
            // A solution graded before the sharing began holds every grading's draws already.
            if (solution.verdict && solution.verdict->passed && !solution.flakiness) {
                request.kernels.push_back(
                    {dsl, std::filesystem::absolute(solution.path), dsl, options.descriptors.at(dsl), 0});
            }
        }
        if (request.kernels.empty()) {
            return;
        }
        // The bound the solutions' own repeats would have had in all.
        request.settings.timeoutS = options.settings.timeoutS * repeats * static_cast<double>(request.kernels.size());
        say("flakiness 2-" + std::to_string(options.gradings) + "/" + std::to_string(options.gradings) + " shared by " +
            std::to_string(request.kernels.size()) + " solutions (" + std::to_string(pooled.correctnessDraws) +
            " draws)");
        Result<PoolResult> result = grader.pool(request, {}, cancel);
        for (const RetimeKernel& kernel : request.kernels) {
            SolutionCheck& solution = solutions.at(kernel.label);
            const PooledKernel* entry = nullptr;
            if (result) {
                for (const PooledKernel& candidate : result->kernels) {
                    entry = candidate.label == kernel.label ? &candidate : entry;
                }
            }
            if (entry == nullptr || !entry->complete || !entry->verdict) {
                say("flakiness " + kernel.label + " alone (" +
                    (result ? (result->error.empty() ? std::string("not finished in the pool") : result->error)
                            : result.error().message) +
                    ")");
                solution.flakiness = repeatForFlakiness(solution, "", true);
                continue;
            }
            FlakinessCheck flakiness;
            flakiness.dsl = kernel.label;
            flakiness.gradings = 1;
            flakiness.held = correctnessHeld(*solution.verdict) ? 1 : 0;
            flakiness.pooled = true;
            flakiness.sharedDraws = true;
            flakiness.drawsPerGrading = options.settings.correctnessDraws;
            creditPooledGradings(*entry->verdict, repeats, options.settings.correctnessDraws, 2, flakiness);
            check.infrastructureError = check.infrastructureError || entry->verdict->infrastructureError;
            solution.flakiness = flakiness;
        }
    };
    // A slow reference: the repeats' draws are shared across the solutions (kShareDrawsFromEagerMs), in one pool after
    // every solution's own grading.
    const auto shipped = std::count_if(order.begin(), order.end(), gradable);
    bool shareDraws = single && shipped >= 2 && check.validation.eagerMedianMs &&
                      *check.validation.eagerMedianMs >= kShareDrawsFromEagerMs;
    // Not shared from the start: the first solution whose evaluation ran every draw (called for it alone) says what a
    // draw costs, and when that is kShareDrawsFromDrawMs or more, the solutions after it (two at least) share their
    // repeats.
    bool drawCostJudged = false;
    auto shareFromDrawCost = [&](std::size_t i, const Verdict& verdict) {
        if (drawCostJudged) {
            return;
        }
        drawCostJudged = true;
        const auto after = std::count_if(order.begin() + static_cast<std::ptrdiff_t>(i) + 1, order.end(), gradable);
        if (after < 2) {
            return;
        }
        if (const auto perDraw = msPerCorrectnessDraw(verdict); perDraw && *perDraw >= kShareDrawsFromDrawMs) {
            shareDraws = true;
            say("share the repeats of the next " + std::to_string(after) + " solutions (a draw took " +
                std::to_string(std::lround(*perDraw)) + " ms in " + order[i] + "'s evaluation)");
        }
    };
    std::map<std::string, SolutionCheck> checked;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::string& dsl = order[i];
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
            // A DSL the problem declares it cannot be written in (MKB_META no_solution) ships none: no issue.
            if (!problem.meta.noSolution.count(dsl)) {
                solution.problem = name + " [" + dsl + "]: missing solution " + solution.path.string();
            }
        } else {
            GradeSettings settings = options.settings;
            if (shareDraws) {
                say("grade " + dsl + " (its own draws and timing; the other gradings' draws shared)");
            } else if (single) {
                settings.correctnessDraws = options.gradings * options.settings.correctnessDraws;
                settings.timeoutS = options.settings.timeoutS * options.gradings;
                say("grade " + dsl + " (" + std::to_string(options.gradings) + " gradings' draws, then timing)");
            } else {
                say("grade " + dsl);
            }
            solution.verdict = gradeOnce(solution, settings, single ? gradedAfter(i) : "");
            solution.prestarted = grader.lastGradingPrestarted();
            const Verdict& verdict = *solution.verdict;
            if (!verdict.passed) {
                solution.problem = name + " [" + dsl + "]: " + solutionFailure(verdict);
                check.infrastructureError = check.infrastructureError || verdict.infrastructureError;
            }
            // The draws say how often it held once all of them ran; a failure before that (import, compliance, a
            // crash, the bound) is the solution's line alone, as in a full grading.
            if (single && !shareDraws && verdict.compliant && !verdict.infrastructureError && !verdict.timedOut &&
                verdict.totalDraws == settings.correctnessDraws) {
                FlakinessCheck flakiness;
                flakiness.dsl = dsl;
                flakiness.pooled = true;
                flakiness.drawsPerGrading = options.settings.correctnessDraws;
                creditPooledGradings(verdict, options.gradings, options.settings.correctnessDraws, 1, flakiness);
                solution.flakiness = flakiness;
                shareFromDrawCost(i, verdict);
            }
        }
        // Every passing solution is repeated; with none there is nothing to repeat and the solution's line says why.
        if (!single && options.gradings >= 1 && solution.verdict && solution.verdict->passed &&
            !(cancel && cancel->load())) {
            solution.flakiness =
                repeatForFlakiness(solution, gradedAfter(i), options.flakiness == FlakinessMode::Pooled);
        }
        checked.emplace(dsl, std::move(solution));
    }
    if (shareDraws && options.gradings > 1 && !(cancel && cancel->load())) {
        shareRepeats(checked);
    }
    // Solutions and their issue lines in options.dsls' order, whatever order they were checked in.
    for (const std::string& dsl : options.dsls) {
        auto found = checked.find(dsl);
        if (found == checked.end()) {
            continue;
        }
        SolutionCheck& solution = found->second;
        if (!solution.problem.empty()) {
            check.problems.push_back(solution.problem);
        }
        if (const auto& flakiness = solution.flakiness; flakiness && flakiness->held != flakiness->gradings) {
            check.problems.push_back(name + " [" + dsl + "]: flaky: correct in " +
                                     yesNoCount(flakiness->held, flakiness->gradings) + " gradings" +
                                     (flakiness->failures.empty() ? "" : "; " + flakiness->failures.front()));
        }
        check.solutions.push_back(std::move(solution));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    check.checkSeconds = std::round(seconds * 10) / 10; // as the JSON keeps it, so a table rendered again is the same
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

} // namespace mkb
