// Writing and reading the attempt workspace that terminal agents (and people) work in.
#include "core/agents/workspace.h"

#include "core/util/text.h"

#include <cstdio>
#include <sstream>

namespace mkb {

namespace fs = std::filesystem;

namespace {

std::string twoDigits(int number) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%02d", number);
    return buffer;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out.empty() ? "none" : out;
}

} // namespace

WorkspaceLayout workspaceLayout(const fs::path& root, const Problem& problem) {
    WorkspaceLayout layout;
    layout.root = root;
    layout.taskFile = root / (twoDigits(problem.number) + "_" + problem.slug + ".py");
    layout.contract = root / "CONTRACT.md";
    layout.instruction = root / "INSTRUCTION.md";
    layout.docsDir = root / "docs";
    layout.kernel = root / "kernel.py";
    layout.skill = root / "SKILL.md";
    layout.transferredSkill = root / "TRANSFERRED_SKILL.md";
    return layout;
}

std::string kernelStub(const Problem& problem, const DslDescriptor& dsl) {
    return "# kernel.py for " + problem.name() + " in " + dsl.displayName +
           ": replace this file with a module defining solve(*inputs).\n";
}

std::string contractText(const Problem& problem, const DslDescriptor& dsl, const AttemptBudget& budget,
                         const std::string& boundary) {
    std::ostringstream out;
    out << "# Contract\n\n"
        << "- Problem: `" << workspaceLayout("", problem).taskFile.string() << "` (" << problem.name()
        << "). It defines `reference(*inputs)` and `make_inputs(device)`.\n"
        << "- Deliverable: `kernel.py` defining `solve(*inputs)` that returns what `reference(*inputs)` returns: same "
           "shapes and dtypes, within the grader's tolerance against a float64 anchor, on several random draws.\n"
        << (boundary == "strict"
                ? "- Implementation boundary (strict): all arithmetic of the problem happens in kernels written in " +
                      dsl.displayName +
                      "; PyTorch may only allocate outputs and workspaces, fill, copy and cast them, make views and "
                      "pass tensors to your kernels.\n"
                : "- Implementation boundary (mkb, MetaKernelBench's rule): eager PyTorch may do part of the work, "
                  "but every call of solve must launch a " +
                      dsl.displayName +
                      " kernel of yours that a returned output depends on, and an answer eager PyTorch already "
                      "computed must not merely be copied, cast or reshaped by a kernel.\n")
        << "- A kernel must be recognisable: kernel.py must match one of " << joined(dsl.compliance.kernelMarkers)
        << ".\n"
        << "- Forbidden imports: " << joined(dsl.compliance.forbiddenImports) << ".\n"
        << "- Forbidden patterns: " << joined(dsl.compliance.forbiddenPatterns) << ".\n"
        << "- Speed is the median time of solve over timing draws, compared with eager PyTorch on the same inputs.\n"
        << "- kernel.py may be at most " << budget.maxKernelBytes << " bytes.\n";
    return out.str();
}

std::string instructionText(const AttemptTask& task, const std::string& submitHint) {
    const WorkspaceLayout layout = workspaceLayout("", task.problem);
    std::ostringstream out;
    out << "# Task: " << task.problem.title << "\n\n"
        << "Write a fast, correct " << task.dsl.displayName << " implementation of the problem in `"
        << layout.taskFile.string() << "` (" << task.problem.name() << ").\n\n"
        << "## DSL\n\n"
        << task.dsl.prompt << "\n\n"
        << (task.dsl.docPack.empty() ? "" : "The DSL guide is in `docs/`.\n\n") << "## Contract\n\n"
        << "Read `CONTRACT.md`: `kernel.py` defines `solve(*inputs)` returning what `reference(*inputs)` returns.\n\n"
        << "## Deliverables\n\n"
        << "1. `kernel.py`: your final kernel. The last version in the workspace is graded afresh at the end.\n"
        << "2. `SKILL.md`: what you learned about kernels for this problem, for an engineer writing it in another "
           "DSL. Kernel knowledge only: evidence-backed conclusions (what you measured), what is or is not worth "
           "moving out of eager PyTorch, why failed approaches failed. No code, commands, API instructions or "
           "generic advice.\n\n"
        << "## Budget\n\n"
        << "- Wall clock: " << static_cast<long>(task.budget.wallSeconds) << " s in all, grading waits included.\n"
        << "- Feedback submissions: " << task.budget.maxSubmissions
        << " (a submission that never entered evaluation, or is over the size limit, is not counted).\n"
        << "- kernel.py size: at most " << task.budget.maxKernelBytes << " bytes.\n";
    if (!submitHint.empty()) {
        out << "\n## Feedback\n\n" << submitHint << "\n";
    }
    if (task.skillWithHeader) {
        out << "\n## Skill from the other DSL\n\n"
            << "The skill below is also in `TRANSFERRED_SKILL.md`.\n\n"
            << *task.skillWithHeader << "\n";
    }
    return out.str();
}

Result<WorkspaceLayout> prepareWorkspace(const AttemptTask& task) {
    const WorkspaceLayout layout = workspaceLayout(task.workspace, task.problem);
    std::error_code ec;
    fs::remove_all(task.workspace, ec);
    fs::create_directories(layout.docsDir, ec);
    if (ec) {
        return makeError("cannot create the attempt workspace " + task.workspace.string() + ": " + ec.message() +
                         "; check that the folder is writable");
    }
    auto write = [](const fs::path& path, const std::string& text) { return writeFileAtomically(path, text); };
    for (auto [path, text] :
         {std::pair{layout.taskFile, task.problem.source},
          std::pair{layout.contract, contractText(task.problem, task.dsl, task.budget, task.boundary)},
          std::pair{layout.instruction, task.instruction}, std::pair{layout.kernel, kernelStub(task.problem, task.dsl)},
          std::pair{layout.skill, std::string()}}) {
        if (Status written = write(path, text); !written) {
            return written.error();
        }
    }
    if (task.skillWithHeader) {
        if (Status written = write(layout.transferredSkill, *task.skillWithHeader); !written) {
            return written.error();
        }
    }
    for (const fs::path& doc : task.dsl.docPackPaths()) {
        fs::copy_file(doc, layout.docsDir / doc.filename(), fs::copy_options::overwrite_existing, ec);
        if (ec) {
            return makeError("cannot copy the DSL doc " + doc.string() + " into " + layout.docsDir.string() + ": " +
                             ec.message());
        }
    }
    return layout;
}

WorkspaceHarvest harvestWorkspace(const AttemptTask& task) {
    const WorkspaceLayout layout = workspaceLayout(task.workspace, task.problem);
    WorkspaceHarvest harvest;
    if (auto kernel = readFile(layout.kernel);
        kernel && *kernel != kernelStub(task.problem, task.dsl) && !trimmed(*kernel).empty()) {
        harvest.kernel = std::move(kernel).value();
    }
    if (auto skill = readFile(layout.skill); skill && !trimmed(*skill).empty()) {
        harvest.skill = std::move(skill).value();
    }
    return harvest;
}

std::string skillWithTransferHeader(const std::string& skillText, const std::string& sourceDslName) {
    return "# Skill from " + sourceDslName +
           "\nThis skill was distilled while working on this same problem in a different kernel DSL (" + sourceDslName +
           ").\n\n" + skillText;
}

} // namespace mkb
