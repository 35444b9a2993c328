// `mkb suite check` on the CPU fixture suite: per-problem lines, exact issue reports, summary, JSON, table, exit codes
// (resuming and interrupting: tst_suite_resume.cpp).
#include "suite/suite_cli_run.h"
#include "support/testpaths.h"

#include "core/suite/suite_check.h"
#include "core/suite/suite_report.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <optional>

using namespace suitetest;

namespace {

/// A report of one problem whose Triton solution passed with this speedup and roofline, for the table's tests.
mkb::SuiteCheckReport oneTritonRow(const char* family, int number, const char* slug, double speedup, double iou,
                                   std::optional<double> mfu) {
    mkb::Verdict verdict;
    verdict.passed = true;
    verdict.speedupVsEager = speedup;
    verdict.roofline = mkb::Roofline{};
    verdict.roofline->iou = iou;
    verdict.roofline->mfu = mfu;
    mkb::SolutionCheck solution;
    solution.dsl = "triton";
    solution.present = true;
    solution.verdict = verdict;
    mkb::ProblemCheck check;
    check.problem.family = family;
    check.problem.number = number;
    check.problem.slug = slug;
    check.solutions = {solution};
    mkb::SuiteCheckReport report;
    report.dsls = {"triton"};
    report.problems = {check};
    return report;
}

/// On the CPU fixtures eager's timings are noisy, so a row may end with the table's "eager moved" range.
const QString kEagerMayMove = "(; eager moved: [^|]+)?";

} // namespace

class SuiteCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp;
    CliRun whole; // the whole fixture suite, run once for the issue, JSON and table tests

    QString jsonPath() const { return temp.path() + "/suite.json"; }

    /// checks/01 with its two solutions (cpusim and the twin DSL), 3 gradings each, under a --flakiness mode.
    QStringList twinArgs(const char* flakiness, const QString& json, const QString& table) const {
        QStringList args = cpuArgs("checks/01*", "3");
        args[5] = "cpusim,cpusim_twin";
        args << "--dsl-dir" << src("tests/suite/fixtures/twin_dsl") << "--flakiness" << flakiness << "--json" << json
             << "--table" << table;
        return args;
    }
    QString tablePath() const { return temp.path() + "/suite.md"; }

private slots:
    void initTestCase() {
        QVERIFY(temp.isValid());
        QStringList args = cpuArgs("*", "2");
        args << "--json" << jsonPath() << "--table" << tablePath();
        whole = runMkb(args);
    }

    void cleanProblemExitsZeroWithLineAndSummary() {
        // "suite check: a clean problem with a passing solution exits 0 with its line, flakiness n/n and the summary"
        CliRun run = runMkb(cpuArgs("checks/01*", "3"));
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains(QRegularExpression(
                     "^ok    checks/01_vector_add: deterministic, sensitive \\(2/2 inputs\\), eager [0-9.]+ ms; "
                     "cpusim pass [0-9.]+x; flakiness 3/3 \\(cpusim\\); checked in [0-9.]+ s$",
                     QRegularExpression::MultilineOption)),
                 qPrintable(run.out));
        QVERIFY2(run.out.contains("1 problems: 1 deterministic, 1 sensitive, eager >= 0 us: 1/1; solutions: cpusim "
                                  "1/1 pass"),
                 qPrintable(run.out));
        QVERIFY(run.out.contains("flakiness 3/3 on 1/1 solutions"));
        QVERIFY(issueLines(run.out).isEmpty());
    }

    void eachIssueIsReportedExactly() {
        // "suite check: an insensitive input, a nondeterministic reference and a missing solution are each reported
        // exactly once, naming problem (and DSL), and the run goes on to the end with exit 1"
        QVERIFY2(whole.exitCode == 1, qPrintable(whole.out + whole.err));
        const QStringList issues = issueLines(whole.out);
        QCOMPARE(issues.size(), 3);
        QVERIFY2(issues[0].startsWith("checks/02_ignored_bias: input 1 (bias, float32[4096]): output unchanged "
                                      "within the grading allowance"),
                 qPrintable(issues[0]));
        QVERIFY(issues[0].endsWith("if the input is structural, list 1 in MKB_META[\"insensitive\"]"));
        QVERIFY2(issues[1].contains(QRegularExpression(
                     "^checks/03_noisy_reference: the reference is not deterministic: two runs on identical inputs "
                     "differ in output \\(float32\\[4096\\]\\): [1-9][0-9]* of 4096 elements differ, max \\|diff\\| ")),
                 qPrintable(issues[1]));
        QCOMPARE(issues[2], "checks/04_unsolved_scale [cpusim]: missing solution " +
                                src("tests/suite/fixtures/suite/checks/_solutions/04_unsolved_scale.cpusim.py"));
        QVERIFY(whole.out.contains("ISSUE checks/02_ignored_bias: deterministic, NOT sensitive (1/2 inputs)"));
        QVERIFY(whole.out.contains("ISSUE checks/03_noisy_reference: NOT deterministic, sensitive (1/1 inputs)"));
        QVERIFY(whole.out.contains("ISSUE checks/04_unsolved_scale: deterministic, sensitive (2/2 inputs)"));
        QVERIFY(whole.out.contains("; cpusim missing; flakiness not checked"));
        QVERIFY2(whole.out.contains("4 problems: 3 deterministic, 3 sensitive (1 issue: checks/02_ignored_bias: "
                                    "input 1 (bias"),
                 qPrintable(whole.out));
        QVERIFY(whole.out.contains("solutions: cpusim 3/4 pass"));
        QVERIFY(whole.out.contains("1 missing; flakiness 2/2 on 3/4 solutions"));
    }

    void jsonHoldsValidationsAndVerdicts() {
        // "suite check --json: every problem with the grader's validation, each solution's verdict and flakiness"
        QFile file(jsonPath());
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(whole.err));
        QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(root["clean"].toBool(true), false);
        QCOMPARE(root["device"].toString(), "cpu");
        QCOMPARE(root["gradings"].toInt(), 2);
        QVERIFY(root["command"].toString().startsWith("mkb suite check --suite "));
        QCOMPARE(root["grader_fingerprint"].toString().size(), 64);
        QJsonArray problems = root["problems"].toArray();
        QCOMPARE(problems.size(), 4);
        QJsonObject bias = problems[1].toObject();
        QCOMPARE(bias["name"].toString(), "checks/02_ignored_bias");
        QJsonArray inputs = bias["validation"].toObject()["inputs"].toArray();
        QCOMPARE(inputs.size(), 2);
        QCOMPARE(inputs[0].toObject()["changed"].toBool(), true);
        QCOMPARE(inputs[1].toObject()["changed"].toBool(true), false);
        QCOMPARE(problems[2].toObject()["validation"].toObject()["deterministic"].toBool(true), false);
        QJsonObject solved = problems[0].toObject()["solutions"].toArray()[0].toObject();
        QCOMPARE(solved["passed"].toBool(), true);
        QVERIFY(solved["verdict"].toObject()["speedup_vs_eager"].toDouble() > 0);
        QCOMPARE(solved["flakiness"].toObject()["correct"].toInt(), 2);
        // Each check's wall time, all of them checked in this run. Kept to 0.1 s, so a check of under 0.05 s (a CPU
        // fixture on a quiet machine) is 0.
        for (const QJsonValue& problem : problems) {
            QVERIFY2(problem.toObject()["check_s"].isDouble() && problem.toObject()["check_s"].toDouble(-1) >= 0,
                     qPrintable(problem.toObject()["name"].toString()));
        }
        QCOMPARE(root["flakiness_scope"].toString(), QString("every_solution"));
        QJsonObject missing = problems[3].toObject()["solutions"].toArray()[0].toObject();
        QCOMPARE(missing["present"].toBool(true), false);
        QVERIFY(missing["verdict"].isNull());
        QVERIFY(missing["flakiness"].isNull());
    }

    void tableIsGeneratedMarkdown() {
        // "suite check --table: the markdown table with its heading facts, a row per problem and the summary"
        QFile file(tablePath());
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString table = QString::fromUtf8(file.readAll());
        QVERIFY(table.startsWith("# Problem suite\n"));
        QVERIFY(table.contains("Generated by `mkb suite check`"));
        QVERIFY(table.contains("- device: cpu\n"));
        QVERIFY(table.contains(QRegularExpression("- date: \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\n")));
        QVERIFY(table.contains(QRegularExpression("- grader fingerprint: `[0-9a-f]{64}`\n")));
        QVERIFY(table.contains("- command: `mkb suite check --suite "));
        QVERIFY2(table.contains(QRegularExpression(
                     "\n- check time: [0-9.]+ s for 4 problems \\(longest checks/0[1-4]_[a-z_]+, [0-9.]+ s\\)\n")),
                 qPrintable(table));
        QVERIFY(table.contains(
            "| problem | family | category | tags | eager ms | cpusim speedup | cpusim IOU / MFU | validation |"));
        QVERIFY2(table.contains(QRegularExpression(
                     "\\| checks/01_vector_add \\| checks \\| uncategorised \\| "
                     "elementwise \\| [0-9.]+ \\| [0-9.]+x \\[[0-9.]+, [0-9.]+\\] \\| – / – \\| clean; "
                     "gradings correct: cpusim 2/2" +
                     kEagerMayMove + " \\|")),
                 qPrintable(table));
        QVERIFY(table.contains(QRegularExpression("\\| checks/02_ignored_bias \\| checks \\| uncategorised \\|  \\| "
                                                  "[0-9.]+ \\| [0-9.]+x \\[[0-9.]+, [0-9.]+\\] "
                                                  "\\| – / – \\| 1 issue; gradings correct: cpusim 2/2" +
                                                  kEagerMayMove + " \\|")));
        QVERIFY(table.contains("| missing | – | clean |"));
        QVERIFY(table.contains("\n## Issues\n"));
        QVERIFY(table.contains("- checks/04_unsolved_scale [cpusim]: missing solution "));
    }

    void tableNamesNoPathOfTheMachine() {
        // "suite check --table: the table names files relative to the suite or by their name, never a machine path"
        QFile file(tablePath());
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString table = QString::fromUtf8(file.readAll());
        QVERIFY2(!table.contains(temp.path()), qPrintable(table));
        QVERIFY2(!table.contains(QString::fromStdString(mkbtest::sourceDir().string())), qPrintable(table));
        QVERIFY2(table.contains("--suite suite "), qPrintable(table));
        QVERIFY2(table.contains("--json suite.json --table suite.md`"), qPrintable(table));
        QVERIFY2(table.contains("- checks/04_unsolved_scale [cpusim]: missing solution "
                                "checks/_solutions/04_unsolved_scale.cpusim.py\n"),
                 qPrintable(table));
        // The JSON report keeps the full paths: it is for machines, and --resume reads it.
        QFile json(jsonPath());
        QVERIFY(json.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(json.readAll()).contains(temp.path()));
    }

    void tableSaysTheStoreWithoutItsPath() {
        // "suite table: the store and temporary report files of the host are not named; suite files are relative"
        mkb::SuiteCheckReport report;
        report.suiteRoot = "/home/someone/mkb/problems";
        report.storePath = "/home/someone/.local/share/mkb/store.sqlite";
        report.command = "mkb suite check";
        report.commandWords = {"mkb",
                               "suite",
                               "check",
                               "--suite",
                               "/home/someone/mkb/problems",
                               "--store=/home/someone/.local/share/mkb/store.sqlite",
                               "--resume",
                               "/tmp/tmp.Xy12/part1.json",
                               "--problems",
                               "reduction/*"};
        report.peaksNote = "the latest probe of cuda:0 in /home/someone/.local/share/mkb/store.sqlite";
        report.catalogIssues = {"/home/someone/mkb/problems/reduction/09_bad.py: no Model class"};
        const QString table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(!table.contains("/home/someone"), qPrintable(table));
        QVERIFY2(!table.contains("/tmp/"), qPrintable(table));
        QVERIFY2(table.contains("- peaks: the latest probe of cuda:0 in the store\n"), qPrintable(table));
        QVERIFY2(table.contains("- command: `mkb suite check --suite problems --store=store.sqlite --resume part1.json "
                                "--problems 'reduction/*'`"),
                 qPrintable(table));
        QVERIFY2(table.contains("- reduction/09_bad.py: no Model class\n"), qPrintable(table));
    }

    void tableNamesTheCategoryAndExplainsAnIouAboveOne() {
        // "suite table: a column names each problem's KernelBench-X category; an IOU above 1 gets a sentence saying
        // what it means, and a table without one does not"
        mkb::SuiteCheckReport report = oneTritonRow("kv_cache", 14, "paged_kv_gather", 2.06, 0.91, std::nullopt);
        report.problems[0].problem.meta.category = "Index";
        const std::string footnote = "Above 1, a kernel moved fewer bytes from memory than that count";
        QString table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(table.contains("| kv_cache/14_paged_kv_gather | kv_cache | Index |  | – | 2.06x | 0.91 / – |"),
                 qPrintable(table));
        QVERIFY2(!table.contains(QString::fromStdString(footnote)), qPrintable(table));
        report.problems[0].solutions[0].verdict->roofline->iou = 1.46;
        table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(table.contains("| 2.06x | 1.46 / – |"), qPrintable(table));
        // With the grading's interval, the speedup carries it.
        report.problems[0].solutions[0].verdict->speedupCiLow = 2.0;
        report.problems[0].solutions[0].verdict->speedupCiHigh = 2.104;
        table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(table.contains("| 2.06x [2.00, 2.10] | 1.46 / – |"), qPrintable(table));
        QVERIFY2(table.contains(QString::fromStdString(footnote)), qPrintable(table));
    }

    void eagerThatMovedBetweenTimingsIsSaidWithItsRange() {
        // "suite table: where eager's median moved by 20% or more between a problem's timings (the validation's and
        // each solution's evaluation), the validation cell gives the range, a sentence says what it means for the
        // speedups and the summary counts the problems; a steadier eager gets none of them"
        mkb::SuiteCheckReport report = oneTritonRow("moe", 25, "grouped_expert_gemm", 1.22, 0.21, 0.59);
        report.problems[0].validation.eagerMedianMs = 2.882;
        report.problems[0].solutions[0].verdict->eagerMedianMs = 1.302;
        const std::string footnote = "the problem's speedups can move that much from one run to the next";
        QString table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(table.contains("; eager moved: 1.302–2.882 ms over 2 timings (2.21x) |"), qPrintable(table));
        QVERIFY2(table.contains("differ by 20% or more"), qPrintable(table));
        QVERIFY2(table.contains(QString::fromStdString(footnote)), qPrintable(table));
        const mkb::EagerSpread spread = mkb::eagerSpread(report.problems[0]);
        QCOMPARE(spread.timings, 2);
        QCOMPARE(spread.lowMs, 1.302);
        QCOMPARE(spread.highMs, 2.882);
        QVERIFY2(QString::fromStdString(mkb::suiteSummary(report))
                     .endsWith("; eager moved by 20% or more between its timings on 1 problem"),
                 qPrintable(QString::fromStdString(mkb::suiteSummary(report))));
        // 19% apart: below the line, so neither the range nor the sentence.
        report.problems[0].solutions[0].verdict->eagerMedianMs = 2.882 / 1.19;
        table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(!table.contains("eager moved"), qPrintable(table));
        QVERIFY2(!table.contains(QString::fromStdString(footnote)), qPrintable(table));
        QVERIFY(!QString::fromStdString(mkb::suiteSummary(report)).contains("eager moved"));
        // One timing alone has no range.
        report.problems[0].validation.eagerMedianMs.reset();
        QCOMPARE(mkb::eagerSpread(report.problems[0]).timings, 1);
        QVERIFY(!QString::fromStdString(mkb::suiteTableMarkdown(report)).contains("eager moved"));
    }

    void mfuAboveOneIsLeftOutWithItsReason() {
        // "suite table: an MFU above 1 (FLOPs on a unit the probe did not measure, an int8 GEMM against the float32
        // rate) is shown as – with a sentence saying why, never as a figure"
        mkb::SuiteCheckReport report = oneTritonRow("quantization", 5, "int8_w8a8_gemm", 3.83, 0.36, 6.99);
        const std::string reason = "its MFU is shown as –";
        QString table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(table.contains("| 3.83x | 0.36 / – |"), qPrintable(table));
        QVERIFY2(!table.contains("6.99"), qPrintable(table));
        QVERIFY2(table.contains(QString::fromStdString(reason)), qPrintable(table));
        report.problems[0].solutions[0].verdict->roofline->mfu = 0.67;
        table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(table.contains("| 3.83x | 0.36 / 0.67 |"), qPrintable(table));
        QVERIFY2(!table.contains(QString::fromStdString(reason)), qPrintable(table));
    }

    void aDeclaredNoSolutionIsShownWithItsReasonNotAsMissing() {
        // "suite table: a DSL the problem declares in MKB_META no_solution shows 'none' with the reason below the
        // table, the summary counts it apart from the missing ones, and the problem line says it was declared"
        mkb::SuiteCheckReport report = oneTritonRow("moe", 9, "token_scatter", 1.5, 0.5, std::nullopt);
        report.dsls = {"triton", "pallas", "numba"};
        mkb::SolutionCheck none;
        none.dsl = "pallas";
        mkb::SolutionCheck missing;
        missing.dsl = "numba";
        report.problems[0].solutions.push_back(none);
        report.problems[0].solutions.push_back(missing);
        report.problems[0].problem.meta.noSolution = {{"pallas", "a data-dependent scatter has no Pallas block spec"}};
        const QString table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(table.contains("| none (see below) | – | missing | – |"), qPrintable(table));
        QVERIFY2(table.contains("## No solution"), qPrintable(table));
        QVERIFY2(table.contains("- moe/09_token_scatter [pallas]: a data-dependent scatter has no Pallas block spec"),
                 qPrintable(table));
        const QString summary = QString::fromStdString(mkb::suiteSummary(report));
        QVERIFY2(summary.contains("pallas 0/1 pass, 0 beat eager, 1 declared without one;"), qPrintable(summary));
        QVERIFY2(summary.contains("numba 0/1 pass, 0 beat eager, 1 missing"), qPrintable(summary));
        const QString line = QString::fromStdString(mkb::problemLine(report.problems[0], 0));
        QVERIFY2(line.contains("pallas none (declared)") && line.contains("numba missing"), qPrintable(line));
    }

    void partialTableNamesWhatIsLeftByNumberRanges() {
        // "suite table: a partial table names the problems not yet checked, consecutive numbers as one range"
        mkb::SuiteCheckReport report = oneTritonRow("kv_cache", 14, "paged_kv_gather", 2.06, 0.91, std::nullopt);
        report.unchecked = {"moe/09_w", "attention/03_x", "moe/07_y", "kv_cache/08_z", "odd/unnumbered"};
        const QString table = QString::fromStdString(mkb::suiteTableMarkdown(report));
        QVERIFY2(
            table.contains("- **partial**: 1 of 6 problems checked; not yet checked: 5 (03, 07–09, odd/unnumbered; "
                           "continue with --resume)\n"),
            qPrintable(table));
    }

    void tableRendersAgainFromTheReport() {
        // "mkb suite table REPORT: the table of an earlier --json report, byte for byte what --table wrote, also from a
        // report written before it recorded its command's words and store; --output writes it to a file"
        QFile written(tablePath());
        QVERIFY(written.open(QIODevice::ReadOnly));
        const QByteArray expected = written.readAll();
        const QString suite = src("tests/suite/fixtures/suite");
        CliRun rendered = runMkb({"suite", "table", jsonPath(), "--suite", suite});
        QVERIFY2(rendered.exitCode == 0, qPrintable(rendered.err));
        QCOMPARE(rendered.out.toUtf8(), expected);

        QFile report(jsonPath());
        QVERIFY(report.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(report.readAll()).object();
        for (const char* key : {"command_words", "store", "suite_root"}) {
            QVERIFY2(root.contains(key), key);
            root.remove(key);
        }
        const QString older = temp.path() + "/older-report.json";
        QFile olderFile(older);
        QVERIFY(olderFile.open(QIODevice::WriteOnly));
        olderFile.write(QJsonDocument(root).toJson());
        olderFile.close();
        const QString output = temp.path() + "/rendered.md";
        CliRun toFile = runMkb({"suite", "table", older, "--suite", suite, "--output", output});
        QVERIFY2(toFile.exitCode == 0, qPrintable(toFile.err));
        QFile renderedFile(output);
        QVERIFY(renderedFile.open(QIODevice::ReadOnly));
        QCOMPARE(renderedFile.readAll(), expected);

        // A problem checked before check times were recorded is counted apart.
        QJsonArray problems = root["problems"].toArray();
        QJsonObject first = problems[0].toObject();
        first.remove("check_s");
        problems[0] = first;
        root["problems"] = problems;
        QVERIFY(olderFile.open(QIODevice::WriteOnly | QIODevice::Truncate));
        olderFile.write(QJsonDocument(root).toJson());
        olderFile.close();
        CliRun untimed = runMkb({"suite", "table", older, "--suite", suite});
        QVERIFY2(untimed.exitCode == 0, qPrintable(untimed.err));
        QVERIFY2(untimed.out.contains(QRegularExpression("\n- check time: [0-9.]+ s for 3 problems \\(longest "
                                                         "checks/0[2-4]_[a-z_]+, [0-9.]+ s\\); 1 checked before check "
                                                         "times were recorded\n")),
                 qPrintable(untimed.out));
    }

    void tableRefusesAReportWhoseFilesChanged() {
        // "mkb suite table: a problem file changed since the report, or an unreadable report, is one line and exit 3"
        QTemporaryDir copy;
        QVERIFY(copy.isValid());
        const QString suite = copy.path() + "/suite";
        QVERIFY(QProcess::execute("cp", {"-r", src("tests/suite/fixtures/suite"), suite}) == 0);
        QStringList args = cpuArgs("checks/01*", "1");
        args[3] = suite;
        const QString json = copy.path() + "/report.json";
        QVERIFY(runMkb(args << "--json" << json).exitCode == 0);
        QFile problem(suite + "/checks/01_vector_add.py");
        QVERIFY(problem.open(QIODevice::Append));
        problem.write("\n# edited\n");
        problem.close();
        CliRun changed = runMkb({"suite", "table", json, "--suite", suite});
        QCOMPARE(changed.exitCode, 3);
        QVERIFY2(changed.err.contains("checks/01_vector_add: the problem file changed since the report was made; check "
                                      "it again (mkb suite check --resume "),
                 qPrintable(changed.err));
        QCOMPARE(changed.err.trimmed().count('\n'), 0);
        CliRun unreadable = runMkb({"suite", "table", suite + "/checks/01_vector_add.py", "--suite", suite});
        QCOMPARE(unreadable.exitCode, 3);
        QVERIFY2(unreadable.err.contains("not a report of `mkb suite check --json`"), qPrintable(unreadable.err));
        QCOMPARE(runMkb({"suite", "table"}).exitCode, 2);
    }

    void pooledFlakinessCountsEachGradingsDraws() {
        // "suite check --flakiness pooled: the repeats run as one evaluation; the line, JSON and table say so"
        QStringList args = cpuArgs("checks/01*", "4");
        const QString json = temp.path() + "/pooled.json";
        const QString table = temp.path() + "/pooled.md";
        args << "--flakiness"
             << "pooled"
             << "--json" << json << "--table" << table;
        CliRun run = runMkb(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("; flakiness 4/4 (cpusim, pooled)"), qPrintable(run.out));
        QVERIFY(run.out.contains("4 gradings each, repeats pooled)"));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(jsonFile.readAll()).object();
        QCOMPARE(root["flakiness_mode"].toString(), "pooled");
        QJsonObject flakiness =
            root["problems"].toArray()[0].toObject()["solutions"].toArray()[0].toObject()["flakiness"].toObject();
        QCOMPARE(flakiness["gradings"].toInt(), 4);
        QCOMPARE(flakiness["correct"].toInt(), 4);
        QCOMPARE(flakiness["pooled"].toBool(), true);
        QFile tableFile(table);
        QVERIFY(tableFile.open(QIODevice::ReadOnly));
        QVERIFY(
            QString::fromUtf8(tableFile.readAll())
                .contains("- flakiness: each passing solution's full grading, then 3 correctness-only gradings pooled "
                          "into one evaluation (3 x 5 correctness draws"));
        QVERIFY(runMkb({"suite", "check", "--flakiness", "sometimes"})
                    .err.contains("--flakiness takes separate, pooled or single, not 'sometimes'"));
    }

    void singleFlakinessGradesEachSolutionOnceWithEveryGradingsDraws() {
        // "suite check --flakiness single: each solution is one evaluation of gradings x 5 correctness draws, then
        // its timing; the line, the summary, the JSON and the table say so, and each DSL's flakiness is its own"
        const QString json = temp.path() + "/single.json";
        const QString table = temp.path() + "/single.md";
        QStringList args = twinArgs("single", json, table);
        CliRun run = runMkb(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("; flakiness 3/3 (cpusim, pooled), 3/3 (cpusim_twin, pooled)"), qPrintable(run.out));
        QVERIFY2(run.out.contains("3 gradings each, one evaluation each)"), qPrintable(run.out));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(jsonFile.readAll()).object();
        QCOMPARE(root["flakiness_mode"].toString(), "single");
        const QJsonArray solutions = root["problems"].toArray()[0].toObject()["solutions"].toArray();
        QCOMPARE(solutions.size(), 2);
        for (const QJsonValue& solution : solutions) {
            const QJsonObject verdict = solution.toObject()["verdict"].toObject();
            QCOMPARE(verdict["passed"].toBool(), true);
            QCOMPARE(verdict["total_draws"].toInt(), 15); // 3 gradings x 5 draws in the one evaluation
            QVERIFY(verdict["speedup_vs_eager"].toDouble() > 0);
            const QJsonObject flakiness = solution.toObject()["flakiness"].toObject();
            QCOMPARE(flakiness["dsl"].toString(), solution.toObject()["dsl"].toString());
            QCOMPARE(flakiness["gradings"].toInt(), 3);
            QCOMPARE(flakiness["correct"].toInt(), 3);
        }
        // The first grading names the second's DSL as its "next", so the grader pre-started the second's child for
        // it while the first ran (DESIGN §5.4).
        QCOMPARE(solutions[0].toObject()["prestarted"].toBool(), false);
        QVERIFY2(solutions[1].toObject()["prestarted"].toBool(),
                 "the second DSL's grading found no child pre-started for it");
        QFile tableFile(table);
        QVERIFY(tableFile.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(tableFile.readAll());
        QVERIFY2(text.contains("- flakiness: each solution graded in one evaluation: 3 x 5 correctness draws, each "
                               "with a fresh seed, then the timing"),
                 qPrintable(text));
        QVERIFY(text.contains(
            QRegularExpression("\\| clean; gradings correct: cpusim 3/3, cpusim_twin 3/3" + kEagerMayMove + " \\|")));

        // Resumed under the same mode it is reused; under another it is checked again.
        QStringList resumed = args;
        resumed.replace(resumed.indexOf(json), temp.path() + "/single-again.json");
        resumed << "--resume" << json;
        CliRun again = runMkb(resumed);
        QVERIFY2(again.exitCode == 0 && again.out.contains(": 1 problems reused\n"), qPrintable(again.out + again.err));
        resumed[resumed.indexOf("single")] = "pooled";
        CliRun other = runMkb(resumed);
        QVERIFY2(other.out.contains("0 problems reused; 1 checked again (the DSLs or flakiness settings differ)"),
                 qPrintable(other.out + other.err));
    }

    void singleFlakinessSharesTheRepeatsOfASlowReference() {
        // "suite check --flakiness single on a problem whose eager reference takes 5 ms or more: each solution's
        // grading holds its own 5 draws and its timing; the other gradings' draws are shared by the solutions in one
        // pool; the line, the JSON and the table say so"
        const QString json = temp.path() + "/shared.json";
        const QString table = temp.path() + "/shared.md";
        QStringList args = twinArgs("single", json, table);
        args[3] = src("tests/suite/fixtures/slow_suite");
        args[args.indexOf("checks/01*")] = "checks/05*";
        CliRun run = runMkb(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("; flakiness 3/3 (cpusim, shared), 3/3 (cpusim_twin, shared)"), qPrintable(run.out));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(jsonFile.readAll()).object();
        const QJsonObject problem = root["problems"].toArray()[0].toObject();
        QVERIFY(problem["validation"].toObject()["eager_median_ms"].toDouble() >= mkb::kShareDrawsFromEagerMs);
        for (const QJsonValue& solution : problem["solutions"].toArray()) {
            const QJsonObject verdict = solution.toObject()["verdict"].toObject();
            QCOMPARE(verdict["passed"].toBool(), true);
            QCOMPARE(verdict["total_draws"].toInt(), 5); // its own grading's draws; the other 10 were shared
            const QJsonObject flakiness = solution.toObject()["flakiness"].toObject();
            QCOMPARE(flakiness["gradings"].toInt(), 3);
            QCOMPARE(flakiness["correct"].toInt(), 3);
            QCOMPARE(flakiness["shared_draws"].toBool(), true);
        }
        QFile tableFile(table);
        QVERIFY(tableFile.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(tableFile.readAll());
        QVERIFY2(text.contains("Where the eager reference takes 5 ms or more, each solution's evaluation holds its own "
                               "5 draws and the timing, and the other 2 x 5 draws are shared"),
                 qPrintable(text));

        // Resumed, the shared record is read back as it was written.
        QStringList resumed = args;
        resumed.replace(resumed.indexOf(json), temp.path() + "/shared-again.json");
        resumed << "--resume" << json;
        CliRun again = runMkb(resumed);
        QVERIFY2(again.exitCode == 0 && again.out.contains("3/3 (cpusim_twin, shared)"),
                 qPrintable(again.out + again.err));
    }

    void costlyDrawsShareTheRepeatsOfTheSolutionsAfterTheFirst() {
        // "suite check --flakiness single on a problem whose eager reference is fast but whose draws are costly: the
        // first solution's evaluation runs every grading's draws; when a draw took kShareDrawsFromDrawMs or more
        // there, the solutions after it share their repeats, and the line, the JSON and the table say so"
        const QString json = temp.path() + "/costly.json";
        QStringList args = twinArgs("single", json, temp.path() + "/costly.md");
        args[3] = src("tests/suite/fixtures/slow_suite");
        args[args.indexOf("checks/01*")] = "checks/06*";
        args[5] = "cpusim,cpusim_twin,cpusim_triplet";
        CliRun run = runMkb(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("; flakiness 3/3 (cpusim, pooled), 3/3 (cpusim_twin, shared), 3/3 (cpusim_triplet, "
                                  "shared)"),
                 qPrintable(run.out));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonObject problem =
            QJsonDocument::fromJson(jsonFile.readAll()).object()["problems"].toArray()[0].toObject();
        QVERIFY(problem["validation"].toObject()["eager_median_ms"].toDouble() < mkb::kShareDrawsFromEagerMs);
        for (const QJsonValue& value : problem["solutions"].toArray()) {
            const QJsonObject solution = value.toObject();
            const bool first = solution["dsl"].toString() == "cpusim";
            const QJsonObject verdict = solution["verdict"].toObject();
            QCOMPARE(verdict["passed"].toBool(), true);
            // The first holds all 3 gradings' draws and measured them; the others their own 5, the rest shared.
            QCOMPARE(verdict["total_draws"].toInt(), first ? 15 : 5);
            if (first) {
                const double perDraw = verdict["stage_s"].toObject()["correctness"].toDouble() * 1000.0 / 15;
                QVERIFY2(perDraw >= mkb::kShareDrawsFromDrawMs, qPrintable(QString::number(perDraw)));
            }
            const QJsonObject flakiness = solution["flakiness"].toObject();
            QCOMPARE(flakiness["correct"].toInt(), 3);
            QCOMPARE(flakiness["shared_draws"].toBool(), !first);
        }
    }

    void aPoolThatDiesLeavesEachSolutionRepeatedAlone() {
        // "suite check: when the shared pool does not finish (a solution dies in it), every solution it did not finish
        // is repeated alone, and the records are those of its own repeats"
        const QString json = temp.path() + "/fallback.json";
        QStringList args = twinArgs("single", json, temp.path() + "/fallback.md");
        args[3] = src("tests/suite/fixtures/slow_suite");
        args[args.indexOf("checks/01*")] = "checks/05*";
        CliRun run = runMkb(args, QString::fromStdString(mkbtest::testPython()), {{"MKB_TEST_DIE_IN_POOL", "1"}});
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("; flakiness 3/3 (cpusim, pooled), 3/3 (cpusim_twin, pooled)"), qPrintable(run.out));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(jsonFile.readAll()).object();
        for (const QJsonValue& solution : root["problems"].toArray()[0].toObject()["solutions"].toArray()) {
            const QJsonObject flakiness = solution.toObject()["flakiness"].toObject();
            QCOMPARE(flakiness["correct"].toInt(), 3);
            QVERIFY(!flakiness.contains("shared_draws"));
        }
    }

    void aProblemStartsWithTheDslTheGraderIsWarmFor() {
        // "suite check: a problem's DSLs are checked in reverse when the grader's pre-started child is for the last
        // one, so consecutive problems alternate and each starts where the one before ended"
        const std::vector<std::string> dsls = {"triton", "cuda", "numba", "pallas"};
        QCOMPARE(mkb::checkingOrder(dsls, ""), dsls);
        QCOMPARE(mkb::checkingOrder(dsls, "cuda"), dsls);
        const std::vector<std::string> reversed = {"pallas", "numba", "cuda", "triton"};
        QCOMPARE(mkb::checkingOrder(dsls, "pallas"), reversed);
        QCOMPARE(mkb::checkingOrder(reversed, "triton"), dsls);
        QCOMPARE(mkb::checkingOrder({"triton"}, "triton"), std::vector<std::string>{"triton"});
    }

    void pooledDrawsAreCreditedPerGrading() {
        // "suite check: pooled draws credit grading k only when all of its draws held; an evaluation that did not
        // complete fails every grading"
        mkb::Verdict pooled;
        pooled.compliant = true;
        pooled.totalDraws = 15;
        pooled.correctDraws = 13;
        pooled.failedDraws = {5, 9};
        pooled.mismatch = "draw 6: max |diff| 0.3 > allowance 0.01";
        mkb::FlakinessCheck check;
        check.gradings = 1;
        check.held = 1;
        mkb::creditPooledGradings(pooled, 3, 5, 2, check);
        QCOMPARE(check.gradings, 4);
        QCOMPARE(check.held, 3);
        QCOMPARE(check.failures.size(), size_t(1));
        QCOMPARE(QString::fromStdString(check.failures[0]),
                 "grading 3 (pooled draws 6-10): draw 6: max |diff| 0.3 > allowance 0.01");

        mkb::Verdict died = pooled;
        died.timedOut = true;
        died.failedDraws = {};
        mkb::FlakinessCheck none;
        mkb::creditPooledGradings(died, 3, 5, 2, none);
        QCOMPARE(none.gradings, 3);
        QCOMPARE(none.held, 0);
        QCOMPARE(none.failures.size(), size_t(3));
    }

    void everyPassingSolutionIsRepeated() {
        // "suite check: every passing solution gets its own flakiness repeats, in the line, the JSON, the table and
        // the summary (criterion: every shipped solution 20/20, not one per problem)"
        const QString json = temp.path() + "/twin.json";
        const QString table = temp.path() + "/twin.md";
        QStringList args = twinArgs("pooled", json, table);
        CliRun run = runMkb(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("; flakiness 3/3 (cpusim, pooled), 3/3 (cpusim_twin, pooled)"), qPrintable(run.out));
        QVERIFY2(run.out.contains("flakiness 3/3 on 2/2 solutions"), qPrintable(run.out));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonArray solutions = QJsonDocument::fromJson(jsonFile.readAll())
                                         .object()["problems"]
                                         .toArray()[0]
                                         .toObject()["solutions"]
                                         .toArray();
        QCOMPARE(solutions.size(), 2);
        for (const QJsonValue& solution : solutions) {
            const QJsonObject flakiness = solution.toObject()["flakiness"].toObject();
            QCOMPARE(flakiness["dsl"].toString(), solution.toObject()["dsl"].toString());
            QCOMPARE(flakiness["gradings"].toInt(), 3);
            QCOMPARE(flakiness["correct"].toInt(), 3);
        }
        QFile tableFile(table);
        QVERIFY(tableFile.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(tableFile.readAll())
                    .contains(QRegularExpression("\\| clean; gradings correct: cpusim 3/3, cpusim_twin 3/3" +
                                                 kEagerMayMove + " \\|")));
    }

    void stepsThatCannotRunAreNamedPerStepAndTheRestStillRuns() {
        // "suite check: a step that does not fit the grader's memory and a redraw that breaks its process are each
        // named as 'cannot check X because Y' for that step, and the other steps of those problems still run"
        QTemporaryDir suite;
        QVERIFY(suite.isValid());
        QVERIFY(QDir().mkpath(suite.path() + "/validation"));
        for (const char* name :
             {"41_paged_kv_decode_large_cache.py", "42_context_parallel_gather_breaks_on_redraw.py"}) {
            QVERIFY(
                QFile::copy(src("tests/fixtures/problems/_validation/") + name, suite.path() + "/validation/" + name));
        }
        // 5 MiB: one input set of the 2 MiB caches and a second draw fit, their 8 MiB float64 anchors do not.
        CliRun run = runMkb({"suite", "check", "--suite", suite.path(), "--dsls", "cpusim", "--dsl-dir",
                             src("tests/fixtures/dsls"), "--device", "cpu", "--eager-target-ms", "0", "--gradings", "1",
                             "--json", suite.path() + "/first.json"},
                            QString::fromStdString(mkbtest::testPython()), {{"MKB_GRADER_MEMORY_BYTES", "5242880"}});
        QVERIFY2(run.exitCode == 1, qPrintable(run.out + run.err));
        const QStringList issues = issueLines(run.out);
        QVERIFY2(issues.contains(QRegularExpression(
                     "^validation/41_paged_kv_decode_large_cache: cannot check sensitivity of input 1 \\(k_cache, "
                     "bfloat16\\[256,16,2,64\\]\\) because its float64 anchor needs 8\\.\\d MiB and [0-9.]+ [KM]iB "
                     "are free under MKB_GRADER_MEMORY_BYTES=5242880$")),
                 qPrintable(issues.join('\n')));
        QVERIFY2(issues.contains(QRegularExpression(
                     "^validation/42_context_parallel_gather_breaks_on_redraw: input 2 \\(seq_lens, int32\\[24\\]\\): "
                     "cannot be redrawn alone: reference failed \\(with input 2 redrawn\\): RuntimeError: CUDA "
                     "error: device-side assert triggered .*$")),
                 qPrintable(issues.join('\n')));
        for (const QString& issue : issues) {
            QVERIFY2(!issue.contains("make_inputs failed") && !issue.contains("validation failed"), qPrintable(issue));
        }
        // The large problem is measured and left open, not called insensitive; the gather's later inputs and its
        // eager time come from fresh processes after the broken redraw.
        QVERIFY2(run.out.contains(QRegularExpression(
                     "^ISSUE validation/41_paged_kv_decode_large_cache: deterministic, sensitivity not fully checked "
                     "\\(1/5 inputs, 4 not checked\\), eager [0-9.]+ ms;",
                     QRegularExpression::MultilineOption)),
                 qPrintable(run.out));
        QVERIFY2(run.out.contains(QRegularExpression(
                     "^ISSUE validation/42_context_parallel_gather_breaks_on_redraw: deterministic, NOT sensitive "
                     "\\(3/4 inputs, 1 not checked\\), eager [0-9.]+ ms;",
                     QRegularExpression::MultilineOption)),
                 qPrintable(run.out));
        // With the memory back, --resume checks the problem whose step did not fit again, and reuses the other.
        CliRun resumed = runMkb({"suite", "check", "--suite", suite.path(), "--dsls", "cpusim", "--dsl-dir",
                                 src("tests/fixtures/dsls"), "--device", "cpu", "--eager-target-ms", "0", "--gradings",
                                 "1", "--resume", suite.path() + "/first.json"});
        QVERIFY2(resumed.out.contains("1 problems reused; 1 checked again (a validation step did not fit in memory "
                                      "then)"),
                 qPrintable(resumed.out + resumed.err));
        QVERIFY2(resumed.out.contains("ISSUE validation/41_paged_kv_decode_large_cache: deterministic, sensitive (5/5 "
                                      "inputs), eager "),
                 qPrintable(resumed.out));
    }

    void unknownDslIsOneLinePerProblemAndTheRunGoesOn() {
        // "suite check: a DSL without a descriptor is one line naming problem and DSL; the other DSL is graded"
        QStringList args = cpuArgs("checks/01*", "1");
        args[5] = "cpusim,nosuchdsl";
        CliRun run = runMkb(args);
        QVERIFY2(run.exitCode == 1, qPrintable(run.out + run.err));
        QVERIFY(run.out.contains("ISSUE [nosuchdsl]: unknown DSL 'nosuchdsl'"));
        const QStringList issues = issueLines(run.out);
        QCOMPARE(issues.size(), 1);
        QVERIFY2(issues[0].startsWith("checks/01_vector_add [nosuchdsl]: cannot grade: unknown DSL 'nosuchdsl'"),
                 qPrintable(issues[0]));
        QVERIFY(run.out.contains("cpusim pass"));
        QVERIFY(run.out.contains("flakiness 1/1 (cpusim)"));
    }

    void graderThatCannotStartIsExit5() {
        // "suite check: a grader interpreter that does not exist is one line on stderr and exit 5"
        CliRun run = runMkb(cpuArgs("checks/01*", "1"), "/nonexistent/python3");
        QCOMPARE(run.exitCode, 5);
        QVERIFY2(run.err.contains("the grader did not start"), qPrintable(run.err));
        QCOMPARE(run.err.trimmed().count('\n'), 0);
    }

    void badCommandLines() {
        // "suite: a bad command line is exit 2, an unknown suite or empty selection exit 3, --help exit 0"
        QCOMPARE(runMkb({"suite"}).exitCode, 2);
        QCOMPARE(runMkb({"suite", "frobnicate"}).exitCode, 2);
        QCOMPARE(runMkb({"suite", "check", "--gradings", "many"}).exitCode, 2);
        QCOMPARE(runMkb({"suite", "check", "--device", "gpu0"}).exitCode, 2);
        QCOMPARE(runMkb({"suite", "check", "--suite", "/nonexistent/suite"}).exitCode, 3);
        CliRun none = runMkb(cpuArgs("nothing_matches*", "1"));
        QCOMPARE(none.exitCode, 3);
        QVERIFY(none.err.contains("no problem matched --problems 'nothing_matches*'"));
        CliRun help = runMkb({"suite", "--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("usage: mkb suite check"));
        QVERIFY(help.out.contains("MKB_META[\"insensitive\"]"));
        QVERIFY(help.out.contains("--table FILE"));
    }
};

QTEST_GUILESS_MAIN(SuiteCliTest)
#include "tst_suite_cli.moc"
