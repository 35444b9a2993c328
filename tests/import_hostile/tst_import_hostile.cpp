// Tests of `mkb import` on hostile results folders (issue 14 §3): deep JSON, null flags, out-of-range numbers,
// truncated verdicts, links out of the folder and malformed records each skip one trial with a line saying why.
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"
#include "support/results_folder.h"
#include "support/testpaths.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using mkbtest::recordJson;
using mkbtest::writeText;

const char* const kProblem = "01_mha_prefill";

/// results/glm-5/ holding one good trial (replicate 1, solo_cutedsl, with its kernel and two submissions).
fs::path goodResultsFolder(const fs::path& root) {
    const fs::path model = root / "results" / "glm-5";
    writeText(model / "store.json", R"({"model": "openrouter/z/glm-5", "prefix": "abc123"})");
    writeText(model / "results.json",
              R"({"cells": [{"cell": {"problem": "01_mha_prefill", "category": "attention"}}]})");
    const fs::path good = model / "problems" / kProblem / "abc123_p01_r1_solo_cutedsl";
    writeText(good / "record.json", recordJson(1.0, 2.0));
    writeText(good / "verdict.json", R"({"rewards": {}, "report": "ok", "eval_sec": 2.0})");
    writeText(good / "artifacts" / "app" / "kernel.py", "def solve(x):\n    return x\n");
    return root / "results";
}

/// The folder of trial replicate `replicate`, arm solo_tirx, of the one problem.
fs::path trialDir(const fs::path& results, int replicate, const std::string& arm = "solo_tirx") {
    return results / "glm-5" / "problems" / kProblem / ("abc123_p01_r" + std::to_string(replicate) + "_" + arm);
}

std::string nested(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

/// A record.json with rewards and usage given as JSON text, and extra top-level fields.
std::string record(const std::string& rewards, const std::string& usage = "null", const std::string& extra = "") {
    return R"({"rewards": )" + rewards + R"(, "timed_out": false, "error": null, "skipped": null, "usage": )" + usage +
           extra + "}";
}
const std::string kRewards = R"({"imported": 1.0, "correct": 1.0, "passed": 1.0, "speedup_vs_eager": 1.5})";

struct CliRun {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

CliRun runImport(const fs::path& results, const fs::path& store) {
    QProcess process;
    process.start(QString::fromStdString(mkbtest::cliPath()),
                  {"import", QString::fromStdString(results.string()), "--store",
                   QString::fromStdString(store.string()), "--json"});
    CliRun run;
    if (!process.waitForFinished(120000)) {
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : 128 + 11;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

/// The issue message whose path contains `where`, or "" when none does.
std::string issueAt(const mkb::ImportSummary& summary, const std::string& where) {
    for (const mkb::ImportIssue& issue : summary.issues) {
        if (issue.path.string().find(where) != std::string::npos) {
            return issue.message;
        }
    }
    return {};
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestImportHostile : public QObject {
    Q_OBJECT

private slots:
    void deepJsonInAnyFileIsOneLineAndTheRestImports() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        const std::string deep = nested(100000);
        writeText(trialDir(results, 2) / "record.json", R"({"rewards": {}, "error": )" + deep + "}");
        writeText(trialDir(results, 3) / "record.json", record(deep));
        writeText(trialDir(results, 4) / "record.json", recordJson(1.0, 1.0));
        writeText(trialDir(results, 4) / "submissions.jsonl", "{\"rewards\": " + deep + "}\n");
        writeText(trialDir(results, 5) / "record.json", recordJson(1.0, 1.0));
        writeText(trialDir(results, 5) / "verdict.json", "{\"rewards\": {}, \"details\": " + deep + "}");
        writeText(results / "glm-5" / "invocations.jsonl", "{\"argv\": " + deep + "}\n");
        writeText(results / "kimi" / "store.json", "{\"model\": " + deep + "}");

        const CliRun run = runImport(results, root / "p.sqlite");
        QCOMPARE(run.exitCode, 1); // was 139: a segfault
        QVERIFY2(run.out.contains("\"trials_imported\":1"), run.out.constData());
        const std::string err = run.err.toStdString();
        for (const char* where : {"r2_solo_tirx: record.json: nested deeper than 256 levels at line 1",
                                  "r3_solo_tirx: record.json: nested deeper than 256",
                                  "r4_solo_tirx: submissions.jsonl line 1: nested deeper than 256",
                                  "r5_solo_tirx: verdict.json: nested deeper than 256",
                                  "invocations.jsonl: invocations.jsonl line 1: nested deeper than 256",
                                  "kimi/store.json: store.json: nested deeper than 256"}) {
            QVERIFY2(contains(err, where), (std::string(where) + " missing from:\n" + err).c_str());
        }
    }

    void aNullFlagOrALinkLoopSkipsOneTrialWithExitOne() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        writeText(trialDir(results, 2) / "record.json",
                  R"({"rewards": {"passed": 1.0}, "timed_out": null, "error": null, "skipped": null})");
        writeText(trialDir(results, 3) / "record.json", recordJson(1.0, 1.0));
        writeText(trialDir(results, 3) / "submissions.jsonl", "{\"counted\": null, \"rewards\": null}\n");
        writeText(trialDir(results, 4) / "record.json", recordJson(1.0, 1.0)); // a null note is no reason given
        writeText(trialDir(results, 4) / "submissions.jsonl", "{\"counted\": false, \"note\": null}\n");
        fs::create_directories(trialDir(results, 5));
        fs::create_symlink("record.json", trialDir(results, 5) / "record.json"); // points at itself
        fs::create_symlink(trialDir(results, 6).filename(), trialDir(results, 6));
        const CliRun run = runImport(results, root / "p.sqlite");
        QCOMPARE(run.exitCode, 1); // was 5, "internal error … please report this", and nothing imported
        QVERIFY2(run.out.contains("\"trials_imported\":2"), run.out.constData());
        const std::string err = run.err.toStdString();
        for (const char* line :
             {"r2_solo_tirx: record.json: field 'timed_out' is null, expected true or false; trial skipped",
              "r3_solo_tirx: submissions.jsonl line 1: field 'counted' is null, expected true or false; trial skipped",
              "r5_solo_tirx: record.json: is a link that cannot be followed", "r6_solo_tirx: cannot be examined"}) {
            QVERIFY2(contains(err, line), (std::string(line) + " missing from:\n" + err).c_str());
        }
        QVERIFY(!contains(err, "internal error"));
    }

    void outOfRangeAndNegativeNumbersAreRefusedByName() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        const std::vector<std::pair<std::string, std::string>> cases = {
            {record(kRewards, R"({"n_input_tokens": 1e308})"), "field 'usage.n_input_tokens' is 1e+308"},
            {record(kRewards, R"({"n_output_tokens": -5})"), "field 'usage.n_output_tokens' is -5"},
            {record(kRewards, R"({"n_cache_tokens": 18446744073709551615})"), "field 'usage.n_cache_tokens' is"},
            {record(kRewards, R"({"n_input_tokens": 2.5})"), "field 'usage.n_input_tokens' is 2.5"},
            {record(kRewards, R"({"cost_usd": -0.5})"), "field 'usage.cost_usd' is -0.5"},
            {record(kRewards, R"({"agent_sec": "long"})"), "field 'usage.agent_sec' is a string, expected a number"},
            {record(R"({"passed": 1.0, "correct": 1.0, "speedup_vs_eager": -2.0})"),
             "field 'rewards.speedup_vs_eager' is -2.0"},
            {record(kRewards, R"({"n_input_tokens": 1e400})"), "record.json: number overflow"},
        };
        for (std::size_t i = 0; i < cases.size(); ++i) {
            writeText(trialDir(results, static_cast<int>(i) + 2) / "record.json", cases[i].first);
        }
        writeText(trialDir(results, 20) / "record.json", recordJson(1.0, 1.0));
        writeText(trialDir(results, 20) / "submissions.jsonl", "{\"rewards\": {\"speedup_vs_eager\": -1}}\n");

        auto store = mkb::Store::open(root / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(summary.ok());
        QCOMPARE(summary->trialsImported, 1);
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const std::string message = issueAt(*summary, "_r" + std::to_string(i + 2) + "_solo_tirx");
            QVERIFY2(contains(message, cases[i].second) && contains(message, "trial skipped"),
                     (cases[i].second + " expected, got: " + message).c_str());
        }
        QVERIFY(contains(issueAt(*summary, "_r20_solo_tirx"),
                         "submissions.jsonl line 1: field 'rewards.speedup_vs_eager' is -1"));
        mkb::TrialFilter all;
        all.includeArchived = true;
        auto stored = (*store)->loadTrials(all);
        QVERIFY(stored.ok());
        for (const mkb::TrialRecord& trial : *stored) {
            QVERIFY(trial.usage.inputTokens.value_or(0) >= 0);
        }
    }

    void aTruncatedOrIncompleteVerdictIsNotStored() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        const std::string whole = R"({"rewards": {"passed": 1.0}, "details": {"a": 1}, "eval_sec": 3.5})";
        const std::vector<std::pair<std::string, std::string>> cases = {
            {whole.substr(0, whole.size() / 2), "verdict.json: syntax error"},
            {R"({"eval_sec": 3.5})", "verdict.json: has no field 'rewards'"},
            {"", "verdict.json: is empty"},
            {"[1, 2]", "verdict.json: is an array, expected a JSON object"},
            {R"({"rewards": {}, "eval_sec": -1})", "verdict.json: field 'eval_sec' is -1"},
        };
        for (std::size_t i = 0; i < cases.size(); ++i) {
            writeText(trialDir(results, static_cast<int>(i) + 2) / "record.json", recordJson(1.0, 1.0));
            writeText(trialDir(results, static_cast<int>(i) + 2) / "verdict.json", cases[i].first);
        }
        auto store = mkb::Store::open(root / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(summary.ok());
        QCOMPARE(summary->trialsImported, 1);
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const std::string message = issueAt(*summary, "_r" + std::to_string(i + 2) + "_solo_tirx");
            QVERIFY2(contains(message, cases[i].second), (cases[i].second + " expected, got: " + message).c_str());
        }
    }

    void onlyRegularFilesInsideTheResultsFolderAreRead() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        writeText(root / "outside" / "secret.txt", "SECRET outside the results folder\n");
        writeText(root / "outside" / "trial" / "record.json", recordJson(1.0, 1.0));
        // kernel.py -> a file outside (as -> /etc/passwd would be)
        writeText(trialDir(results, 2) / "record.json", recordJson(1.0, 1.0));
        fs::create_directories(trialDir(results, 2) / "artifacts" / "app");
        fs::create_symlink(root / "outside" / "secret.txt", trialDir(results, 2) / "artifacts" / "app" / "kernel.py");
        // a whole trial folder linked out of the results folder
        fs::create_symlink(root / "outside" / "trial", trialDir(results, 3));
        // a FIFO as SKILL.md: refused, never opened (opening it would block)
        writeText(trialDir(results, 4) / "record.json", recordJson(1.0, 1.0));
        fs::create_directories(trialDir(results, 4) / "artifacts" / "app");
        QCOMPARE(::mkfifo((trialDir(results, 4) / "artifacts" / "app" / "SKILL.md").c_str(), 0600), 0);
        // a link to another trial's kernel inside the folder is fine
        writeText(trialDir(results, 5) / "record.json", recordJson(1.0, 1.0));
        fs::create_directories(trialDir(results, 5) / "artifacts" / "app");
        fs::create_symlink("../../../abc123_p01_r1_solo_cutedsl/artifacts/app/kernel.py",
                           trialDir(results, 5) / "artifacts" / "app" / "kernel.py");

        auto store = mkb::Store::open(root / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(summary.ok());
        QCOMPARE(summary->trialsImported, 2);
        QVERIFY(contains(issueAt(*summary, "_r2_solo_tirx"),
                         "artifacts/app/kernel.py: is a link to " +
                             fs::canonical(root / "outside" / "secret.txt").string() + ", outside the results folder"));
        QVERIFY(contains(issueAt(*summary, "_r3_solo_tirx"), "record.json: is a link to"));
        QVERIFY(contains(issueAt(*summary, "_r4_solo_tirx"), "artifacts/app/SKILL.md: is not a regular file"));
        auto stored = (*store)->loadTrials();
        QVERIFY(stored.ok());
        for (const mkb::TrialRecord& trial : *stored) {
            auto submissions = (*store)->submissions(trial.id);
            QVERIFY(submissions.ok());
            for (const mkb::SubmissionRecord& submission : *submissions) {
                QVERIFY(!contains(submission.kernelSource, "SECRET"));
            }
            if (trial.replicate == 5) {
                QCOMPARE(static_cast<int>(submissions->size()), 1);
                QCOMPARE(submissions->front().kernelSource, std::string("def solve(x):\n    return x\n"));
            }
        }
    }

    void eachMalformedRecordSaysWhatIsWrong() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"{\n  \"rewards\": {\"passed\": 1.0,,}\n}", "record.json: syntax error"},
            {"[1]", "record.json: is an array, expected a JSON object"},
            {R"({"timed_out": false})", "record.json: has no field 'rewards'"},
            {R"({"rewards": "all passed"})", "record.json: field 'rewards' is a string, expected an object"},
            {R"({"rewards": {"passed": "yes"}})", "record.json: field 'rewards.passed' is a string, expected a number"},
            {R"({"rewards": {}, "stamps": [1]})", "record.json: field 'stamps' is an array, expected an object"},
            {R"({"rewards": {}, "stamps": {"task_fingerprint": 7}})", "field 'stamps.task_fingerprint' is 7"},
        };
        for (std::size_t i = 0; i < cases.size(); ++i) {
            writeText(trialDir(results, static_cast<int>(i) + 2) / "record.json", cases[i].first);
        }
        fs::create_directories(trialDir(results, 30));
        auto store = mkb::Store::open(root / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(summary.ok());
        QCOMPARE(summary->trialsImported, 1);
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const std::string message = issueAt(*summary, "_r" + std::to_string(i + 2) + "_solo_tirx");
            QVERIFY2(contains(message, cases[i].second), (cases[i].second + " expected, got: " + message).c_str());
        }
        QVERIFY(contains(issueAt(*summary, "_r2_solo_tirx"), "line 2"));
        QVERIFY(contains(issueAt(*summary, "_r30_solo_tirx"), "record.json: is missing"));
    }

    void aModelFolderWithAMalformedStoreJsonIsSkippedSayingWhy() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        writeText(results / "kimi" / "store.json", R"({"model": "openrouter/m/kimi", "prefix": 5})");
        writeText(results / "qwen" / "store.json", R"({"model": "", "prefix": "def456"})");
        writeText(results / "deepseek" / "store.json", R"({"model": "openrouter/d/deepseek")");
        auto store = mkb::Store::open(root / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(summary.ok());
        QCOMPARE(summary->models, 1);
        QCOMPARE(summary->trialsImported, 1);
        QCOMPARE(issueAt(*summary, "kimi"),
                 std::string("store.json: field 'prefix' is 5, expected a string; model folder skipped"));
        QVERIFY(contains(issueAt(*summary, "qwen"), "needs non-empty string fields 'model' and 'prefix'"));
        QVERIFY(contains(issueAt(*summary, "deepseek"), "store.json: syntax error"));
    }

    void aNewlineInAFolderNameStaysInsideItsOneIssueLine() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        writeText(results / "glm-5" / "problems" / kProblem / "abc123_p01_r2_solo_tirx\nforged: line" / "record.json",
                  recordJson(1.0, 1.0));
        const CliRun run = runImport(results, root / "p.sqlite");
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains("abc123_p01_r2_solo_tirx\\nforged: line"), run.err.constData());
    }

    void twoProblemFoldersWithOneNumberAreBothSkipped() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = goodResultsFolder(root);
        const fs::path problems = results / "glm-5" / "problems";
        writeText(problems / "02_layernorm" / "abc123_p02_r1_solo_tirx" / "record.json", recordJson(1.0, 1.0));
        writeText(problems / "02_rmsnorm" / "abc123_p02_r1_solo_tirx" / "record.json", recordJson(0.0, 0.0));
        auto store = mkb::Store::open(root / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(summary.ok());
        QCOMPARE(summary->trialsImported, 1);
        QVERIFY(contains(issueAt(*summary, "02_layernorm"), "shares its number with 02_rmsnorm"));
        QVERIFY(contains(issueAt(*summary, "02_rmsnorm"), "shares its number with 02_layernorm"));
    }
};

QTEST_GUILESS_MAIN(TestImportHostile)
#include "tst_import_hostile.moc"
