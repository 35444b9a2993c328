// `mkb report` and `mkb export` as a user runs them: formats, files, exit codes and one-line errors.
#include "report_fixtures.h"
#include "support/testpaths.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

struct Run {
    int exitCode = -1;
    std::string out;
    std::string err;
};

Run runMkb(const QStringList& args) {
    QProcess process;
    process.start(QString::fromStdString(mkbtest::cliPath()), args);
    if (!process.waitForFinished(60000)) {
        qFatal("mkb did not finish");
    }
    return {process.exitCode(), process.readAllStandardOutput().toStdString(),
            process.readAllStandardError().toStdString()};
}

/// stderr holds exactly one line starting with "mkb: ".
bool oneLineError(const Run& run) {
    return run.err.rfind("mkb: ", 0) == 0 && run.err.find('\n') == run.err.size() - 1;
}

std::string readAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

class TestReportCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString store_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const fs::path path = fs::path(dir_.path().toStdString()) / "fixture.sqlite";
        mkbtest::openFixtureStore(path);
        store_ = QString::fromStdString(path.string());
    }

    void cli_reportPrintsMarkdownByDefault() {
        const Run run = runMkb({"report", "--store", store_, "--model", "m1"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.find("## Speedup ladder") != std::string::npos);
        QVERIFY(run.out.find("| all | base | 4 | 75.0% | 75.0% | 50.0% | 25.0% | 0.0% | 45.0 |") != std::string::npos);
    }

    void cli_reportEveryFormatAndMetricSetWritesTheOutputFile() {
        for (const char* format : {"md", "csv", "latex", "json"}) {
            const QString output = dir_.filePath(QString("report.") + format);
            const Run run = runMkb({"report", "--store", store_, "--metrics", "all", "--split", "direction", "--format",
                                    format, "--output", output});
            QCOMPARE(run.exitCode, 0);
            QVERIFY(run.out.empty());
            const std::string text = readAll(output.toStdString());
            QVERIFY2(!text.empty(), format);
            if (std::string(format) == "json") {
                const nlohmann::json json = nlohmann::json::parse(text);
                QVERIFY(json["tables"].size() >= 12);
            }
            if (std::string(format) == "latex") {
                QVERIFY(text.find("\\toprule") != std::string::npos);
            }
        }
    }

    void cli_reportSettingsFlagsReachTheMetrics() {
        const Run run = runMkb({"report", "--store", store_, "--model", "m1", "--metrics", "ladder", "--thresholds",
                                "0,3", "--delta", "0.1", "--unclipped", "--format", "csv"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.find("group,arm,resolved,R@0,R@3,S,S 95% low,S 95% high\r\n") != std::string::npos);
        QVERIFY(run.out.find("all,skill,4,0.750,0.250,50.0,") != std::string::npos);
    }

    void cli_reportTimingFlagChoosesTheRuleEachOutcomeTableNames() {
        Run run = runMkb({"report", "--store", store_, "--metrics", "transfer", "--timing", "unpaired"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.find("_Timing: unpaired rule (MetaKernelBench, --timing unpaired): ") != std::string::npos);
        run = runMkb({"report", "--store", store_, "--metrics", "transfer", "--format", "json"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.find("\"rule\": \"paired\"") != std::string::npos); // the default
        run = runMkb({"report", "--store", store_, "--timing", "sometimes"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
    }

    void cli_reportBadInputGetsOneLineAndTheDocumentedCode() {
        Run run = runMkb({"report", "--store", store_, "--format", "xml"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        run = runMkb({"report", "--store", store_, "--split", "sideways"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        run = runMkb({"report", "--store", store_, "--metrics", "everything"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        run = runMkb({"report", "--store", store_, "--thresholds", "2,1"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        run = runMkb({"report", "--store", store_, "--delta", "-1"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        run = runMkb({"report", "--store", store_, "--direction", "sideways"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        run = runMkb({"report", "--store", dir_.filePath("missing.sqlite")});
        QCOMPARE(run.exitCode, 4);
        QVERIFY(oneLineError(run));
        QVERIFY(!QFile::exists(dir_.filePath("missing.sqlite")));
        run = runMkb({"report", "--store", store_, "--output", dir_.filePath("no/such/folder/report.md")});
        QCOMPARE(run.exitCode, 3);
        QVERIFY(oneLineError(run));
    }

    void cli_exportResultsJsonForOneModel() {
        const Run run = runMkb({"export", "results-json", "--store", store_, "--model", "m1"});
        QCOMPARE(run.exitCode, 0);
        const nlohmann::json results = nlohmann::json::parse(run.out);
        QCOMPARE(results["model"].get<std::string>(), std::string("m1"));
        QCOMPARE(results["overall"]["base"]["S"].get<double>(), 45.0);
    }

    void cli_exportResultsJsonWithSeveralModelsNeedsAModelOrAFolder() {
        Run run = runMkb({"export", "results-json", "--store", store_});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        const QString folder = dir_.filePath("exported");
        run = runMkb({"export", "results-json", "--store", store_, "--output", folder});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(QFile::exists(folder + "/m1/results.json"));
        QVERIFY(QFile::exists(folder + "/m2/results.json"));
        run = runMkb({"export", "results-json", "--store", store_, "--model", "nobody"});
        QCOMPARE(run.exitCode, 3);
        QVERIFY(oneLineError(run));
    }

    void cli_exportRepairPairsWritesOneJsonObjectPerLine() {
        const QString output = dir_.filePath("pairs.jsonl");
        const Run run = runMkb({"export", "repair-pairs", "--store", store_, "--output", output});
        QCOMPARE(run.exitCode, 0);
        std::istringstream lines(readAll(output.toStdString()));
        std::string line;
        int count = 0;
        while (std::getline(lines, line)) {
            const nlohmann::json pair = nlohmann::json::parse(line);
            QVERIFY(pair.contains("fix_kind"));
            ++count;
        }
        QCOMPARE(count, 2);
    }

    void cli_exportUnknownWhatIsAUsageError() {
        Run run = runMkb({"export", "everything", "--store", store_});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(oneLineError(run));
        run = runMkb({"export", "results-json", "--store", dir_.filePath("missing.sqlite")});
        QCOMPARE(run.exitCode, 4);
        QVERIFY(oneLineError(run));
    }
};

QTEST_GUILESS_MAIN(TestReportCli)
#include "tst_report_cli.moc"
