// Submitting shipped solutions as if a model had written them, and deriving a skill from the grader's measurements.
#include "core/agents/reference_driver.h"

#include "core/agents/workspace.h"
#include "core/catalog/catalog.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <sstream>

namespace mkb {

namespace fs = std::filesystem;

namespace {

/// The first paragraph of the module docstring, on one line ("" when there is none).
std::string docstringSummary(const std::string& source) {
    std::string_view text = trimmed(source);
    for (const char* quote : {"\"\"\"", "'''"}) {
        if (startsWith(text, quote)) {
            const std::size_t end = text.find(quote, 3);
            if (end == std::string_view::npos) {
                return {};
            }
            std::string summary;
            for (const std::string& line : splitString(text.substr(3, end - 3), '\n')) {
                const std::string_view part = trimmed(line);
                if (part.empty() && !summary.empty()) {
                    break;
                }
                summary += (summary.empty() || part.empty() ? "" : " ") + std::string(part);
            }
            return summary;
        }
    }
    return {};
}

std::string number(double value, const char* format) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

class ReferenceDriver final : public AgentDriver {
public:
    explicit ReferenceDriver(ReferenceSettings settings) : settings_(std::move(settings)) {}

    std::string name() const override { return "reference"; }

    AttemptResult attempt(const AttemptTask& task, SubmissionGate& gate, const std::atomic<bool>& cancel) override {
        const auto started = std::chrono::steady_clock::now();
        AttemptResult result;
        auto finish = [&]() {
            result.usage.agentSeconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            return result;
        };
        const fs::path solution = referenceSolutionPath(settings_, task.problem, task.dsl.id);
        auto source = readFile(solution);
        if (!source) {
            result.error = "no shipped solution at " + solution.string() + "; the attempt ends with no kernel";
            return finish();
        }
        const WorkspaceLayout layout = workspaceLayout(task.workspace, task.problem);
        if (Status written = writeFileAtomically(layout.kernel, *source); !written) {
            result.error = written.error().message;
            result.infrastructureError = true;
            return finish();
        }
        result.finalKernel = *source;
        if (cancel.load()) {
            return finish();
        }
        const SubmitOutcome outcome = gate.submit(*source);
        if (!settings_.noSkillFor.count(task.dsl.id)) {
            const std::string skill = referenceSkill(task.problem, task.dsl, *source, outcome);
            if (Status written = writeFileAtomically(layout.skill, skill); !written) {
                result.error = written.error().message;
            }
            result.skill = skill;
        }
        return finish();
    }

private:
    ReferenceSettings settings_;
};

} // namespace

Result<ReferenceSettings> parseReferenceSettings(const nlohmann::json& settings) {
    ReferenceSettings parsed;
    const std::string where = "driver 'reference' settings: ";
    for (auto it = settings.begin(); it != settings.end(); ++it) {
        const std::string& key = it.key();
        const nlohmann::json& value = it.value();
        if (key == "solutions_dir") {
            if (!value.is_string()) {
                return makeError(where + "'solutions_dir' must be a folder path string");
            }
            parsed.solutionsDir = value.get<std::string>();
        } else if (key == "solution_dsl") {
            if (!value.is_object()) {
                return makeError(where + "'solution_dsl' must be an object mapping DSL ids to DSL ids");
            }
            for (auto alias = value.begin(); alias != value.end(); ++alias) {
                if (!alias.value().is_string()) {
                    return makeError(where + "'solution_dsl." + alias.key() + "' must be a DSL id string");
                }
                parsed.solutionDsl[alias.key()] = alias.value().get<std::string>();
            }
        } else if (key == "no_skill_for") {
            if (!value.is_array()) {
                return makeError(where + "'no_skill_for' must be a list of DSL ids");
            }
            for (const nlohmann::json& id : value) {
                if (!id.is_string()) {
                    return makeError(where + "'no_skill_for' must hold DSL id strings only");
                }
                parsed.noSkillFor.insert(id.get<std::string>());
            }
        } else {
            return makeError(where + "unknown key '" + key + "' (known: solutions_dir, solution_dsl, no_skill_for)");
        }
    }
    return parsed;
}

fs::path referenceSolutionPath(const ReferenceSettings& settings, const Problem& problem, const std::string& dslId) {
    auto alias = settings.solutionDsl.find(dslId);
    const std::string fileDsl = alias == settings.solutionDsl.end() ? dslId : alias->second;
    if (settings.solutionsDir.empty()) {
        return solutionPath(problem, fileDsl);
    }
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%02d_", problem.number);
    return settings.solutionsDir / (prefix + problem.slug + "." + fileDsl + ".py");
}

std::string referenceSkill(const Problem& problem, const DslDescriptor& dsl, const std::string& solutionSource,
                           const SubmitOutcome& outcome) {
    std::ostringstream out;
    out << "# " << problem.title << " (" << problem.name() << ")\n\n";
    const std::string summary = docstringSummary(solutionSource);
    out << "- Approach: " << (summary.empty() ? "the shipped " + dsl.displayName + " solution (no docstring)" : summary)
        << "\n";
    if (!outcome.verdict) {
        out << "- Not measured: " << (outcome.reportText.empty() ? "nothing was graded" : outcome.reportText) << "\n";
        return out.str();
    }
    const Verdict& verdict = *outcome.verdict;
    out << "- Outcome: " << (verdict.passed ? "passed" : "failed") << " (stage " << verdict.stage << "), correct on "
        << verdict.correctDraws << " of " << verdict.totalDraws << " draws.\n";
    if (verdict.kernelMedianMs && verdict.eagerMedianMs) {
        out << "- Measured: kernel median " << number(*verdict.kernelMedianMs, "%.4g") << " ms against eager PyTorch "
            << number(*verdict.eagerMedianMs, "%.4g") << " ms, a speedup of " << number(verdict.speedupVsEager, "%.3g")
            << "x"
            << (verdict.speedupVsEager < 1 ? ": moving this problem out of eager PyTorch did not pay here"
                                           : ": worth moving out of eager PyTorch")
            << ".\n";
    }
    if (!verdict.error.empty()) {
        out << "- Why it failed: " << verdict.error << "\n";
    }
    if (!verdict.mismatch.empty()) {
        out << "- First mismatch: " << verdict.mismatch << "\n";
    }
    return out.str();
}

Result<std::unique_ptr<AgentDriver>> makeReferenceDriver(const nlohmann::json& settings) {
    auto parsed = parseReferenceSettings(settings);
    if (!parsed) {
        return parsed.error();
    }
    return std::unique_ptr<AgentDriver>(std::make_unique<ReferenceDriver>(std::move(parsed).value()));
}

} // namespace mkb
