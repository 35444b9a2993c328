// Template rendering (placeholders and sections, mustache-like) and the chat attempt's messages.
#include "core/agents/prompt_builder.h"

#include "core/agents/workspace.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

namespace mkb {

namespace fs = std::filesystem;

namespace {

enum class TagKind { Value, OpenIfSet, OpenIfEmpty, Close };

struct Tag {
    TagKind kind = TagKind::Value;
    std::string name;
    std::size_t start = 0; // where the text before it ends
    std::size_t end = 0;   // where the text after it begins
};

bool isNameCharacter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/// Splits a template into tags; section tags alone on their line take the whole line with them.
Result<std::vector<Tag>> scanTags(std::string_view text, const std::string& templateName) {
    std::vector<Tag> tags;
    std::size_t at = 0;
    while ((at = text.find("{{", at)) != std::string_view::npos) {
        const std::size_t close = text.find("}}", at + 2);
        if (close == std::string_view::npos) {
            return makeError("prompt template " + templateName + ": '{{' without '}}'; fix the template");
        }
        Tag tag;
        std::string_view inner = text.substr(at + 2, close - at - 2);
        if (!inner.empty() && (inner[0] == '#' || inner[0] == '^' || inner[0] == '/')) {
            tag.kind = inner[0] == '#' ? TagKind::OpenIfSet : inner[0] == '^' ? TagKind::OpenIfEmpty : TagKind::Close;
            inner.remove_prefix(1);
        }
        if (inner.empty() || !std::all_of(inner.begin(), inner.end(), isNameCharacter)) {
            return makeError("prompt template " + templateName + ": bad placeholder '{{" +
                             std::string(text.substr(at + 2, close - at - 2)) +
                             "}}'; use lowercase names like {{problem_title}}");
        }
        tag.name = std::string(inner);
        tag.start = at;
        tag.end = close + 2;
        if (tag.kind != TagKind::Value) {
            const std::size_t lineStart = text.rfind('\n', at == 0 ? 0 : at - 1);
            const std::size_t from = (lineStart == std::string_view::npos || at == 0) ? 0 : lineStart + 1;
            const bool blankBefore = text.substr(from, at - from).find_first_not_of(" \t") == std::string_view::npos;
            std::size_t after = tag.end;
            while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) {
                ++after;
            }
            if (blankBefore && (after == text.size() || text[after] == '\n')) {
                tag.start = from;
                tag.end = after == text.size() ? after : after + 1;
            }
        }
        tags.push_back(std::move(tag));
        at = close + 2;
    }
    return tags;
}

std::string joinedCode(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) {
        out += (out.empty() ? "`" : ", `") + item + "`";
    }
    return out.empty() ? "none" : out;
}

} // namespace

Result<std::string> renderTemplate(std::string_view text, const TemplateValues& values,
                                   const std::string& templateName) {
    auto tags = scanTags(text, templateName);
    if (!tags) {
        return tags.error();
    }
    std::string out;
    std::vector<std::pair<std::string, bool>> sections; // name, kept
    auto emitting = [&] {
        return std::all_of(sections.begin(), sections.end(), [](const auto& section) { return section.second; });
    };
    std::size_t cursor = 0;
    for (const Tag& tag : *tags) {
        if (emitting()) {
            out.append(text.substr(cursor, tag.start - cursor));
        }
        cursor = tag.end;
        if (tag.kind == TagKind::Close) {
            if (sections.empty() || sections.back().first != tag.name) {
                return makeError("prompt template " + templateName + ": {{/" + tag.name +
                                 "}} closes no open section; fix the template");
            }
            sections.pop_back();
            continue;
        }
        const auto value = values.find(tag.name);
        if (value == values.end()) {
            return makeError("prompt template " + templateName + ": no value for {{" + tag.name +
                             "}}; use only the placeholders listed in docs or the template's neighbours");
        }
        if (tag.kind == TagKind::Value) {
            if (emitting()) {
                out += value->second;
            }
        } else {
            const bool set = !trimmed(value->second).empty();
            sections.emplace_back(tag.name, tag.kind == TagKind::OpenIfSet ? set : !set);
        }
    }
    if (!sections.empty()) {
        return makeError("prompt template " + templateName + ": section {{#" + sections.back().first +
                         "}} is never closed; add {{/" + sections.back().first + "}}");
    }
    out.append(text.substr(cursor));
    return out;
}

const std::map<std::string, std::vector<std::string>>& promptTemplatePlaceholders() {
    static const std::map<std::string, std::vector<std::string>> placeholders = {
        {"system.md", {"dsl_name"}},
        {"instruction.md",
         {"problem_title", "problem_name", "problem_file_name", "problem_source", "dsl_name", "dsl_guide", "contract",
          "boundary", "skill_instructions", "reply_format", "max_submissions", "wall_minutes", "max_kernel_bytes",
          "transferred_skill"}},
        {"contract.md", {"dsl_name", "max_kernel_bytes", "kernel_markers", "forbidden_imports", "forbidden_patterns"}},
        {"boundary_mkb.md", {"dsl_name"}},
        {"boundary_strict.md", {"dsl_name"}},
        {"skill_instructions.md", {"dsl_name"}},
        {"reply_format.md", {"max_reply_bytes"}},
        {"transferred_skill.md", {"dsl_name", "skill_with_header"}},
        {"feedback.md", {"submission_number", "report", "counted", "submissions_left", "minutes_left"}},
        {"final_skill.md", {"submission_number", "report", "minutes_left"}},
        {"correction.md", {"defect", "submissions_left", "minutes_left"}},
        {"no_kernel.md", {"submissions_left", "minutes_left"}},
    };
    return placeholders;
}

fs::path defaultPromptsDir() {
    return resourcesDir() / "prompts";
}

Result<PromptTemplates> loadPromptTemplates(const fs::path& dir) {
    PromptTemplates templates;
    templates.dir = dir;
    for (const auto& [name, allowed] : promptTemplatePlaceholders()) {
        const fs::path file = dir / name;
        auto text = readFile(file);
        if (!text) {
            return makeError("prompt template " + file.string() + " cannot be read; restore it or point " +
                             "prompts_dir at a folder holding every template");
        }
        if (!isValidUtf8(*text)) {
            return makeError("prompt template " + file.string() + " is not valid UTF-8; save it as UTF-8");
        }
        auto tags = scanTags(*text, file.string());
        if (!tags) {
            return tags.error();
        }
        for (const Tag& tag : *tags) {
            if (std::find(allowed.begin(), allowed.end(), tag.name) == allowed.end()) {
                std::string list;
                for (const std::string& known : allowed) {
                    list += (list.empty() ? "" : ", ") + known;
                }
                return makeError("prompt template " + file.string() + ": unknown placeholder {{" + tag.name +
                                 "}}; this template may use " + list);
            }
        }
        TemplateValues probe;
        for (const std::string& known : allowed) {
            probe[known] = "x";
        }
        if (auto rendered = renderTemplate(*text, probe, file.string()); !rendered) {
            return rendered.error();
        }
        templates.textByName[name] = std::move(text).value();
    }
    return templates;
}

std::string minutesText(double seconds) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", std::max(0.0, seconds) / 60.0);
    return buffer;
}

Result<std::string> PromptBuilder::render(const std::string& name, const TemplateValues& values) const {
    const auto text = templates_.textByName.find(name);
    if (text == templates_.textByName.end()) {
        return makeError("prompt template " + (templates_.dir / name).string() + " was not loaded");
    }
    return renderTemplate(text->second, values, (templates_.dir / name).string());
}

Result<std::string> boundaryTemplate(const std::string& boundary) {
    if (boundary == "mkb" || boundary == "strict") {
        return "boundary_" + boundary + ".md";
    }
    return makeError("the implementation boundary '" + boundary +
                     "' has no prompt template; use mkb or strict (resources/prompts/boundary_<name>.md)");
}

Result<std::string> PromptBuilder::systemMessage(const AttemptTask& task) const {
    return render("system.md", {{"dsl_name", task.dsl.displayName}});
}

Result<std::string> PromptBuilder::instruction(const AttemptTask& task, std::size_t maxReplyBytes) const {
    const std::string dslName = task.dsl.displayName;
    auto contract = render("contract.md", {{"dsl_name", dslName},
                                           {"max_kernel_bytes", std::to_string(task.budget.maxKernelBytes)},
                                           {"kernel_markers", joinedCode(task.dsl.compliance.kernelMarkers)},
                                           {"forbidden_imports", joinedCode(task.dsl.compliance.forbiddenImports)},
                                           {"forbidden_patterns", joinedCode(task.dsl.compliance.forbiddenPatterns)}});
    auto boundary = boundaryTemplate(task.boundary);
    if (boundary) {
        boundary = render(*boundary, {{"dsl_name", dslName}});
    }
    auto skillInstructions = render("skill_instructions.md", {{"dsl_name", dslName}});
    auto replyFormat = render("reply_format.md", {{"max_reply_bytes", std::to_string(maxReplyBytes)}});
    for (const Result<std::string>* part : {&contract, &boundary, &skillInstructions, &replyFormat}) {
        if (!*part) {
            return part->error();
        }
    }
    std::string guide = task.dsl.prompt;
    for (const fs::path& doc : task.dsl.docPackPaths()) {
        auto text = readFile(doc);
        if (!text) {
            return makeError("the " + dslName + " doc pack file " + doc.string() +
                             " cannot be read; restore it or fix the descriptor's doc_pack");
        }
        guide += "\n\n### " + doc.filename().string() + "\n\n" + std::string(trimmed(*text));
    }
    std::string transferred;
    if (task.skillWithHeader) {
        auto section =
            render("transferred_skill.md", {{"dsl_name", dslName}, {"skill_with_header", *task.skillWithHeader}});
        if (!section) {
            return section.error();
        }
        transferred = std::string(trimmed(*section));
    }
    std::string source = task.problem.source;
    while (!source.empty() && source.back() == '\n') {
        source.pop_back();
    }
    return render("instruction.md", {{"problem_title", task.problem.title},
                                     {"problem_name", task.problem.name()},
                                     {"problem_file_name", workspaceLayout("", task.problem).taskFile.string()},
                                     {"problem_source", source},
                                     {"dsl_name", dslName},
                                     {"dsl_guide", guide},
                                     {"contract", std::string(trimmed(*contract))},
                                     {"boundary", std::string(trimmed(*boundary))},
                                     {"skill_instructions", std::string(trimmed(*skillInstructions))},
                                     {"reply_format", std::string(trimmed(*replyFormat))},
                                     {"max_submissions", std::to_string(task.budget.maxSubmissions)},
                                     {"wall_minutes", minutesText(task.budget.wallSeconds)},
                                     {"max_kernel_bytes", std::to_string(task.budget.maxKernelBytes)},
                                     {"transferred_skill", transferred}});
}

Result<std::string> PromptBuilder::feedback(const FeedbackFacts& facts) const {
    return render("feedback.md", {{"submission_number", std::to_string(facts.submissionNumber)},
                                  {"report", std::string(trimmed(facts.outcome.reportText))},
                                  {"counted", facts.outcome.counted ? "yes" : ""},
                                  {"submissions_left", std::to_string(facts.outcome.submissionsLeft)},
                                  {"minutes_left", minutesText(facts.outcome.secondsLeft)}});
}

Result<std::string> PromptBuilder::finalSkillRequest(const FeedbackFacts& facts) const {
    return render("final_skill.md", {{"submission_number", std::to_string(facts.submissionNumber)},
                                     {"report", std::string(trimmed(facts.outcome.reportText))},
                                     {"minutes_left", minutesText(facts.outcome.secondsLeft)}});
}

Result<std::string> PromptBuilder::correction(const std::string& defect, int submissionsLeft,
                                              double secondsLeft) const {
    std::string sentence = defect;
    while (!sentence.empty() && sentence.back() == '.') {
        sentence.pop_back();
    }
    if (!sentence.empty()) {
        sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
    }
    return render("correction.md", {{"defect", sentence},
                                    {"submissions_left", std::to_string(submissionsLeft)},
                                    {"minutes_left", minutesText(secondsLeft)}});
}

Result<std::string> PromptBuilder::noKernelReminder(int submissionsLeft, double secondsLeft) const {
    return render("no_kernel.md",
                  {{"submissions_left", std::to_string(submissionsLeft)}, {"minutes_left", minutesText(secondsLeft)}});
}

} // namespace mkb
