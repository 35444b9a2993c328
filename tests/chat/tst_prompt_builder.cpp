// Prompt templates: rendering rules, the shipped set, and snapshot checks of the instruction's content.
#include "chat_fixtures.h"

#include "core/agents/prompt_builder.h"
#include "core/agents/secrets.h"
#include "core/catalog/dsl_registry.h"

#include <QtTest>

#include <fstream>

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

mkb::PromptBuilder shippedBuilder() {
    auto templates = mkb::loadPromptTemplates(mkbtest::sourceDir() / "resources" / "prompts");
    if (!templates) {
        qFatal("%s", templates.error().message.c_str());
    }
    return mkb::PromptBuilder(std::move(templates).value());
}

} // namespace

class PromptBuilderTest : public QObject {
    Q_OBJECT
private slots:
    void placeholdersAndSectionsRender() {
        const mkb::TemplateValues values = {{"name", "Ada"}, {"note", ""}, {"extra", "yes"}};
        auto text = mkb::renderTemplate("Hi {{name}}.\n{{#note}}\nNote: {{note}}\n{{/note}}\n{{^note}}\nNo note.\n"
                                        "{{/note}}\n{{#extra}}Extra!{{/extra}}\n",
                                        values, "t.md");
        QVERIFY2(text, text ? "" : text.error().message.c_str());
        QCOMPARE(*text, std::string("Hi Ada.\nNo note.\nExtra!\n"));
    }

    void renderErrorsNameTheTemplate() {
        auto missing = mkb::renderTemplate("{{who}}", {}, "greeting.md");
        QVERIFY(!missing);
        QVERIFY(contains(missing.error().message, "greeting.md"));
        QVERIFY(contains(missing.error().message, "{{who}}"));
        auto unclosed = mkb::renderTemplate("{{#who}}x", {{"who", "a"}}, "greeting.md");
        QVERIFY(!unclosed);
        QVERIFY(contains(unclosed.error().message, "never closed"));
        auto stray = mkb::renderTemplate("{{/who}}", {{"who", "a"}}, "greeting.md");
        QVERIFY(!stray);
    }

    void shippedTemplatesLoad() {
        auto templates = mkb::loadPromptTemplates(mkbtest::sourceDir() / "resources" / "prompts");
        QVERIFY2(templates, templates ? "" : templates.error().message.c_str());
        QCOMPARE(templates->textByName.size(), mkb::promptTemplatePlaceholders().size());
    }

    void unknownPlaceholderIsRefusedAtLoad() {
        QTemporaryDir dir;
        const std::filesystem::path shipped = mkbtest::sourceDir() / "resources" / "prompts";
        for (const auto& [name, allowed] : mkb::promptTemplatePlaceholders()) {
            std::filesystem::copy_file(shipped / name, std::filesystem::path(dir.path().toStdString()) / name);
        }
        std::ofstream(std::filesystem::path(dir.path().toStdString()) / "feedback.md") << "{{report}} {{secret_sauce}}";
        auto templates = mkb::loadPromptTemplates(dir.path().toStdString());
        QVERIFY(!templates);
        QVERIFY(contains(templates.error().message, "feedback.md"));
        QVERIFY(contains(templates.error().message, "{{secret_sauce}}"));
        std::filesystem::remove(std::filesystem::path(dir.path().toStdString()) / "correction.md");
        templates = mkb::loadPromptTemplates(dir.path().toStdString());
        QVERIFY(!templates);
    }

    void soloInstructionHoldsTheContractAndNoSkillSection() {
        auto registry = mkb::loadDslRegistry({mkbtest::sourceDir() / "resources" / "dsls"});
        QVERIFY(registry);
        mkb::AttemptTask task = chattest::smallTask("/tmp/unused", 7, 1800);
        task.dsl = *registry->find("triton");
        auto text = shippedBuilder().instruction(task, 300000);
        QVERIFY2(text, text ? "" : text.error().message.c_str());
        const std::string& instruction = *text;
        // Problem title and file.
        QVERIFY(contains(instruction, "# Task: Add two vectors"));
        QVERIFY(contains(instruction, "```python title=01_vector_add.py\n\"\"\"Add two vectors\"\"\""));
        QVERIFY(contains(instruction, "def reference(x, y):"));
        // The contract in words (DESIGN §5.1).
        QVERIFY(contains(instruction, "5 draws"));
        QVERIFY(contains(instruction, "float64 anchor"));
        QVERIFY(contains(instruction, "3 × max("));
        QVERIFY(contains(instruction, "10 warm-up draws, then 50 timed draws"));
        QVERIFY(contains(instruction, "speedup = eager median / your median"));
        QVERIFY(contains(instruction, "`@triton\\.jit`"));
        QVERIFY(contains(instruction, "`torch\\.compile`"));
        // Boundary, deliverables, skill instructions.
        // The default boundary is MetaKernelBench's (mkb): eager may finish what a kernel started.
        QVERIFY(contains(instruction, "Boundary: `mkb`"));
        QVERIFY(contains(instruction, "eager PyTorch may consume or transform its result afterwards"));
        QVERIFY(!contains(instruction, "All arithmetic of the problem must happen"));
        QVERIFY(contains(instruction, "`solve(*inputs)`"));
        QVERIFY(contains(instruction, "`SKILL.md`"));
        QVERIFY(contains(instruction, "Evidence-backed conclusions"));
        QVERIFY(contains(instruction, "worth moving out of eager PyTorch"));
        QVERIFY(contains(instruction, "Why failed approaches failed"));
        QVERIFY(contains(instruction, "must not contain code, shell commands"));
        // Budget and reply format.
        QVERIFY(contains(instruction, "Feedback submissions: 7."));
        QVERIFY(contains(instruction, "Wall clock: 30.0 minutes"));
        QVERIFY(contains(instruction, "at most 300000 bytes"));
        QVERIFY(contains(instruction, "```python title=kernel.py"));
        QVERIFY(contains(instruction, "a line reading exactly `DONE`"));
        // The DSL guide: descriptor prompt and doc pack.
        QVERIFY(contains(instruction, "## The Triton guide"));
        QVERIFY(contains(instruction, task.dsl.prompt));
        QVERIFY(contains(instruction, "### guide.md"));
        // No skill section in a solo arm; no placeholder left anywhere.
        QVERIFY(!contains(instruction, "Skill from the other DSL"));
        QVERIFY(!contains(instruction, "{{"));
    }

    void strictInstructionPutsAllArithmeticInTheDsl() {
        auto registry = mkb::loadDslRegistry({mkbtest::sourceDir() / "resources" / "dsls"});
        QVERIFY(registry);
        mkb::AttemptTask task = chattest::smallTask("/tmp/unused");
        task.dsl = *registry->find("triton");
        task.boundary = "strict";
        auto text = shippedBuilder().instruction(task, 300000);
        QVERIFY2(text, text ? "" : text.error().message.c_str());
        QVERIFY(contains(*text, "Boundary: `strict`"));
        QVERIFY(contains(*text, "All arithmetic of the problem must happen in kernels you write in Triton"));
        QVERIFY(contains(*text, "even `y * 1.0` or a bias add"));
        QVERIFY(!contains(*text, "Boundary: `mkb`"));
        QVERIFY(contains(*text, "worth moving out of eager PyTorch"));
    }

    void unknownBoundaryIsAnErrorNamingBoth() {
        mkb::AttemptTask task = chattest::smallTask("/tmp/unused");
        task.boundary = "loose";
        auto text = shippedBuilder().instruction(task, 300000);
        QVERIFY(!text);
        QVERIFY(contains(text.error().message, "'loose'"));
        QVERIFY(contains(text.error().message, "mkb or strict"));
    }

    void conditionedInstructionCarriesTheSkillWithItsHeader() {
        mkb::AttemptTask task = chattest::smallTask("/tmp/unused");
        task.armName = "cuda2triton_skill";
        task.skillWithHeader =
            "# Skill from CUDA\nThis skill was distilled while working on this same problem in a "
            "different kernel DSL (CUDA).\n\n- SKILL-BODY-MARKER: vectorised loads doubled bandwidth";
        auto text = shippedBuilder().instruction(task, 300000);
        QVERIFY2(text, text ? "" : text.error().message.c_str());
        QVERIFY(contains(*text, "## Skill from the other DSL"));
        QVERIFY(contains(*text, "# Skill from CUDA\nThis skill was distilled while working on this same problem"));
        QVERIFY(contains(*text, "SKILL-BODY-MARKER"));
        QVERIFY(text->find("SKILL-BODY-MARKER") > text->find("TINY-DSL-PROMPT"));
    }

    void feedbackAndCorrectionMessages() {
        const mkb::PromptBuilder builder = shippedBuilder();
        mkb::SubmitOutcome outcome;
        outcome.counted = true;
        outcome.reportText = "correct on 5/5 draws\n";
        outcome.submissionsLeft = 4;
        outcome.secondsLeft = 600;
        auto feedback = builder.feedback({3, outcome});
        QVERIFY(feedback);
        QVERIFY(contains(*feedback, "# Grader report for submission 3\n\ncorrect on 5/5 draws\n"));
        QVERIFY(contains(*feedback, "Submissions left: 4. Minutes left: 10.0."));
        QVERIFY(!contains(*feedback, "not counted"));
        outcome.counted = false;
        feedback = builder.feedback({3, outcome});
        QVERIFY(contains(*feedback, "not counted against your budget"));
        auto correction = builder.correction("the reply holds 2 kernel.py blocks.", 4, 90);
        QVERIFY(correction);
        QVERIFY(contains(*correction, "The reply holds 2 kernel.py blocks. Nothing was graded"));
        QVERIFY(contains(*correction, "Minutes left: 1.5."));
        auto system = builder.systemMessage(chattest::smallTask("/tmp/unused"));
        QVERIFY(system && contains(*system, "Triton"));
    }

    void redactorReplacesEverySecret() {
        mkb::SecretRedactor redactor;
        redactor.add("short"); // too short to redact safely: ignored
        redactor.add("sk-abcdefgh");
        redactor.add("sk-abcdefgh-longer"); // contains the other: replaced whole
        QCOMPARE(redactor.redact("a sk-abcdefgh-longer b sk-abcdefgh c short"),
                 std::string("a [REDACTED] b [REDACTED] c short"));
        QCOMPARE(redactor.redact("sk-abcdefghsk-abcdefgh"), std::string("[REDACTED][REDACTED]"));
        QVERIFY(mkb::SecretRedactor().redact("nothing") == "nothing");
    }
};

QTEST_GUILESS_MAIN(PromptBuilderTest)
#include "tst_prompt_builder.moc"
