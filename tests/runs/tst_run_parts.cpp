// Unit tests of the run's parts without the grader: progress events, the workspace, the skill header, driver settings.
#include "core/agents/command_driver.h"
#include "core/agents/reference_driver.h"
#include "core/agents/workspace.h"
#include "core/protocol/progress.h"
#include "core/util/shell_words.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

using namespace mkb;

namespace {

Problem sampleProblem() {
    Problem problem;
    problem.suite = "basic";
    problem.number = 7;
    problem.slug = "vector_add";
    problem.family = "basic";
    problem.title = "Vector add";
    problem.source = "\"\"\"Vector add.\"\"\"\n";
    return problem;
}

DslDescriptor sampleDsl() {
    DslDescriptor dsl;
    dsl.id = "cpusim";
    dsl.displayName = "cpusim";
    dsl.prompt = "Write kernels with @cpusim.kernel.";
    dsl.compliance.kernelMarkers = {"@cpusim\\.kernel"};
    return dsl;
}

} // namespace

class RunPartsTest : public QObject {
    Q_OBJECT

private slots:
    void skillHeaderIsTheProtocolSentence() {
        QCOMPARE(skillWithTransferHeader("- fuse it\n", "Triton"),
                 std::string("# Skill from Triton\nThis skill was distilled while working on this same problem in a "
                             "different kernel DSL (Triton).\n\n- fuse it\n"));
    }

    void workspaceHoldsEveryFileAndIgnoresTheStub() {
        QTemporaryDir dir;
        AttemptTask task;
        task.problem = sampleProblem();
        task.dsl = sampleDsl();
        task.workspace = dir.filePath("ws").toStdString();
        task.skillWithHeader = skillWithTransferHeader("- measured 2x\n", "cuda");
        task.instruction = instructionText(task, "Run ./submit.");
        QVERIFY(task.instruction.find("# Skill from cuda") != std::string::npos);
        QVERIFY(task.instruction.find("Run ./submit.") != std::string::npos);
        auto layout = prepareWorkspace(task);
        QVERIFY2(layout.ok(), layout ? "" : layout.error().message.c_str());
        for (const auto& file : {layout->taskFile, layout->contract, layout->instruction, layout->kernel, layout->skill,
                                 layout->transferredSkill}) {
            QVERIFY2(std::filesystem::exists(file), file.c_str());
        }
        QCOMPARE(layout->taskFile.filename().string(), std::string("07_vector_add.py"));
        WorkspaceHarvest untouched = harvestWorkspace(task);
        QVERIFY(untouched.kernel.empty());
        QVERIFY(!untouched.skill);
        QVERIFY(writeFileAtomically(layout->kernel, "def solve(x):\n    return x\n").ok());
        QVERIFY(writeFileAtomically(layout->skill, "  \n").ok());
        WorkspaceHarvest edited = harvestWorkspace(task);
        QCOMPARE(edited.kernel, std::string("def solve(x):\n    return x\n"));
        QVERIFY(!edited.skill); // a blank SKILL.md is no skill
    }

    void progressJsonCarriesEventAndCounts() {
        ProgressEvent event;
        event.kind = ProgressEventKind::Submission;
        event.coordinate = "p07_r1_solo_cpusim";
        event.trialId = 3;
        event.submissionIndex = 2;
        event.counted = true;
        event.passed = true;
        event.speedup = 1.5;
        event.submissionsLeft = 8;
        event.counts.total = 4;
        event.counts.done = 1;
        event.counts.running = 2;
        const nlohmann::json json = nlohmann::json::parse(progressEventJson(event));
        QCOMPARE(json["event"].get<std::string>(), std::string("submission"));
        QCOMPARE(json["coordinate"].get<std::string>(), std::string("p07_r1_solo_cpusim"));
        QCOMPARE(json["index"].get<int>(), 2);
        QCOMPARE(json["passed"].get<bool>(), true);
        QCOMPARE(json["counts"]["running"].get<int>(), 2);
        QVERIFY(json["eta_s"].is_null());
        const std::string line = progressEventLine(event);
        QVERIFY2(line.find("[1/4 done, 2 running, 0 failed") == 0, line.c_str());
        QVERIFY2(line.find("passed 1.50x (8 left)") != std::string::npos, line.c_str());
    }

    void durationsReadAsClockTimes() {
        QCOMPARE(formatDuration(70), std::string("01:10"));
        QCOMPARE(formatDuration(3723), std::string("1:02:03"));
        QCOMPARE(formatDuration(-5), std::string("00:00"));
    }

    void shellWordsReadBackWhatWasQuoted() {
        const std::vector<std::string> words{
            "mkb", "run", "--agent-command", "codex exec {prompt}", "--store", "/tmp/a b's.mkb",
            "",    "p0*", "--x=\"y\""};
        const std::string line = shellCommandLine(words);
        QCOMPARE(line, std::string("mkb run --agent-command 'codex exec {prompt}' --store '/tmp/a b'\\''s.mkb' '' "
                                   "'p0*' '--x=\"y\"'"));
        QCOMPARE(shellWords(line), words);
        QCOMPARE(shellWords("  a \"b c\"\\ d \"e\\\"f\" g\\ h  "),
                 (std::vector<std::string>{"a", "b c d", "e\"f", "g h"}));
        QCOMPARE(shellWords("mkb run --problems p0* --store old.mkb"),
                 (std::vector<std::string>{"mkb", "run", "--problems", "p0*", "--store", "old.mkb"}));
        QCOMPARE(shellQuoted("plain-word_1.0"), std::string("plain-word_1.0"));
    }

    void commandLinePlaceholdersAreQuoted() {
        QCOMPARE(expandCommandLine("agent --dir {workspace} --task {instruction}; {submit}", "/tmp/a b",
                                   "/tmp/a b/INSTRUCTION.md", "'/bin/mkb' submit"),
                 std::string("agent --dir '/tmp/a b' --task '/tmp/a b/INSTRUCTION.md'; '/bin/mkb' submit"));
    }

    void driverSettingsErrorsNameTheKey() {
        auto command = makeDriver("command", nlohmann::json::object());
        QVERIFY(!command.ok());
        QVERIFY(command.error().message.find("'command' is required") != std::string::npos);
        auto reference = makeDriver("reference", nlohmann::json{{"solutions", "x"}});
        QVERIFY(!reference.ok());
        QVERIFY(reference.error().message.find("unknown key 'solutions'") != std::string::npos);
        auto unknown = makeDriver("telepathy", nlohmann::json::object());
        QVERIFY(!unknown.ok());
        QVERIFY(makeDriver("reference", nlohmann::json{{"no_skill_for", {"cuda"}}}).ok());
    }

    void referenceSolutionPathFollowsTheSettings() {
        ReferenceSettings settings;
        settings.solutionsDir = "/sol";
        settings.solutionDsl["cpusimb"] = "cpusim";
        QCOMPARE(referenceSolutionPath(settings, sampleProblem(), "cpusimb").string(),
                 std::string("/sol/07_vector_add.cpusim.py"));
        QCOMPARE(referenceSolutionPath(settings, sampleProblem(), "triton").string(),
                 std::string("/sol/07_vector_add.triton.py"));
    }

    void referenceSkillReportsTheMeasurement() {
        SubmitOutcome outcome;
        Verdict verdict;
        verdict.passed = true;
        verdict.stage = "done";
        verdict.correctDraws = 5;
        verdict.totalDraws = 5;
        verdict.kernelMedianMs = 0.5;
        verdict.eagerMedianMs = 1.0;
        verdict.speedupVsEager = 2.0;
        outcome.verdict = verdict;
        const std::string skill =
            referenceSkill(sampleProblem(), sampleDsl(), "\"\"\"Adds in blocks of 256.\n\nMore.\"\"\"\n", outcome);
        QVERIFY2(skill.find("Approach: Adds in blocks of 256.") != std::string::npos, skill.c_str());
        QVERIFY2(skill.find("a speedup of 2x") != std::string::npos, skill.c_str());
        QVERIFY2(skill.find("correct on 5 of 5 draws") != std::string::npos, skill.c_str());
    }
};

QTEST_GUILESS_MAIN(RunPartsTest)
#include "tst_run_parts.moc"
