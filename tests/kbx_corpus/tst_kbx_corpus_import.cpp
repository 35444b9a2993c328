// Tests of `mkb import kernelbenchx-corpus`: KernelBench-X's refinement corpus as trials, numbering, idempotence,
// per-line errors, and the refinement report and repair pairs over the imported corpus.
#include "core/io/kbx_corpus_import.h"
#include "core/io/kbx_corpus_records.h"
#include "core/store/store.h"
#include "kbx_corpus/corpus_lines.h"
#include "support/testpaths.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

struct CliRun {
    int exitCode = -1;
    std::string out;
    std::string err;
};

/// Runs mkb from the root of the source tree, as the guide's commands are typed.
CliRun runMkb(const QStringList& args) {
    QProcess process;
    process.setWorkingDirectory(QString::fromStdString(mkbtest::sourceDir().string()));
    process.start(QString::fromStdString(mkbtest::cliPath()), args);
    process.waitForFinished(60000);
    return {process.exitCode(), process.readAllStandardOutput().toStdString(),
            process.readAllStandardError().toStdString()};
}

const char* const kFixture = "tests/fixtures/kbx_corpus/all_records.jsonl";
const char* const kCheckout = "tests/fixtures/kbx";

std::string lastLine(const std::string& text) {
    std::string last;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            last = line;
        }
    }
    return last;
}

} // namespace

class TestKbxCorpusImport : public QObject {
    Q_OBJECT

private slots:
    void aRecordGivesBothRoundsWithKernelBenchXsVerdicts() {
        const std::string failing =
            kbxtest::sideJson("false", "false", "null",
                              "UserWarning: numpy\\nTraceback (most recent call last):\\n  File "
                              "\\\"k.py\\\", line 3\\nNameError: name 'tl_exp' is not defined\\n");
        auto record =
            mkb::parseCorpusRecord(kbxtest::recordLine(failing, kbxtest::sideJson("true", "true", "1.25", "")), 4);
        QVERIFY2(record.ok(), record.ok() ? "" : record.error().message.c_str());
        QCOMPARE(record->taskId(), std::string("Math/exp"));
        QCOMPARE(record->before.round, 0);
        QCOMPARE(record->after.round, 1);
        const mkb::Verdict before = mkb::corpusVerdict(record->before, record->taskId());
        QVERIFY(!before.imported && !before.correct && !before.passed);
        QCOMPARE(before.stage, std::string("import"));
        QCOMPARE(before.error, std::string("KernelBench-X call stage failed: NameError: name 'tl_exp' is not defined"));
        QCOMPARE(before.boundary, std::string("kbx"));
        const mkb::Verdict after = mkb::corpusVerdict(record->after, record->taskId());
        QVERIFY(after.imported && after.correct && after.passed);
        QCOMPARE(after.speedupVsEager, 1.25);
        QVERIFY(after.error.empty());
        QVERIFY(after.json.find("\"source\":\"kernelbenchx-corpus\"") != std::string::npos);
        QVERIFY(after.json.find("\"reached_by\":\"call_fail_to_pass\"") != std::string::npos);
        QVERIFY(before.json.find("reached_by") == std::string::npos);
    }

    void aMalformedFieldIsNamedWithItsLine() {
        auto wrongType = mkb::parseCorpusRecord(kbxtest::recordLine(kbxtest::sideJson("true", "\"yes\"", "null", ""),
                                                                    kbxtest::sideJson("true", "true", "1.0", "")),
                                                7);
        QVERIFY(!wrongType.ok());
        QCOMPARE(wrongType.error().message, std::string("line 7: field 'before.exe_ok' must be true or false"));
        std::string noCode = kbxtest::recordLine(kbxtest::sideJson("true", "true", "1.0", ""),
                                                 kbxtest::sideJson("true", "true", "1.1", ""));
        noCode.replace(noCode.find("\"def exp(x): return x.exp()\""), 28, "\"\"");
        auto empty = mkb::parseCorpusRecord(noCode, 2);
        QVERIFY(!empty.ok());
        QCOMPARE(empty.error().message, std::string("line 2: field 'after_code' is empty"));
        auto notANumber = mkb::parseCorpusRecord(kbxtest::recordLine(kbxtest::sideJson("true", "true", "NaN", ""),
                                                                     kbxtest::sideJson("true", "true", "1.0", "")),
                                                 3);
        QVERIFY(!notANumber.ok());
        QCOMPARE(notANumber.error().message,
                 std::string("line 3: field 'before.speedup' must be a finite number or null"));
        auto cut = mkb::parseCorpusRecord("{\"task_id\": \"Math/exp.py\", \"from_ro", 9);
        QVERIFY(!cut.ok());
        QVERIFY2(cut.error().message.rfind("line 9: not a whole JSON object", 0) == 0, cut.error().message.c_str());
    }

    void tasksTakeTheTaskImportersNumbersAndAbsentOnesFrom900() {
        const std::vector<std::pair<std::string, std::string>> checkout = {
            {"Activation", "gelu.py"}, {"Activation", "gelu_bf16.py"}, {"LinearAlgebra", "solve.py"}};
        auto problems = mkb::numberCorpusTasks(
            {{"LinearAlgebra", "solve.py"}, {"Broadcast", "tile_clamp.py"}, {"Activation", "gelu_bf16.py"}}, checkout);
        QCOMPARE(problems.size(), std::size_t(3));
        QCOMPARE(problems[0].taskId, std::string("Activation/gelu_bf16"));
        QCOMPARE(problems[0].number, 101);
        QCOMPARE(problems[1].taskId, std::string("Broadcast/tile_clamp"));
        QCOMPARE(problems[1].number, 900);
        QVERIFY(!problems[1].inCheckout);
        QCOMPARE(problems[2].number, 102);
        QCOMPARE(problems[2].family, std::string("linear_algebra"));
        QCOMPARE(mkb::corpusTaskSlug("index_fill_"), std::string("index_fill"));
    }

    void theFixtureImportsOnceAndAgainChangesNothing() {
        QTemporaryDir dir;
        const QString store = dir.filePath("kbx-corpus.sqlite");
        const QStringList args = {"import", "kernelbenchx-corpus", kFixture, "--tasks", kCheckout, "--store", store};
        const CliRun first = runMkb(args);
        QCOMPARE(first.exitCode, 1); // two malformed lines, the rest imported
        QCOMPARE(lastLine(first.out), std::string("kernelbenchx-corpus: 5 of 7 records read; 4 tasks (9 rounds): 4 "
                                                  "trials imported, 0 unchanged, 0 replaced (model kbx-geak)"));
        QVERIFY(first.out.find("absent   Broadcast/expand_where -> 900_expand_where") != std::string::npos);
        QVERIFY2(first.err.find(std::string(kFixture) + ": line 6: field 'after.exe_ok' must be true or false\n") !=
                     std::string::npos,
                 first.err.c_str());
        QVERIFY(first.err.find(": line 7: not a whole JSON object") != std::string::npos);

        const CliRun again = runMkb(args);
        QCOMPARE(again.exitCode, 1);
        QCOMPARE(lastLine(again.out), std::string("kernelbenchx-corpus: 5 of 7 records read; 4 tasks (9 rounds): 0 "
                                                  "trials imported, 4 unchanged, 0 replaced (model kbx-geak)"));

        auto opened = mkb::Store::open(store.toStdString(), mkb::OpenMode::MustExist);
        QVERIFY(opened.ok());
        auto trials = (*opened)->loadTrials({}, mkb::TrialDetail::Full);
        QVERIFY(trials.ok());
        QCOMPARE(trials->size(), std::size_t(4));
        std::map<int, const mkb::TrialRecord*> byNumber;
        for (const mkb::TrialRecord& trial : *trials) {
            byNumber[trial.problemNumber] = &trial;
        }
        QCOMPARE(byNumber.size(), std::size_t(4));
        QVERIFY(byNumber.count(100) && byNumber.count(103) && byNumber.count(106) && byNumber.count(900));
        const mkb::TrialRecord& gelu = *byNumber[100];
        QCOMPARE(gelu.problemSlug, std::string("gelu_fp16"));
        QCOMPARE(gelu.suite, std::string("kernelbenchx"));
        QCOMPARE(gelu.coordinate, std::string("p100_r1_solo_triton"));
        QVERIFY(gelu.finalVerdict && gelu.finalVerdict->passed);
        QCOMPARE(gelu.finalVerdict->speedupVsEager, 1.8);
        auto rounds = (*opened)->submissions(gelu.id);
        QVERIFY(rounds.ok());
        QCOMPARE(rounds->size(), std::size_t(3));
        QCOMPARE((*rounds)[0].index, 1);
        QVERIFY(!(*rounds)[0].verdict.imported);
        QCOMPARE((*rounds)[2].index, 3);
        // The regression's last round failed: the trial's verdict is KernelBench-X's reason for it.
        QCOMPARE(byNumber[900]->error, std::string("KernelBench-X exe stage failed: AssertionError: output differs "
                                                   "at index (0, 17)"));
    }

    void aChangedRecordReplacesItsTaskAndKeepsTheOldOneArchived() {
        QTemporaryDir dir;
        const QString store = dir.filePath("s.sqlite");
        QCOMPARE(runMkb({"import", "kernelbenchx-corpus", kFixture, "--tasks", kCheckout, "--store", store}).exitCode,
                 1);
        std::ifstream in(mkbtest::sourceDir() / kFixture);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::size_t at = text.find("\"speedup\": 1.8");
        QVERIFY(at != std::string::npos);
        text.replace(at, 14, "\"speedup\": 1.9");
        const fs::path changed = fs::path(dir.path().toStdString()) / "changed.jsonl";
        std::ofstream(changed) << text;
        const CliRun run = runMkb({"import", "kernelbenchx-corpus", QString::fromStdString(changed.string()), "--tasks",
                                   kCheckout, "--store", store});
        QCOMPARE(lastLine(run.out), std::string("kernelbenchx-corpus: 5 of 7 records read; 4 tasks (9 rounds): 0 "
                                                "trials imported, 3 unchanged, 1 replaced (model kbx-geak)"));
        auto opened = mkb::Store::open(store.toStdString(), mkb::OpenMode::MustExist);
        QVERIFY(opened.ok());
        mkb::TrialFilter all;
        all.includeArchived = true;
        auto trials = (*opened)->loadTrials(all, mkb::TrialDetail::Lean);
        QVERIFY(trials.ok());
        QCOMPARE(trials->size(), std::size_t(5));
    }

    void theReportAndTheRepairPairsReadTheCorpusRounds() {
        QTemporaryDir dir;
        const QString store = dir.filePath("kbx-corpus.sqlite");
        QCOMPARE(runMkb({"import", "kernelbenchx-corpus", kFixture, "--tasks", kCheckout, "--store", store}).exitCode,
                 1);
        const CliRun report = runMkb({"report", "--store", store, "--metrics", "refinement", "--format", "csv"});
        QCOMPARE(report.exitCode, 0);
        std::string csv = report.out;
        csv.erase(std::remove(csv.begin(), csv.end(), '\r'), csv.end()); // RFC 4180 ends rows with CRLF
        // Round 0 of three tasks: gelu failed to compile, the pool compiled but was wrong, scaled_add passed.
        QVERIFY2(csv.find("all,1,3,0.667,0.333\nall,2,4,1.000,1.000\nall,3,2,1.000,0.500\n") != std::string::npos,
                 csv.c_str());
        // gelu and the pool were rescued (1.8 and 0.5: GM 0.949); scaled_add and expand_where were right from their
        // first round, and only scaled_add still passes at its last.
        QVERIFY(csv.find("all,4,2,2,0,1.000,1.500,0.949\n") != std::string::npos);
        QVERIFY(csv.find("all,2,2,0,1.000,") != std::string::npos);

        const CliRun pairs = runMkb({"export", "repair-pairs", "--store", store});
        QCOMPARE(pairs.exitCode, 0);
        std::vector<std::string> lines;
        std::istringstream in(pairs.out);
        for (std::string line; std::getline(in, line);) {
            lines.push_back(line);
        }
        QCOMPARE(lines.size(), std::size_t(2));
        QVERIFY(lines[0].find("\"problem\":\"100_gelu_fp16\"") != std::string::npos);
        QVERIFY(lines[0].find("\"before_index\":1,\"after_index\":2") != std::string::npos);
        QVERIFY(lines[0].find("NameError: name 'tl_erf' is not defined") != std::string::npos);
        QVERIFY(lines[1].find("\"problem\":\"106_row_avg_pool1d\"") != std::string::npos);
    }

    void theImportedSuiteGivesEachTaskItsProblemAndCategory() {
        QTemporaryDir dir;
        const QString suite = dir.filePath("kbx-suite");
        const QString store = dir.filePath("kbx-corpus.sqlite");
        const CliRun imported = runMkb({"suite", "import", "kernelbenchx", kCheckout, "--out", suite, "--python",
                                        QString::fromStdString(mkbtest::testPython())});
        QCOMPARE(imported.exitCode, 3); // the fixture checkout holds a malformed task file on purpose
        const CliRun corpus = runMkb(
            {"import", "kernelbenchx-corpus", kFixture, "--tasks", kCheckout, "--suite", suite, "--store", store});
        QCOMPARE(corpus.exitCode, 1);
        QVERIFY2(corpus.out.find("stored the problem files of 3 of 4 tasks from ") != std::string::npos,
                 corpus.out.c_str());
        auto opened = mkb::Store::open(store.toStdString(), mkb::OpenMode::MustExist);
        QVERIFY(opened.ok());
        auto problems = (*opened)->problems();
        QVERIFY(problems.ok());
        QCOMPARE(problems->size(), std::size_t(3));
        QCOMPARE((*problems)[0].number, 100);
        QCOMPARE((*problems)[0].slug, std::string("gelu_fp16"));
        QVERIFY((*problems)[0].source.find("\"origin\": \"kernelbenchx:Activation/gelu_fp16\"") != std::string::npos);
        const CliRun report =
            runMkb({"report", "--store", store, "--metrics", "kbx", "--split", "category", "--format", "csv"});
        QCOMPARE(report.exitCode, 0);
        QVERIFY2(report.out.find("\nActivation,1,1.000,1.000,") != std::string::npos, report.out.c_str());
        QVERIFY(report.out.find("\nuncategorised,1,1.000,0.000,") != std::string::npos); // Broadcast/expand_where

        const CliRun noSuite =
            runMkb({"import", "kernelbenchx-corpus", kFixture, "--suite", kCheckout, "--store", store});
        QCOMPARE(noSuite.exitCode, 3);
        QVERIFY2(noSuite.err.find("holds no problem imported from KernelBench-X") != std::string::npos,
                 noSuite.err.c_str());
    }

    void twoLinesThatDisagreeOnARoundKeepTheFirstAndSaySo() {
        QTemporaryDir dir;
        const std::string first = kbxtest::recordLine(kbxtest::sideJson("false", "false", "null", ""),
                                                      kbxtest::sideJson("true", "true", "1.1", ""));
        std::string second = first;
        second.replace(second.find("\"round_1\""), 9, "\"round_2\"");
        second.replace(second.find("\"round_0\""), 9, "\"round_1\"");
        const fs::path file = fs::path(dir.path().toStdString()) / "corpus.jsonl";
        std::ofstream(file) << first << "\n\n" << second << "\n";
        auto store = mkb::Store::open(fs::path(dir.path().toStdString()) / "s.sqlite");
        QVERIFY(store.ok());
        auto summary = mkb::importKbxCorpus(**store, file);
        QVERIFY(summary.ok());
        QCOMPARE(summary->lines, 2);
        QCOMPARE(summary->rounds, 3);
        QCOMPARE(summary->issues.size(), std::size_t(1));
        QCOMPARE(summary->issues[0].message,
                 std::string("line 3: task Math/exp round_1 ('before') differs from line 1's; line 1's is kept"));
        auto trials = (*store)->loadTrials({}, mkb::TrialDetail::Lean);
        QVERIFY(trials.ok());
        QCOMPARE(trials->size(), std::size_t(1));
        QCOMPARE(trials->front().problemNumber, mkb::kFirstAbsentTaskNumber); // no checkout: numbered from 900
        auto rounds = (*store)->submissions(trials->front().id);
        QVERIFY(rounds.ok());
        QCOMPARE((*rounds)[1].kernelSource, std::string("def exp(x): return x.exp()"));
    }

    void jsonSummarySaysWhatWasFiledAndWhichTasksTheCheckoutLacks() {
        QTemporaryDir dir;
        const CliRun run = runMkb({"import", "kernelbenchx-corpus", kFixture, "--tasks", kCheckout, "--store",
                                   dir.filePath("s.sqlite"), "--model", "geak-fixture", "--json"});
        QCOMPARE(run.exitCode, 1);
        const nlohmann::json summary = nlohmann::json::parse(run.out);
        QCOMPARE(summary["model"].get<std::string>(), std::string("geak-fixture"));
        QCOMPARE(summary["records"].get<int>(), 5);
        QCOMPARE(summary["rounds"].get<int>(), 9);
        QCOMPARE(summary["trials_imported"].get<int>(), 4);
        QCOMPARE(summary["issues"].get<int>(), 2);
        QCOMPARE(summary["tasks_not_in_checkout"].size(), std::size_t(1));
        QCOMPARE(summary["tasks_not_in_checkout"][0]["number"].get<int>(), 900);
    }
};

QTEST_GUILESS_MAIN(TestKbxCorpusImport)
#include "tst_kbx_corpus_import.moc"
