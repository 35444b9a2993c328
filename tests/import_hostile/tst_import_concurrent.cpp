// Tests that imports serialise on the store: concurrent `mkb import` processes over one folder at once file every trial
// once with every skill arm linked to its source, and a re-import links skill arms an earlier race left without a
// source.
#include "core/io/mkb_results_import.h"
#include "core/store/store.h"
#include "support/results_folder.h"
#include "support/testpaths.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sqlite3.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace fs = std::filesystem;

namespace {

using mkbtest::recordJson;
using mkbtest::writeText;

constexpr int kProblems = 40;
constexpr int kReplicates = 2;
// Per problem and replicate two solos and two skill arms, plus one archived solo per problem.
constexpr int kLiveTrials = kProblems * kReplicates * 4;
constexpr int kSkillArms = kProblems * kReplicates * 2;
constexpr int kArchivedTrials = kProblems;

/// results/glm-5/ with kProblems problems, each with kReplicates replicates of both solos and both skill arms.
fs::path generatedResultsFolder(const fs::path& root) {
    const fs::path model = root / "results" / "glm-5";
    writeText(model / "store.json", R"({"model": "openrouter/z/glm-5", "prefix": "abc123"})");
    writeText(model / "invocations.jsonl", "{\"started_at\": \"2026-01-01T00:00:00\", \"argv\": \"mkbench run\"}\n");
    std::string cells;
    for (int number = 1; number <= kProblems; ++number) {
        char digits[8];
        std::snprintf(digits, sizeof digits, "%02d", number);
        const std::string stem = std::string(digits) + "_problem" + digits;
        cells += (cells.empty() ? "" : ", ") + std::string(R"({"cell": {"problem": ")") + stem +
                 R"(", "category": "attention"}})";
        const fs::path problem = model / "problems" / stem;
        for (int replicate = 1; replicate <= kReplicates; ++replicate) {
            const std::string prefix = "abc123_p" + std::string(digits) + "_r" + std::to_string(replicate) + "_";
            writeText(problem / (prefix + "solo_cutedsl") / "record.json", recordJson(1.0, 2.0 + number));
            writeText(problem / (prefix + "solo_cutedsl") / "artifacts" / "app" / "SKILL.md", "# cutedsl skill\n");
            writeText(problem / (prefix + "solo_tirx") / "record.json", recordJson(0.0, 0.0));
            writeText(problem / (prefix + "solo_tirx") / "artifacts" / "app" / "SKILL.md", "# tirx skill\n");
            writeText(problem / (prefix + "cutedsl2tirx_skill") / "record.json", recordJson(1.0, 1.5));
            writeText(problem / (prefix + "tirx2cutedsl_skill") / "record.json", recordJson(1.0, 1.1));
        }
        writeText(model / "archive" / ("2026-01-01__10-00-00__abc123_p" + std::string(digits) + "_r1_solo_tirx") /
                      "record.json",
                  recordJson(0.0, 0.25));
    }
    writeText(model / "results.json", R"({"cells": [)" + cells + "]}");
    return root / "results";
}

/// Fails the test unless the store holds each trial folder once and every live skill arm links to the live solo of
/// its source DSL at the same problem and replicate.
void verifyEveryTrialOnceAndLinked(mkb::Store& store) {
    mkb::TrialFilter all;
    all.includeArchived = true;
    auto trials = store.loadTrials(all);
    QVERIFY(trials.ok());
    std::map<std::tuple<int, int, std::string>, std::int64_t> liveIds;
    int live = 0;
    int archived = 0;
    for (const mkb::TrialRecord& trial : *trials) {
        if (trial.archived) {
            ++archived;
        } else {
            ++live;
            liveIds[{trial.problemNumber, trial.replicate, trial.arm}] = trial.id;
        }
    }
    QCOMPARE(live, kLiveTrials);
    QCOMPARE(archived, kArchivedTrials);
    int linked = 0;
    for (const mkb::TrialRecord& trial : *trials) {
        if (trial.archived || trial.arm.find("_skill") == std::string::npos) {
            continue;
        }
        const std::string source = trial.arm == "cutedsl2tirx_skill" ? "solo_cutedsl" : "solo_tirx";
        QVERIFY2(trial.sourceTrialId.has_value(), (trial.coordinate + " has no source trial").c_str());
        QCOMPARE(*trial.sourceTrialId, liveIds.at({trial.problemNumber, trial.replicate, source}));
        ++linked;
    }
    QCOMPARE(linked, kSkillArms);
    auto invocations = store.invocations();
    QVERIFY(invocations.ok());
    QCOMPARE(static_cast<int>(invocations->size()), 1);
}

} // namespace

class TestImportConcurrent : public QObject {
    Q_OBJECT

private slots:
    void threeImportsOfOneFolderAtOnceFileEveryTrialOnceAndLinked() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = generatedResultsFolder(root);
        const fs::path storePath = root / "p.sqlite";
        QVERIFY(mkb::Store::open(storePath).ok()); // created first: creating it is not what races here
        const QStringList arguments = {"import", QString::fromStdString(results.string()), "--store",
                                       QString::fromStdString(storePath.string()), "--json"};
        // Three at once, so that at least two of them overlap even when one starts late on a busy machine.
        std::vector<std::unique_ptr<QProcess>> imports;
        for (int i = 0; i < 3; ++i) {
            imports.push_back(std::make_unique<QProcess>());
            imports.back()->start(QString::fromStdString(mkbtest::cliPath()), arguments);
        }
        int imported = 0;
        for (const auto& process : imports) {
            QVERIFY(process->waitForFinished(300000));
            const QByteArray err = process->readAllStandardError();
            QVERIFY2(process->exitStatus() == QProcess::NormalExit && process->exitCode() == 0, err.constData());
            const QByteArray out = process->readAllStandardOutput().trimmed();
            qInfo("%s", out.constData());
            const QJsonObject summary = QJsonDocument::fromJson(out).object();
            QCOMPARE(summary["issues"].toInt(), 0);
            imported += summary["trials_imported"].toInt();
        }
        QCOMPARE(imported, kLiveTrials + kArchivedTrials); // each trial filed by exactly one of them

        auto store = mkb::Store::open(storePath);
        QVERIFY(store.ok());
        verifyEveryTrialOnceAndLinked(**store);
        auto again = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(again.ok());
        QCOMPARE(again->trialsUnchanged, kLiveTrials + kArchivedTrials);
        QCOMPARE(again->trialsImported + again->trialsReplaced + again->sourceLinksRepaired, 0);
    }

    void aReimportLinksSkillArmsStoredWithoutTheirSource() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        const fs::path results = generatedResultsFolder(root);
        auto store = mkb::Store::open(root / "p.sqlite");
        QVERIFY(store.ok());
        auto first = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(first.ok());
        QCOMPARE(first->trialsImported, kLiveTrials + kArchivedTrials);
        // What two racing imports left behind before imports were serialised: skill arms with no source link.
        QCOMPARE(sqlite3_exec((*store)->handle(),
                              "UPDATE trials SET source_trial_id = NULL WHERE arm LIKE '%skill' AND archived = 0",
                              nullptr, nullptr, nullptr),
                 SQLITE_OK);
        QCOMPARE(sqlite3_changes((*store)->handle()), kSkillArms);

        auto repaired = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(repaired.ok());
        QCOMPARE(repaired->sourceLinksRepaired, kSkillArms);
        QCOMPARE(repaired->trialsUnchanged, kLiveTrials + kArchivedTrials);
        QCOMPARE(repaired->trialsImported + repaired->trialsReplaced, 0);
        verifyEveryTrialOnceAndLinked(**store);

        auto third = mkb::importMetaKernelBenchResults(**store, results);
        QVERIFY(third.ok());
        QCOMPARE(third->sourceLinksRepaired, 0);
        verifyEveryTrialOnceAndLinked(**store);
    }
};

QTEST_GUILESS_MAIN(TestImportConcurrent)
#include "tst_import_concurrent.moc"
