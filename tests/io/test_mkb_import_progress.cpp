// Tests of the import's progress callback: every trial folder is counted up to the total before it is imported, and a
// cancel between trials leaves a consistent store that a later import completes.
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"
#include "support/results_folder.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>
#include <set>
#include <tuple>

namespace fs = std::filesystem;

namespace {

using mkbtest::recordJson;
using mkbtest::writeText;

/// One model's folder: per problem two solos (the cutedsl one with two submissions and its kernel) and the skill arm
/// cutedsl→tirx; problem 01 also has an archived solo_tirx.
void writeModelFolder(const fs::path& model, const std::string& name, const std::string& prefix,
                      const std::vector<std::string>& problems) {
    writeText(model / "store.json", R"({"model": ")" + name + R"(", "prefix": ")" + prefix + R"("})");
    writeText(model / "invocations.jsonl", "{\"started_at\": \"2026-01-01T00:00:00\", \"argv\": \"mkbench run\"}\n");
    std::string cells;
    for (const std::string& stem : problems) {
        cells += (cells.empty() ? "" : ", ") + std::string(R"({"cell": {"problem": ")") + stem +
                 R"(", "category": "attention"}})";
        const std::string number = stem.substr(0, 2);
        const fs::path problem = model / "problems" / stem;
        const fs::path source = problem / (prefix + "_p" + number + "_r1_solo_cutedsl");
        writeText(source / "record.json", recordJson(1.0, 2.5));
        writeText(source / "submissions.jsonl",
                  "{\"id\": \"a\", \"counted\": true, \"rewards\": {\"imported\": 1.0, \"correct\": 0.0, \"passed\": "
                  "0.0, \"speedup_vs_eager\": 0.0}, \"eval_sec\": 3.0}\n"
                  "{\"id\": \"b\", \"counted\": true, \"rewards\": {\"imported\": 1.0, \"correct\": 1.0, \"passed\": "
                  "1.0, \"speedup_vs_eager\": 2.5}, \"eval_sec\": 3.0}\n");
        writeText(source / "artifacts" / "app" / "kernel.py", "def solve(x):\n    return x\n");
        writeText(source / "artifacts" / "app" / "SKILL.md", "# Skill of " + stem + "\nTile by 128.\n");
        writeText(problem / (prefix + "_p" + number + "_r1_solo_tirx") / "record.json", recordJson(0.0, 0.0));
        writeText(problem / (prefix + "_p" + number + "_r1_cutedsl2tirx_skill") / "record.json", recordJson(1.0, 1.2));
    }
    writeText(model / "results.json", R"({"cells": [)" + cells + "]}");
    writeText(model / "archive" / ("2026-01-01__10-00-00__" + prefix + "_p01_r1_solo_tirx") / "record.json",
              recordJson(0.0, 0.5)); // content of its own: an archived copy equal to the live trial counts as it
}

/// results/ with two models: 2 problems × 3 trials + 1 archived, and 1 problem × 3 trials + 1 archived: 11 folders.
fs::path makeResultsFolder(const fs::path& root) {
    writeModelFolder(root / "results" / "glm-5", "openrouter/z/glm-5", "abc123", {"01_mha_prefill", "02_layernorm"});
    writeModelFolder(root / "results" / "kimi", "openrouter/m/kimi", "def456", {"01_mha_prefill"});
    return root / "results";
}
constexpr int kTrialFolders = 11;

struct ProgressCall {
    std::size_t done = 0;
    std::size_t total = 0;
    std::string where;
};

/// What a store holds, comparable across stores: per trial (model, coordinate, archived) its origin, submission
/// count and the coordinate of its source trial.
using StoreContent = std::map<std::tuple<std::string, std::string, bool>, std::tuple<std::string, int, std::string>>;

StoreContent contentOf(mkb::Store& store) {
    mkb::TrialFilter all;
    all.includeArchived = true;
    auto trials = store.loadTrials(all);
    if (!trials) {
        qFatal("the store's trials could not be loaded");
    }
    std::map<std::int64_t, std::string> coordinateById;
    for (const mkb::TrialRecord& trial : *trials) {
        coordinateById[trial.id] = trial.coordinate;
    }
    StoreContent content;
    for (const mkb::TrialRecord& trial : *trials) {
        auto submissions = store.submissions(trial.id);
        const std::string source = trial.sourceTrialId ? coordinateById[*trial.sourceTrialId] : std::string();
        content[{trial.model, trial.coordinate, trial.archived}] = {
            trial.origin, submissions ? static_cast<int>(submissions->size()) : -1, source};
    }
    return content;
}

std::unique_ptr<mkb::Store> openStore(const QTemporaryDir& dir, const std::string& name) {
    auto store = mkb::Store::open(fs::path(dir.path().toStdString()) / name);
    if (!store) {
        qFatal("%s", store.error().message.c_str());
    }
    return std::move(store).value();
}

} // namespace

class TestMkbImportProgress : public QObject {
    Q_OBJECT

private slots:
    void importProgressCountsEveryTrialFolderUpToTheTotal() {
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());
        auto store = openStore(dir, "p.sqlite");
        std::vector<ProgressCall> calls;
        mkb::ImportOptions options;
        options.progress = [&](std::size_t done, std::size_t total, std::string_view where) {
            calls.push_back({done, total, std::string(where)});
            return true;
        };
        auto summary = mkb::importMetaKernelBenchResults(*store, results, options);
        QVERIFY(summary.ok());
        QVERIFY(!summary->cancelled);
        QCOMPARE(summary->trialsTotal, kTrialFolders);
        QCOMPARE(summary->trialsImported, kTrialFolders);
        QCOMPARE(summary->models, 2);
        // One call before each trial folder (done 0..10) and a last one at the total, with nothing named.
        QCOMPARE(static_cast<int>(calls.size()), kTrialFolders + 1);
        for (std::size_t index = 0; index < calls.size(); ++index) {
            QCOMPARE(calls[index].done, index);
            QCOMPARE(calls[index].total, std::size_t(kTrialFolders));
        }
        QCOMPARE(calls.back().where, std::string());
        // Each trial is named by its model, problem folder and coordinate, and each is named once.
        std::set<std::string> named;
        for (std::size_t index = 0; index + 1 < calls.size(); ++index) {
            const std::string& where = calls[index].where;
            QVERIFY2(where.find("openrouter/") == 0, where.c_str());
            QVERIFY2(where.find("01_mha_prefill") != std::string::npos ||
                         where.find("02_layernorm") != std::string::npos,
                     where.c_str());
            QVERIFY2(where.find("_r1_") != std::string::npos, where.c_str());
            QVERIFY2(named.insert(where).second, where.c_str());
        }
        QVERIFY(calls[0].where.find("archived") != std::string::npos); // history first, as it was written

        // Again, nothing new: the progress still counts every folder (each one is checked) to the total.
        calls.clear();
        auto again = mkb::importMetaKernelBenchResults(*store, results, options);
        QVERIFY(again.ok());
        QCOMPARE(again->trialsUnchanged, kTrialFolders);
        QCOMPARE(static_cast<int>(calls.size()), kTrialFolders + 1);
        QCOMPARE(calls.back().done, std::size_t(kTrialFolders));
    }

    void cancelStopsBetweenTrialsAndALaterImportCompletesIt() {
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());

        // The same folder imported in one go, for comparison.
        auto whole = openStore(dir, "whole.sqlite");
        QVERIFY(mkb::importMetaKernelBenchResults(*whole, results).ok());
        const StoreContent expected = contentOf(*whole);
        QCOMPARE(static_cast<int>(expected.size()), kTrialFolders);

        for (std::size_t stopAt : {std::size_t(0), std::size_t(1), std::size_t(5), std::size_t(kTrialFolders - 1)}) {
            const std::string context = "cancelled at " + std::to_string(stopAt);
            auto store = openStore(dir, "cancelled" + std::to_string(stopAt) + ".sqlite");
            mkb::ImportOptions options;
            std::size_t lastDone = 0;
            options.progress = [&](std::size_t done, std::size_t, std::string_view) {
                lastDone = done;
                return done < stopAt;
            };
            auto cancelled = mkb::importMetaKernelBenchResults(*store, results, options);
            QVERIFY2(cancelled.ok(), context.c_str());
            QVERIFY2(cancelled->cancelled, context.c_str());
            QCOMPARE(lastDone, stopAt);
            QCOMPARE(cancelled->trialsImported, static_cast<int>(stopAt));
            QCOMPARE(cancelled->trialsTotal, kTrialFolders);

            // Consistent: exactly the trials handled, each whole, as the import in one go wrote them.
            const StoreContent partial = contentOf(*store);
            QCOMPARE(partial.size(), stopAt);
            for (const auto& [key, value] : partial) {
                auto it = expected.find(key);
                QVERIFY2(it != expected.end(), (context + ": " + std::get<1>(key)).c_str());
                QCOMPARE(std::get<0>(value), std::get<0>(it->second)); // the same origin (content)
                QCOMPARE(std::get<1>(value), std::get<1>(it->second)); // every submission
            }

            // Importing again completes it: the rest is imported, what was there is unchanged, and the store holds
            // what the import in one go wrote, skill arms linked to their source solos.
            auto completed = mkb::importMetaKernelBenchResults(*store, results);
            QVERIFY2(completed.ok(), context.c_str());
            QVERIFY(!completed->cancelled);
            QCOMPARE(completed->trialsUnchanged, static_cast<int>(stopAt));
            QCOMPARE(completed->trialsImported, kTrialFolders - static_cast<int>(stopAt));
            QCOMPARE(completed->models, 2);
            QVERIFY2(contentOf(*store) == expected, context.c_str());
            auto invocations = store->invocations();
            QVERIFY(invocations.ok());
            QCOMPARE(static_cast<int>(invocations->size()), 2);
        }
    }

    void withoutACallbackTheImportIsUnchanged() {
        QTemporaryDir dir;
        const fs::path results = makeResultsFolder(dir.path().toStdString());
        auto store = openStore(dir, "p.sqlite");
        auto summary = mkb::importMetaKernelBenchResults(*store, results);
        QVERIFY(summary.ok());
        QVERIFY(!summary->cancelled);
        QCOMPARE(summary->trialsImported, kTrialFolders);
        QCOMPARE(summary->trialsTotal, kTrialFolders);
        QCOMPARE(summary->invocationsImported, 2);
        QVERIFY2(summary->issues.empty(), summary->issues.empty() ? "" : summary->issues.front().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestMkbImportProgress)
#include "test_mkb_import_progress.moc"
