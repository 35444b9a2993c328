// Tests of `mkb import`: MetaKernelBench results folders filed in the store, per-trial issues, idempotency.
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"
#include "support/testpaths.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

namespace fs = std::filesystem;

namespace {

void writeText(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::string recordJson(double passed, double speedup, const std::string& extra = R"("error": null, "skipped": null)") {
    return R"({"rewards": {"imported": 1.0, "correct": )" + std::to_string(passed) + R"(, "speedup_vs_eager": )" +
           std::to_string(speedup) + R"(, "passed": )" + std::to_string(passed) + R"(}, "timed_out": false, )" + extra +
           R"(, "usage": {"n_input_tokens": 100, "n_cache_tokens": 10, "n_output_tokens": 50, "cost_usd": 0.5, "agent_sec": 60.0},
              "stamps": {"task_fingerprint": "fp1", "skill_sha256": null}})";
}

/// results/<model>/ with one problem, two solos, a skill arm, a skipped skill arm, a malformed trial and history.
fs::path makeResultsFolder(const fs::path& root) {
    const fs::path model = root / "results" / "glm-5";
    writeText(model / "store.json",
              R"({"model": "openrouter/z/glm-5", "prefix": "abc123", "created_at": "2026-01-01"})");
    writeText(model / "invocations.jsonl", "{\"started_at\": \"2026-01-01T00:00:00\", \"argv\": \"mkbench run\"}\n");
    writeText(model / "results.json",
              R"({"cells": [{"cell": {"problem": "01_mha_prefill", "category": "attention"}}]})");
    const fs::path problem = model / "problems" / "01_mha_prefill";
    const fs::path source = problem / "abc123_p01_r1_solo_cutedsl";
    writeText(source / "record.json", recordJson(1.0, 2.5));
    writeText(source / "verdict.json",
              R"({"rewards": {}, "details": {}, "report": "ok", "stderr": "", "eval_sec": 12.5})");
    writeText(source / "submissions.jsonl",
              "{\"id\": \"a\", \"counted\": true, \"rewards\": {\"imported\": 1.0, \"correct\": 0.0, \"passed\": 0.0, "
              "\"speedup_vs_eager\": 0.0}, \"note\": null, \"eval_sec\": 3.0}\n"
              "{\"id\": \"b\", \"counted\": false, \"rewards\": null, \"note\": \"limit reached\"}\n");
    writeText(source / "artifacts" / "app" / "kernel.py", "def solve(x):\n    return x\n");
    writeText(source / "artifacts" / "app" / "SKILL.md", "# Skill\nTile by 128.\n");
    writeText(problem / "abc123_p01_r1_solo_tirx" / "record.json", recordJson(0.0, 0.0));
    writeText(problem / "abc123_p01_r1_cutedsl2tirx_skill" / "record.json", recordJson(1.0, 1.2));
    writeText(problem / "abc123_p01_r1_tirx2cutedsl_skill" / "record.json",
              recordJson(0.0, 0.0, R"("error": null, "skipped": "source wrote no SKILL.md")"));
    writeText(problem / "abc123_p01_r2_solo_tirx" / "record.json", "{ not json");
    writeText(problem / "skills" / "r1_cutedsl2tirx.md", "# Transferred skill\n");
    writeText(model / "archive" / "2026-01-01__10-00-00__abc123_p01_r1_solo_tirx" / "record.json",
              recordJson(0.0, 0.0, R"("error": "RateLimitError: 429", "skipped": null)"));
    return root / "results";
}

} // namespace

class TestMkbImport : public QObject {
    Q_OBJECT

private slots:
    void importFilesEveryTrialAndReportsTheMalformedOne() {
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());
        auto store = mkb::Store::open(fs::path(dir.path().toStdString()) / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(summary.ok());
        for (const mkb::ImportIssue& issue : summary->issues) {
            qInfo("issue: %s: %s", issue.path.c_str(), issue.message.c_str());
        }
        QCOMPARE(summary->models, 1);
        QCOMPARE(summary->trialsImported, 5); // 4 live + 1 archived
        QCOMPARE(summary->invocationsImported, 1);
        QCOMPARE(static_cast<int>(summary->issues.size()), 1);
        QVERIFY(summary->issues[0].path.string().find("abc123_p01_r2_solo_tirx") != std::string::npos);
        QVERIFY(summary->issues[0].message.find("record.json") != std::string::npos);

        mkb::TrialFilter all;
        all.includeArchived = true;
        auto trials = (*store)->loadTrials(all);
        QVERIFY(trials.ok());
        QCOMPARE(static_cast<int>(trials->size()), 5);
        int archived = 0;
        for (const mkb::TrialRecord& trial : *trials) {
            QCOMPARE(trial.model, std::string("openrouter/z/glm-5"));
            QCOMPARE(trial.family, std::string("attention"));
            QCOMPARE(trial.problemNumber, 1);
            QCOMPARE(trial.problemSlug, std::string("mha_prefill"));
            archived += trial.archived ? 1 : 0;
            if (trial.arm == "solo_cutedsl") {
                QCOMPARE(trial.status, mkb::TrialStatus::Finished);
                QVERIFY(trial.finalVerdict.has_value());
                QVERIFY(trial.finalVerdict->passed);
                QCOMPARE(trial.finalVerdict->speedupVsEager, 2.5);
                QCOMPARE(trial.finalVerdict->evalSeconds, 12.5);
                QCOMPARE(trial.skillText.value_or(""), std::string("# Skill\nTile by 128.\n"));
                QCOMPARE(trial.usage.inputTokens.value_or(0), std::int64_t(100));
                QCOMPARE(trial.usage.costUsd.value_or(0), 0.5);
                QCOMPARE(trial.problemFingerprint, std::string("fp1"));
                auto submissions = (*store)->submissions(trial.id);
                QVERIFY(submissions.ok());
                QCOMPARE(static_cast<int>(submissions->size()), 3); // two feedback submissions + the final kernel
            } else if (trial.arm == "tirx2cutedsl_skill") {
                QCOMPARE(trial.status, mkb::TrialStatus::Skipped);
                QVERIFY(trial.skipped);
            } else if (trial.arm == "cutedsl2tirx_skill") {
                QVERIFY(trial.sourceTrialId.has_value());
                QCOMPARE(trial.dsl, std::string("tirx"));
            } else if (trial.archived) {
                QCOMPARE(trial.status, mkb::TrialStatus::InfrastructureError);
                QCOMPARE(trial.error, std::string("RateLimitError: 429"));
            }
        }
        QCOMPARE(archived, 1);
    }

    void importTwiceChangesNothing() {
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());
        auto store = mkb::Store::open(fs::path(dir.path().toStdString()) / "p.sqlite");
        QVERIFY(store.ok());
        QVERIFY(mkb::importMetaKernelBenchResults(**store, results).ok());
        auto second = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(second.ok());
        QCOMPARE(second->trialsImported, 0);
        QCOMPARE(second->trialsReplaced, 0);
        QCOMPARE(second->trialsUnchanged, 5);
        QCOMPARE(second->invocationsImported, 0);
        mkb::TrialFilter all;
        all.includeArchived = true;
        QCOMPARE(static_cast<int>((*store)->loadTrials(all)->size()), 5);
    }

    void aChangedTrialReplacesTheLiveOneWhichIsArchived() {
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());
        auto store = mkb::Store::open(fs::path(dir.path().toStdString()) / "p.sqlite");
        QVERIFY(store.ok());
        QVERIFY(mkb::importMetaKernelBenchResults(**store, results).ok());
        writeText(results / "glm-5" / "problems" / "01_mha_prefill" / "abc123_p01_r1_solo_tirx" / "record.json",
                  recordJson(1.0, 3.0));
        auto again = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(again.ok());
        QCOMPARE(again->trialsReplaced, 1);
        auto live = (*store)->loadTrials();
        QVERIFY(live.ok());
        QCOMPARE(static_cast<int>(live->size()), 4);
        for (const mkb::TrialRecord& trial : *live) {
            if (trial.arm == "solo_tirx") {
                QCOMPARE(trial.finalVerdict->speedupVsEager, 3.0);
            }
        }
        mkb::TrialFilter all;
        all.includeArchived = true;
        QCOMPARE(static_cast<int>((*store)->loadTrials(all)->size()), 6);
        auto third = mkb::importMetaKernelBenchResults(**store, results); // the replaced trial is history now
        QVERIFY(third.ok());
        QCOMPARE(third->trialsImported + third->trialsReplaced, 0);
        QCOMPARE(static_cast<int>((*store)->loadTrials(all)->size()), 6);
    }

    void aLiveTrialIdenticalToItsArchivedCopyIsStillImportedLive() {
        // A redo that came out byte-identical (e.g. a skipped arm skipped again) must not be taken for the archive.
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());
        const fs::path model = results / "glm-5";
        writeText(model / "archive" / "2026-01-01__10-00-00__abc123_p01_r1_solo_tirx" / "record.json",
                  recordJson(0.0, 0.0)); // the same bytes as the live solo_tirx record
        auto store = mkb::Store::open(fs::path(dir.path().toStdString()) / "p.sqlite");
        QVERIFY(store.ok());
        auto first = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(first.ok());
        QCOMPARE(first->trialsImported, 5);
        auto live = (*store)->loadTrials();
        QVERIFY(live.ok());
        QCOMPARE(static_cast<int>(live->size()), 4);
        bool liveTirx = false;
        for (const mkb::TrialRecord& trial : *live) {
            liveTirx = liveTirx || trial.arm == "solo_tirx";
        }
        QVERIFY(liveTirx);
        auto again = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(again.ok());
        QCOMPARE(again->trialsUnchanged, 5);
        QCOMPARE(again->trialsImported + again->trialsReplaced, 0);
    }

    void aMissingFolderIsOneClearError() {
        QTemporaryDir dir;
        auto store = mkb::Store::open(fs::path(dir.path().toStdString()) / "p.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importMetaKernelBenchResults(**store, "/nonexistent/results");
        QVERIFY(!summary.ok());
        QVERIFY(summary.error().message.find("/nonexistent/results") != std::string::npos);
        auto empty = mkb::importMetaKernelBenchResults(**store, dir.path().toStdString());
        QVERIFY(!empty.ok());
        QVERIFY(empty.error().message.find("store.json") != std::string::npos);
    }

    void cliImportReportsIssuesAndExitCodes() {
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());
        const QString storePath = dir.filePath("cli.sqlite");
        QProcess process;
        process.start(QString::fromStdString(mkbtest::cliPath()),
                      {"import", QString::fromStdString(results.string()), "--store", storePath, "--json"});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 1); // one malformed trial: imported the rest, exit 1
        QVERIFY(process.readAllStandardOutput().contains("\"trials_imported\":5"));
        QVERIFY(process.readAllStandardError().contains("abc123_p01_r2_solo_tirx"));

        process.start(QString::fromStdString(mkbtest::cliPath()), {"import", "/nonexistent", "--store", storePath});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 3);
        const QByteArray error = process.readAllStandardError();
        QCOMPARE(error.count('\n'), 1);
        QVERIFY(error.startsWith("mkb: "));
    }
};

QTEST_GUILESS_MAIN(TestMkbImport)
#include "test_mkb_import.moc"
