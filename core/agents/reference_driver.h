// The reference driver: submits the shipped solution of the problem in the DSL, for smoke tests and demos.
#pragma once

#include "core/agents/driver.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace mkb {

/// Settings (all optional), from the driver config JSON:
///   "solutions_dir": folder of solutions named <NN>_<slug>.<dsl>.py (default: the suite's <family>/_solutions/)
///   "solution_dsl": {"dslId": "otherId"} use another DSL's solution file for a DSL (test DSL aliases)
///   "no_skill_for": ["dslId", ...] write no SKILL.md in these DSLs (exercises skipped skill arms)
struct ReferenceSettings {
    std::filesystem::path solutionsDir;
    std::map<std::string, std::string> solutionDsl;
    std::set<std::string> noSkillFor;
};

Result<ReferenceSettings> parseReferenceSettings(const nlohmann::json& settings);

/// Where the reference driver looks for the solution of a problem in a DSL.
std::filesystem::path referenceSolutionPath(const ReferenceSettings& settings, const Problem& problem,
                                            const std::string& dslId);

/// The SKILL.md the reference driver writes: what the solution does (its docstring) and what the grader measured.
std::string referenceSkill(const Problem& problem, const DslDescriptor& dsl, const std::string& solutionSource,
                           const SubmitOutcome& outcome);

Result<std::unique_ptr<AgentDriver>> makeReferenceDriver(const nlohmann::json& settings);

} // namespace mkb
