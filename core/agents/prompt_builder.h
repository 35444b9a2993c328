// The chat driver's messages, rendered from the Markdown templates in resources/prompts/.
#pragma once

#include "core/agents/driver.h"
#include "core/util/result.h"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace mkb {

/// Values for a template's placeholders, by name.
using TemplateValues = std::map<std::string, std::string>;

/// Renders `{{name}}` placeholders, `{{#name}}…{{/name}}` sections (kept when the value is non-empty) and
/// `{{^name}}…{{/name}}` sections (kept when it is empty). templateName names the template in errors; a
/// placeholder without a value or an unclosed section is an error.
Result<std::string> renderTemplate(std::string_view text, const TemplateValues& values,
                                   const std::string& templateName);

/// The placeholders a template may use, by template file name ("instruction.md" → {"problem_title", ...}).
const std::map<std::string, std::vector<std::string>>& promptTemplatePlaceholders();

/// The template files, loaded and checked: every file of promptTemplatePlaceholders() exists, is valid UTF-8 and uses
/// only its own placeholders.
struct PromptTemplates {
    std::filesystem::path dir;
    std::map<std::string, std::string> textByName;
};

Result<PromptTemplates> loadPromptTemplates(const std::filesystem::path& dir);

/// The shipped templates: resourcesDir()/prompts.
std::filesystem::path defaultPromptsDir();

/// The template that states an implementation boundary to the model: "mkb" → "boundary_mkb.md", "strict" →
/// "boundary_strict.md"; any other name is an error naming the two.
Result<std::string> boundaryTemplate(const std::string& boundary);

/// What one grader report looks like to the model.
struct FeedbackFacts {
    int submissionNumber = 0; // 1-based, counting every kernel sent to the gate
    SubmitOutcome outcome;
};

/// Builds each message of a chat attempt from loaded templates.
class PromptBuilder {
public:
    explicit PromptBuilder(PromptTemplates templates) : templates_(std::move(templates)) {}

    Result<std::string> systemMessage(const AttemptTask& task) const;
    /// The first user message: problem, contract, boundary, deliverables, skill instructions, budget, reply format,
    /// the DSL guide (descriptor prompt and doc pack) and, when conditioned, the transferred skill with its header.
    Result<std::string> instruction(const AttemptTask& task, std::size_t maxReplyBytes) const;
    Result<std::string> feedback(const FeedbackFacts& facts) const;
    /// The report of the submission that spent the budget, and the request for the final SKILL.md.
    Result<std::string> finalSkillRequest(const FeedbackFacts& facts) const;
    Result<std::string> correction(const std::string& defect, int submissionsLeft, double secondsLeft) const;
    Result<std::string> noKernelReminder(int submissionsLeft, double secondsLeft) const;

private:
    Result<std::string> render(const std::string& name, const TemplateValues& values) const;

    PromptTemplates templates_;
};

/// "12.5": minutes left, one decimal, never negative.
std::string minutesText(double seconds);

} // namespace mkb
