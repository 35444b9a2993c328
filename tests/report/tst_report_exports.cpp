// Exports: MetaKernelBench results.json shape and numbers (fixture store and an import round trip), and repair pairs.
#include "core/io/mkb_results_export.h"
#include "core/io/mkb_results_import.h"
#include "core/io/repair_pairs.h"
#include "report_fixtures.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

/// The keys of a JSON object in the order they were written.
std::vector<std::string> keysOf(const ordered& object) {
    std::vector<std::string> keys;
    for (const auto& item : object.items()) {
        keys.push_back(item.key());
    }
    return keys;
}

using Keys = std::vector<std::string>;

void writeText(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::string mkbRecord(bool passed, double speedup, const std::string& skipped = "null") {
    const std::string flag = passed ? "1.0" : "0.0";
    return R"({"rewards": {"imported": 1.0, "correct": )" + flag + R"(, "speedup_vs_eager": )" +
           std::to_string(speedup) + R"(, "passed": )" + flag + R"(}, "timed_out": false, "error": null, "skipped": )" +
           skipped +
           R"(, "usage": {"n_input_tokens": 100, "n_cache_tokens": 10, "n_output_tokens": 50, "cost_usd": 0.25,
              "agent_sec": 30.0}, "stamps": {"task_fingerprint": "fp", "skill_sha256": null}})";
}

/// One model, problem 01_mha_prefill (attention), replicate 1:
///   solo_cutedsl passes 2.5, solo_tirx fails, cutedsl2tirx_skill passes 1.2, tirx2cutedsl_skill skipped.
/// cutedsl2tirx: base fail, skill 1.2; tirx2cutedsl: base 2.5, skill skipped -> 2.5.
/// base R@t = 1/2, 1/2, 1/2, 1/2, 0 -> S = 40; skill R@t = 1, 1, 1, 1/2, 0 -> S = 70; lift S = 30.
/// source coverage 1/2 (cutedsl passed, tirx failed); skill coverage 1/2.
fs::path writeMetaKernelBenchFolder(const fs::path& root) {
    const fs::path model = root / "results" / "glm";
    writeText(model / "store.json", R"({"model": "openrouter/z/glm", "prefix": "px", "created_at": "2026-01-01"})");
    writeText(model / "results.json",
              R"({"cells": [{"cell": {"problem": "01_mha_prefill", "category": "attention"}}]})");
    const fs::path problem = model / "problems" / "01_mha_prefill";
    writeText(problem / "px_p01_r1_solo_cutedsl" / "record.json", mkbRecord(true, 2.5));
    writeText(problem / "px_p01_r1_solo_cutedsl" / "artifacts" / "app" / "SKILL.md", "# Skill\n");
    writeText(problem / "px_p01_r1_solo_tirx" / "record.json", mkbRecord(false, 0.0));
    writeText(problem / "px_p01_r1_cutedsl2tirx_skill" / "record.json", mkbRecord(true, 1.2));
    writeText(problem / "px_p01_r1_tirx2cutedsl_skill" / "record.json",
              mkbRecord(false, 0.0, "\"source wrote no SKILL.md\""));
    return root / "results";
}

} // namespace

class TestReportExports : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<mkb::Store> store_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        store_ = mkbtest::openFixtureStore(fs::path(dir_.path().toStdString()) / "fixture.sqlite");
    }

    void export_resultsJsonHasMetaKernelBenchShape() {
        auto document = mkb::exportMetaKernelBenchResults(*store_, "m1");
        QVERIFY(document.ok());
        const json& results = *document;
        for (const char* key : {"legend", "model", "overall", "cells"}) {
            QVERIFY2(results.contains(key), key);
        }
        for (const char* key : {"arms", "records", "rates", "source_coverage", "skill_coverage", "usage"}) {
            QVERIFY2(results["legend"].contains(key), key);
        }
        QCOMPARE(results["model"].get<std::string>(), std::string("m1"));
        const json& overall = results["overall"];
        for (const char* key :
             {"n_cells", "n_cell_replicates", "n_resolved", "source_coverage", "skill_coverage", "base", "skill",
              "lift", "with_skill", "by_source_verdict", "usage", "by_direction", "by_category"}) {
            QVERIFY2(overall.contains(key), key);
        }
        for (const char* label : {"R@0", "R@0.5", "R@1", "R@2", "R@4", "S"}) {
            QVERIFY2(overall["base"].contains(label), label);
        }
        QCOMPARE(overall["by_direction"].size(), std::size_t(2));
        QVERIFY(overall["by_category"].contains("attention"));
        QVERIFY(overall["by_category"].contains("gemm"));
        const json& cell = results["cells"][0];
        QCOMPARE(cell["cell"]["problem"].get<std::string>(), std::string("01_attn"));
        QCOMPARE(cell["cell"]["category"].get<std::string>(), std::string("attention"));
        QCOMPARE(cell["cell"]["direction"].get<std::string>(), std::string("cuda2triton"));
        QCOMPARE(cell["cell"]["source_task"].get<std::string>(), std::string("01_attn_cuda"));
        QCOMPARE(cell["cell"]["target_task"].get<std::string>(), std::string("01_attn_triton"));
        const json& replicate = cell["replicates"][0];
        QCOMPARE(replicate["resolved"].get<bool>(), true);
        QCOMPARE(replicate["n_replicate"].get<int>(), 1);
        for (const char* key : {"imported", "correct", "speedup_vs_eager", "passed"}) {
            QVERIFY2(replicate["skill"]["rewards"].contains(key), key);
        }
        QCOMPARE(replicate["skill"]["rewards"]["passed"].get<double>(), 0.0);
        QCOMPARE(replicate["base"]["rewards"]["speedup_vs_eager"].get<double>(), 2.0);
        QVERIFY(replicate["skill"]["skipped"].is_null());
        QVERIFY(replicate["source"]["usage"]["cost_usd"].is_null()); // solo_cuda of problem 1 has no cost
    }

    // export: results.json keys come in the order docs/report.md documents, not alphabetically
    void export_resultsJsonKeysFollowTheDocumentedOrder() {
        auto document = mkb::exportMetaKernelBenchResults(*store_, "m1");
        QVERIFY(document.ok());
        // Written and read back as text, as MetaKernelBench's tooling sees it.
        const ordered results = ordered::parse(document->dump(2));
        QCOMPARE(keysOf(results), (Keys{"legend", "model", "timing", "overall", "cells"}));
        QCOMPARE(keysOf(results["legend"]),
                 (Keys{"arms", "records", "rates", "source_coverage", "skill_coverage", "usage", "timing"}));
        QCOMPARE(keysOf(results["timing"]), (Keys{"rule", "n_resolved", "n_paired_cells", "n_fell_back", "ties"}));
        const Keys group{"n_cell_replicates",
                         "n_resolved",
                         "source_coverage",
                         "skill_coverage",
                         "base",
                         "skill",
                         "lift",
                         "with_skill",
                         "by_source_verdict",
                         "usage"};
        Keys overall{"n_cells"};
        overall.insert(overall.end(), group.begin(), group.end());
        overall.insert(overall.end(), {"by_direction", "by_category"});
        QCOMPARE(keysOf(results["overall"]), overall);
        const Keys ladder{"R@0", "R@0.5", "R@1", "R@2", "R@4", "S"};
        QCOMPARE(keysOf(results["overall"]["base"]), ladder);
        QCOMPARE(keysOf(results["overall"]["lift"]), ladder);
        QCOMPARE(keysOf(results["overall"]["with_skill"]), (Keys{"base", "skill", "lift"}));
        QCOMPARE(keysOf(results["overall"]["by_source_verdict"]), (Keys{"passed", "failed"}));
        QCOMPARE(keysOf(results["overall"]["usage"]["solo_cuda"]),
                 (Keys{"n_trials", "cost_usd", "n_input_tokens", "n_cache_tokens", "n_output_tokens", "agent_sec"}));
        QCOMPARE(keysOf(results["overall"]["by_direction"]["triton2cuda"]), group);
        QCOMPARE(keysOf(results["overall"]["by_category"]["gemm"]), group);
        const ordered& cell = results["cells"][0];
        Keys cellKeys{"cell"};
        cellKeys.insert(cellKeys.end(), group.begin(), group.end());
        cellKeys.push_back("replicates");
        QCOMPARE(keysOf(cell), cellKeys);
        QCOMPARE(keysOf(cell["cell"]), (Keys{"problem", "category", "direction", "source_task", "target_task"}));
        const ordered& replicate = cell["replicates"][0];
        QCOMPARE(keysOf(replicate), (Keys{"resolved", "n_replicate", "source", "base", "skill"}));
        QCOMPARE(keysOf(replicate["base"]), (Keys{"rewards", "timed_out", "error", "skipped", "usage"}));
        QCOMPARE(keysOf(replicate["base"]["rewards"]), (Keys{"imported", "correct", "speedup_vs_eager", "passed"}));
        QCOMPARE(keysOf(replicate["base"]["usage"]),
                 (Keys{"n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd", "agent_sec"}));
    }

    // export: a repair pair's keys come in the documented order
    void repairPairs_keysFollowTheDocumentedOrder() {
        auto pairs = mkb::repairPairsFromStore(*store_);
        QVERIFY(pairs.ok() && !pairs->empty());
        const ordered line = ordered::parse(mkb::repairPairJsonLine(pairs->front()));
        QCOMPARE(keysOf(line),
                 (Keys{"model", "problem", "family", "dsl", "arm", "coordinate", "before_index", "after_index",
                       "before_source", "after_source", "failure_report", "fix_changed_line_share", "fix_kind"}));
        QCOMPARE(keysOf(line["failure_report"]), (Keys{"stage", "error", "mismatch", "verdict"}));
    }

    void export_resultsJsonNumbersMatchTheHandComputedOnes() {
        const json results = *mkb::exportMetaKernelBenchResults(*store_, "m1");
        const json& overall = results["overall"];
        QCOMPARE(overall["n_cells"].get<int>(), 4);
        QCOMPARE(overall["n_cell_replicates"].get<int>(), 4);
        QCOMPARE(overall["n_resolved"].get<int>(), 4);
        QCOMPARE(overall["source_coverage"].get<double>(), 0.75);
        QCOMPARE(overall["skill_coverage"].get<double>(), 0.75);
        QCOMPARE(overall["base"]["R@0"].get<double>(), 0.75);
        QCOMPARE(overall["base"]["S"].get<double>(), 45.0);
        QCOMPARE(overall["skill"]["S"].get<double>(), 50.0);
        QCOMPARE(overall["lift"]["S"].get<double>(), 5.0);
        QCOMPARE(overall["lift"]["R@4"].get<double>(), 0.25);
        // with_skill: P1 both directions and P2 cuda2triton; bases 2.0, 1.0, fail.
        QVERIFY(std::fabs(overall["with_skill"]["base"]["R@0"].get<double>() - 2.0 / 3.0) < 1e-12);
        // by_source_verdict failed: P2 triton2cuda alone, base 0.5, skill skipped -> 0.5.
        QCOMPARE(overall["by_source_verdict"]["failed"]["base"]["R@0.5"].get<double>(), 1.0);
        QCOMPARE(overall["by_source_verdict"]["failed"]["lift"]["S"].get<double>(), 0.0);
        QVERIFY(overall["usage"]["solo_cuda"]["cost_usd"].is_null());
        QCOMPARE(overall["usage"]["solo_cuda"]["n_trials"].get<int>(), 2);
        QCOMPARE(overall["usage"]["cuda2triton_skill"]["n_trials"].get<int>(), 1);
        QCOMPARE(overall["usage"]["cuda2triton_skill"]["n_input_tokens"].get<int>(), 100);
        QCOMPARE(overall["usage"]["solo_triton"]["agent_sec"].get<double>(), 60.0);
        const json& gemm = overall["by_category"]["gemm"];
        QCOMPARE(gemm["base"]["S"].get<double>(), 20.0);
        // The skipped skill record says why it was skipped.
        const json& skipped = results["cells"][3]["replicates"][0]["skill"];
        QCOMPARE(results["cells"][3]["cell"]["direction"].get<std::string>(), std::string("triton2cuda"));
        QCOMPARE(skipped["skipped"].get<std::string>(), std::string("source wrote no SKILL.md"));
        QVERIFY(skipped["error"].is_null());
    }

    void export_contrastWithoutResolvedReplicatesIsNull() {
        const json results = *mkb::exportMetaKernelBenchResults(*store_, "m2");
        QCOMPARE(results["overall"]["n_resolved"].get<int>(), 2);
        QVERIFY(results["overall"]["with_skill"]["base"].is_object());
        QVERIFY(results["overall"]["by_source_verdict"]["passed"]["base"].is_null());
        QVERIFY(results["overall"]["by_source_verdict"]["passed"]["skill"].is_null());
        QVERIFY(results["overall"]["by_source_verdict"]["passed"]["lift"].is_null());
    }

    void export_unknownModelIsAOneLineError() {
        auto missing = mkb::exportMetaKernelBenchResults(*store_, "nobody");
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("'nobody'") != std::string::npos);
        QVERIFY(missing.error().message.find('\n') == std::string::npos);
    }

    void export_roundTripOfAnImportedMetaKernelBenchFolder() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        auto store = mkb::Store::open(root / "roundtrip.sqlite");
        QVERIFY(store.ok());
        auto imported = mkb::importMetaKernelBenchResults(**store, writeMetaKernelBenchFolder(root));
        QVERIFY(imported.ok());
        for (const mkb::ImportIssue& issue : imported->issues) {
            qInfo("import issue: %s: %s", issue.path.c_str(), issue.message.c_str());
        }
        QCOMPARE(imported->trialsImported, 4);
        auto document = mkb::exportMetaKernelBenchResults(**store, "openrouter/z/glm");
        QVERIFY(document.ok());
        const json& overall = (*document)["overall"];
        QCOMPARE(overall["n_cells"].get<int>(), 2);
        QCOMPARE(overall["n_resolved"].get<int>(), 2);
        QCOMPARE(overall["source_coverage"].get<double>(), 0.5);
        QCOMPARE(overall["skill_coverage"].get<double>(), 0.5);
        QCOMPARE(overall["base"]["R@2"].get<double>(), 0.5);
        QCOMPARE(overall["base"]["R@4"].get<double>(), 0.0);
        QCOMPARE(overall["base"]["S"].get<double>(), 40.0);
        QCOMPARE(overall["skill"]["R@1"].get<double>(), 1.0);
        QCOMPARE(overall["skill"]["S"].get<double>(), 70.0);
        QCOMPARE(overall["lift"]["S"].get<double>(), 30.0);
        QCOMPARE(overall["usage"]["solo_cutedsl"]["cost_usd"].get<double>(), 0.25);
        QVERIFY(overall["by_category"].contains("attention"));
        const json& cell = (*document)["cells"][0];
        QCOMPARE(cell["cell"]["problem"].get<std::string>(), std::string("01_mha_prefill"));
        QCOMPARE(cell["cell"]["source_task"].get<std::string>(), std::string("01_mha_prefill_cutedsl"));
        QCOMPARE(cell["replicates"][0]["skill"]["rewards"]["speedup_vs_eager"].get<double>(), 1.2);
    }

    void repairPairs_everyFailingToCorrectStepAndNothingElse() {
        auto pairs = mkb::repairPairsFromStore(*store_);
        QVERIFY(pairs.ok());
        QCOMPARE(pairs->size(), std::size_t(2)); // P2's correct -> failing -> failing holds no repair
        const mkb::RepairPair& structural = (*pairs)[0];
        QCOMPARE(structural.arm, std::string("solo_triton"));
        QCOMPARE(structural.problem, std::string("01_attn"));
        QCOMPARE(structural.family, std::string("attention"));
        QCOMPARE(structural.dsl, std::string("triton"));
        QCOMPARE(structural.coordinate, std::string("p01_r1_solo_triton"));
        QCOMPARE(structural.beforeIndex, 1);
        QCOMPARE(structural.afterIndex, 2);
        QCOMPARE(structural.beforeSource, std::string("x\ny\n"));
        QCOMPARE(structural.afterSource, std::string("u\nv\n"));
        QCOMPARE(structural.changedLineShare, 1.0);
        QCOMPARE(structural.fixKind, std::string("structural"));
        QCOMPARE(structural.failure.error, std::string("output mismatch at submission 1"));
        const mkb::RepairPair& local = (*pairs)[1];
        QCOMPARE(local.arm, std::string("triton2cuda_skill"));
        QCOMPARE(local.changedLineShare, 0.25);
        QCOMPARE(local.fixKind, std::string("local"));

        const json line = json::parse(mkb::repairPairJsonLine(local));
        for (const char* key :
             {"model", "problem", "family", "dsl", "arm", "coordinate", "before_index", "after_index", "before_source",
              "after_source", "failure_report", "fix_changed_line_share", "fix_kind"}) {
            QVERIFY2(line.contains(key), key);
        }
        QCOMPARE(line["failure_report"]["stage"].get<std::string>(), std::string("correctness"));
        QCOMPARE(line["failure_report"]["mismatch"].get<std::string>(), std::string("max abs diff 0.5 at [0, 3]"));
        QCOMPARE(line["failure_report"]["verdict"]["index"].get<int>(), 1); // the full verdict JSON, parsed
        QVERIFY(mkb::repairPairJsonLine(local).find('\n') == std::string::npos);
    }

    void repairPairs_modelFilterKeepsOnlyThatModel() {
        auto none = mkb::repairPairsFromStore(*store_, std::string("m2"));
        QVERIFY(none.ok());
        QCOMPARE(none->size(), std::size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestReportExports)
#include "tst_report_exports.moc"
