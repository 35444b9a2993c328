// The prepared workspace of one attempt: task file, CONTRACT.md, INSTRUCTION.md, DSL docs, kernel.py and SKILL.md.
#pragma once

#include "core/agents/driver.h"
#include "core/util/result.h"

#include <filesystem>
#include <optional>
#include <string>

namespace mkb {

/// Where each prepared file lives inside the workspace.
struct WorkspaceLayout {
    std::filesystem::path root;
    std::filesystem::path taskFile;         // <NN>_<slug>.py: the problem, verbatim
    std::filesystem::path contract;         // CONTRACT.md
    std::filesystem::path instruction;      // INSTRUCTION.md
    std::filesystem::path docsDir;          // docs/: the DSL's doc pack
    std::filesystem::path kernel;           // kernel.py (starts as a stub)
    std::filesystem::path skill;            // SKILL.md (starts empty)
    std::filesystem::path transferredSkill; // TRANSFERRED_SKILL.md: skill arms only
};

WorkspaceLayout workspaceLayout(const std::filesystem::path& root, const Problem& problem);

/// The kernel.py a workspace starts with; an attempt that leaves it unchanged produced no kernel.
std::string kernelStub(const Problem& problem, const DslDescriptor& dsl);

/// CONTRACT.md: the entry point, the implementation boundary, how grading judges and what is forbidden.
/// The boundary line follows `boundary` ("mkb" or "strict"), the one the grader enforces.
std::string contractText(const Problem& problem, const DslDescriptor& dsl, const AttemptBudget& budget,
                         const std::string& boundary);

/// INSTRUCTION.md: the task, the deliverables, the skill instructions, the budget and (skill arms) the skill.
/// submitHint says how to grade the current kernel.py ("run ./submit"); empty for drivers that submit themselves.
std::string instructionText(const AttemptTask& task, const std::string& submitHint);

/// Creates (emptying it first) task.workspace and writes every file; task.instruction is written as INSTRUCTION.md.
Result<WorkspaceLayout> prepareWorkspace(const AttemptTask& task);

/// What an attempt left in its workspace.
struct WorkspaceHarvest {
    std::string kernel;               // "" when kernel.py is missing, empty or still the stub
    std::optional<std::string> skill; // absent when SKILL.md is missing or blank
};

WorkspaceHarvest harvestWorkspace(const AttemptTask& task);

/// The heading and sentence put before a skill when it is transferred to the other DSL (DESIGN §6).
std::string skillWithTransferHeader(const std::string& skillText, const std::string& sourceDslName);

} // namespace mkb
