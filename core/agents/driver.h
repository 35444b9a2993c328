// The model-driver interface (DESIGN §7): what an attempt is given, how it submits kernels, and what it returns.
#pragma once

#include "core/catalog/dsl_registry.h"
#include "core/records/problem.h"
#include "core/records/trial.h"
#include "core/records/verdict.h"
#include "core/util/result.h"
#include "core/vocabulary/grade_settings.h"

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace mkb {

/// Per-attempt limits, identical across the arms of a run (DESIGN §6).
struct AttemptBudget {
    double wallSeconds = 2400;                           // the whole attempt, waiting for grading included
    int maxSubmissions = 10;                             // counted feedback evaluations
    int maxKernelBytes = GradeSettings{}.maxKernelBytes; // the grader's size limit
};

/// Everything a driver needs to make one attempt.
struct AttemptTask {
    Problem problem;
    DslDescriptor dsl;
    std::string armName;                        // "solo_triton", "triton2cuda_skill"
    std::optional<std::string> skillWithHeader; // skill arms: the source's SKILL.md with the transfer header
    AttemptBudget budget;
    std::string boundary{kBoundaryMkb}; // the implementation boundary the run grades under: "mkb" or "strict"
    std::filesystem::path workspace;    // prepared by prepareWorkspace: task files, kernel.py, SKILL.md
    std::string instruction;            // the instruction text (also INSTRUCTION.md in the workspace)
};

/// What one submission came to. Not counted: over the size limit, or never entered evaluation (infra error),
/// or refused because the budget was spent.
struct SubmitOutcome {
    bool counted = false;
    std::string reportText;         // the grader report (or why nothing was graded), for the model to read
    std::optional<Verdict> verdict; // absent when nothing was graded
    int submissionsLeft = 0;
    double secondsLeft = 0;
};

/// The only way a driver gets feedback: grades a kernel under the attempt's budget. Thread-safe.
class SubmissionGate {
public:
    virtual ~SubmissionGate();
    virtual SubmitOutcome submit(const std::string& kernelSource) = 0;
    virtual int submissionsLeft() const = 0;
    virtual double secondsLeft() const = 0;
};

/// How an attempt ended, from the driver's side. The runner then grades finalKernel afresh.
struct AttemptResult {
    std::string finalKernel;          // the last kernel.py ("" = the attempt produced none)
    std::optional<std::string> skill; // the SKILL.md written, if any
    Usage usage;
    bool timedOut = false;            // the wall clock ran out
    std::string error;                // one line; empty when the attempt ran normally
    bool infrastructureError = false; // the driver or endpoint broke (not the model's fault): rerun next time
};

class AgentDriver {
public:
    virtual ~AgentDriver();
    /// "reference", "command", "chat".
    virtual std::string name() const = 0;
    /// Runs one attempt. Must return soon after cancel becomes true or task.budget.wallSeconds has passed.
    virtual AttemptResult attempt(const AttemptTask& task, SubmissionGate& gate, const std::atomic<bool>& cancel) = 0;
};

/// "reference", "command" or "chat" with its settings (a JSON object; chat's secrets are read from the
/// environment, never from here). The error names the kind and the bad setting.
Result<std::unique_ptr<AgentDriver>> makeDriver(const std::string& kind, const nlohmann::json& settings);

} // namespace mkb
