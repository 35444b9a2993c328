// Tests of `mkb problems list|show|validate` through the built binary: output, exit codes, one-line errors.
#include "catalog/fixture_suite.h"
#include "support/testpaths.h"

#include "core/catalog/catalog.h"

#include <QProcess>
#include <QtTest>

#include <nlohmann/json.hpp>

using mkbtest::FixtureSuite;
using mkbtest::problemText;

namespace {

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

CliRun runMkb(const QStringList& arguments) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("MKB_DATA_DIR", QString::fromStdString(mkbtest::sourceDir().string()));
    process.setProcessEnvironment(environment);
    process.start(QString::fromStdString(mkbtest::cliPath()), arguments);
    if (!process.waitForFinished(60000)) {
        return {};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2,
            QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError())};
}

QString suiteArg(const FixtureSuite& suite) {
    return QString::fromStdString(suite.root().string());
}

} // namespace

class CliProblemsTest : public QObject {
    Q_OBJECT
private slots:
    void listShowsTheShippedProblems() {
        CliRun run = runMkb({"problems", "list"});
        QCOMPARE(run.exitCode, 0);
        for (const char* expected :
             {"attention", "gqa_decode_attention", "kv_cache", "mlp_norm", "moe", "quantization", "linear_attention"}) {
            QVERIFY2(run.out.contains(expected), expected);
        }
        // The count comes from the catalog, so the test holds whatever the size of the shipped suite.
        const mkb::Catalog catalog = mkb::loadCatalog({mkbtest::sourceDir() / "problems"});
        const QString count = QString("\n%1 problem(s)").arg(catalog.problems.size());
        QVERIFY2(run.out.contains(count), qPrintable(run.out.right(200)));
    }

    void listShowsSolutionStatusAndFilters() {
        FixtureSuite suite;
        suite.write("attention/01_decode.py", problemText("Decode.", "MKB_META = {'tags': ['reduction']}\n"));
        suite.write("attention/_solutions/01_decode.triton.py", "x");
        suite.write("attention/_solutions/01_decode.cuda.py", "x");
        suite.write("moe/02_router.py", problemText("Router."));
        CliRun run = runMkb({"problems", "list", "--suite", suiteArg(suite)});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.contains(QRegularExpression("01 +attention +decode +cuda,triton +reduction +Decode\\.")));
        QVERIFY(run.out.contains(QRegularExpression("02 +moe +router +- ")));
        CliRun filtered = runMkb({"problems", "list", "--suite", suiteArg(suite), "--family", "moe", "--json"});
        QCOMPARE(filtered.exitCode, 0);
        auto json = nlohmann::json::parse(filtered.out.toStdString());
        QCOMPARE(json["problems"].size(), std::size_t(1));
        QCOMPARE(json["problems"][0]["name"].get<std::string>(), std::string("moe/02_router"));
        QCOMPARE(json["problems"][0]["solutions"].size(), std::size_t(0));
    }

    void listShowAndValidateGiveTheReasonsADslHasNoSolution() {
        FixtureSuite suite;
        suite.write("moe/01_scatter.py",
                    problemText("Scatter.", "MKB_META = {'no_solution': {'pallas': 'needs an atomic scatter-add'}}\n"));
        suite.write("moe/_solutions/01_scatter.triton.py", "x");
        CliRun list = runMkb({"problems", "list", "--suite", suiteArg(suite)});
        QCOMPARE(list.exitCode, 0);
        QVERIFY2(list.out.contains(QRegularExpression("01 +moe +scatter +triton; none: pallas +Scatter\\.")),
                 qPrintable(list.out));
        CliRun show = runMkb({"problems", "show", "1", "--suite", suiteArg(suite)});
        QCOMPARE(show.exitCode, 0);
        QVERIFY2(show.out.contains("no pallas solution: needs an atomic scatter-add\n"), qPrintable(show.out));
        CliRun json = runMkb({"problems", "list", "--suite", suiteArg(suite), "--json"});
        auto parsed = nlohmann::json::parse(json.out.toStdString());
        QCOMPARE(parsed["problems"][0]["no_solution"]["pallas"].get<std::string>(),
                 std::string("needs an atomic scatter-add"));
        CliRun validate = runMkb({"problems", "validate", suiteArg(suite)});
        QCOMPARE(validate.exitCode, 0);
        QVERIFY2(validate.out.contains("note: moe/01_scatter: no pallas solution: needs an atomic scatter-add\n"),
                 qPrintable(validate.out));
    }

    void listOfMissingSuiteIsOneLine() {
        CliRun run = runMkb({"problems", "list", "--suite", "/nonexistent/suite"});
        QCOMPARE(run.exitCode, 3);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY(run.err.contains("/nonexistent/suite"));
    }

    void showPrintsMetadataAndSource() {
        CliRun run = runMkb({"problems", "show", "p05"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.contains("quantization/05_"));
        QVERIFY(run.out.contains("fingerprint:"));
        QVERIFY(run.out.contains("min_cosine"));
        QVERIFY(run.out.contains("def reference("));
        CliRun json = runMkb({"problems", "show", "attention/01_gqa_decode_attention", "--json"});
        QCOMPARE(json.exitCode, 0);
        auto parsed = nlohmann::json::parse(json.out.toStdString());
        QCOMPARE(parsed["number"].get<int>(), 1);
        QVERIFY(parsed["source"].get<std::string>().find("def make_inputs(") != std::string::npos);
        QCOMPARE(parsed["fingerprint"].get<std::string>().size(), std::size_t(64));
    }

    void showOfUnknownProblemIsOneLine() {
        CliRun run = runMkb({"problems", "show", "99"});
        QCOMPARE(run.exitCode, 3);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY(run.err.contains("unknown problem '99'"));
        QVERIFY(run.out.isEmpty());
        CliRun none = runMkb({"problems", "show"});
        QCOMPARE(none.exitCode, 2);
        QCOMPARE(none.err.count('\n'), 1);
    }

    void validateReportsEachIssueAndFails() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        suite.write("attention/02_Bad.py", problemText());
        suite.write("moe/03_no_ref.py", "\"\"\"T.\"\"\"\ndef make_inputs(device='cuda'):\n    return []\n");
        suite.write("moe/04_meta.py", problemText("T.", "MKB_META = {'tags': __import__('os')}\n"));
        CliRun run = runMkb({"problems", "validate", suiteArg(suite)});
        QCOMPARE(run.exitCode, 1);
        QStringList lines = run.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 4); // three issues and the summary
        QVERIFY(lines[0].contains("02_Bad.py: bad file name"));
        QVERIFY(lines.join('\n').contains("03_no_ref.py: missing `def reference(`"));
        QVERIFY(lines.join('\n').contains("04_meta.py: MKB_META line 5: call of '__import__(...)'"));
        QVERIFY(lines.last().contains("1 valid problem(s), 3 issue(s)"));
    }

    void validateOfCleanSuitePasses() {
        CliRun run =
            runMkb({"problems", "validate", QString::fromStdString((mkbtest::sourceDir() / "problems").string())});
        QCOMPARE(run.exitCode, 0);
        // The count comes from the catalog, so the test holds whatever the size of the shipped suite.
        const mkb::Catalog catalog = mkb::loadCatalog({mkbtest::sourceDir() / "problems"});
        QVERIFY(catalog.problems.size() >= 6);
        const QString summary = QString("%1 valid problem(s), 0 issue(s)").arg(catalog.problems.size());
        QVERIFY2(run.out.contains(summary), qPrintable(run.out));
    }

    void validateOfMissingFolderIsOneLine() {
        CliRun run = runMkb({"problems", "validate", "/nonexistent/problems"});
        QCOMPARE(run.exitCode, 3);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY(run.err.startsWith("mkb: "));
    }

    void badCommandLinesAreUsageErrors() {
        QCOMPARE(runMkb({"problems"}).exitCode, 2);
        QCOMPARE(runMkb({"problems", "frobnicate"}).exitCode, 2);
        CliRun unknownOption = runMkb({"problems", "list", "--colour"});
        QCOMPARE(unknownOption.exitCode, 2);
        QCOMPARE(unknownOption.err.count('\n'), 1);
    }

    void helpDescribesEachAction() {
        for (const QStringList& arguments :
             {QStringList{"problems", "--help"}, QStringList{"problems", "list", "--help"},
              QStringList{"problems", "show", "--help"}, QStringList{"problems", "validate", "--help"}}) {
            CliRun run = runMkb(arguments);
            QCOMPARE(run.exitCode, 0);
            QVERIFY(run.out.contains("mkb problems validate DIR"));
            QVERIFY(run.out.contains("exit codes"));
        }
    }
};

QTEST_GUILESS_MAIN(CliProblemsTest)
#include "tst_cli_problems.moc"
