// The report's direction matrix (--metrics directions) on a four-DSL store: the cells' text and numbers, every
// format, a split by model, two DSLs as 2×2, and `all` left as it was.
#include "core/report/report_directions.h"
#include "core/report/report_model.h"
#include "core/report/report_writers.h"
#include "report_fixtures.h"
#include "support/testpaths.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

using namespace mkb::report;

namespace {

const std::vector<std::string> kDsls{"cuda", "numba", "pallas", "triton"};

void addArm(mkb::Store& store, const std::string& model, int problem, const std::string& arm, const std::string& dsl,
            bool passed, double speedup) {
    mkb::TrialRecord trial;
    trial.model = model;
    trial.suite = "fixture";
    trial.problemNumber = problem;
    trial.problemSlug = "p" + std::to_string(problem);
    trial.family = "attention";
    trial.replicate = 1;
    trial.arm = arm;
    trial.dsl = dsl;
    trial.coordinate = "p0" + std::to_string(problem) + "_r1_" + arm;
    trial.startedAt = "2026-12-03T00:00:00Z";
    trial.status = mkb::TrialStatus::Finished;
    mkb::TrialOutcome outcome;
    outcome.finishedAt = "2026-12-03T00:10:00Z";
    mkb::Verdict verdict;
    verdict.imported = true;
    verdict.compliant = true;
    verdict.correct = passed;
    verdict.passed = passed;
    verdict.speedupVsEager = speedup;
    verdict.stage = passed ? "done" : "correctness";
    verdict.json = R"({"stage": "final"})";
    outcome.verdict = verdict;
    outcome.skillText = "# Skill\nTile by 64.\n";
    auto id = store.insertFinishedTrial(trial, outcome);
    if (!id) {
        qFatal("fixture trial: %s", id.error().message.c_str());
    }
}

/// Model m, DSLs cuda, numba, pallas, triton, problems 1 and 2; every solo passes at 1.0 (R@0, R@0.5, R@1: S 60).
///   pallas → numba  never run: no data
///   triton → cuda   p1 skill 2.0 (helped, lift +20), p2 skill failed (harmed, lift −60): lift −20, 95% CI
///                   [−60, +20] within noise; helped 1, harmed 1 of 2
///   the other ten   skill 2.0 at p1 and p2 (R@2 too: S 80): lift +20 [+20, +20]; helped 2 of 2
/// Model m2: numba → cuda at p1 only, skill 2.0 (helped): overall numba → cuda holds 3 helped of 3.
void fillFourDslStore(mkb::Store& store) {
    for (int problem : {1, 2}) {
        for (const std::string& dsl : kDsls) {
            addArm(store, "m", problem, "solo_" + dsl, dsl, true, 1.0);
        }
        for (const std::string& from : kDsls) {
            for (const std::string& to : kDsls) {
                const std::string direction = from + "2" + to;
                if (from == to || direction == "pallas2numba") {
                    continue;
                }
                const bool harmed = direction == "triton2cuda" && problem == 2;
                addArm(store, "m", problem, direction + "_skill", to, !harmed, harmed ? 0.0 : 2.0);
            }
        }
    }
    addArm(store, "m2", 1, "solo_numba", "numba", true, 1.0);
    addArm(store, "m2", 1, "solo_cuda", "cuda", true, 1.0);
    addArm(store, "m2", 1, "numba2cuda_skill", "cuda", true, 2.0);
}

const ReportTable* tableOf(const Report& report, const std::string& id) {
    for (const ReportTable& table : report.tables) {
        if (table.id == id) {
            return &table;
        }
    }
    return nullptr;
}

/// The matrix cell's text at source row, target column (no group column).
std::string cellText(const ReportTable& matrix, const std::string& source, const std::string& target) {
    const auto column = std::find(matrix.columns.begin(), matrix.columns.end(), target);
    for (const auto& row : matrix.rows) {
        if (row[0].text == source && column != matrix.columns.end()) {
            return row[std::size_t(column - matrix.columns.begin())].text;
        }
    }
    return "<none>";
}

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

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestReportDirections : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<mkb::Store> store_;
    QString storePath_;

    Report build(ReportOptions options) {
        auto report = buildReportFromStore(*store_, options);
        if (!report) {
            qFatal("report: %s", report.error().message.c_str());
        }
        return *report;
    }

    static ReportOptions directionsOnly() {
        ReportOptions options;
        options.metrics = {MetricSet::Directions};
        return options;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const std::filesystem::path path = std::filesystem::path(dir_.path().toStdString()) / "four.sqlite";
        auto store = mkb::Store::open(path);
        QVERIFY(store);
        store_ = std::move(*store);
        fillFourDslStore(*store_);
        storePath_ = QString::fromStdString(path.string());
    }

    // rows source, columns target in id order; the diagonal, the pair without data, the lift within noise
    void directions_matrixCellsShowLiftIntervalAndCounts() {
        const Report report = build(directionsOnly());
        const ReportTable* matrix = tableOf(report, "direction-matrix");
        QVERIFY(matrix);
        QCOMPARE(matrix->columns, (std::vector<std::string>{"source \\ target", "cuda", "numba", "pallas", "triton"}));
        QCOMPARE(matrix->rows.size(), std::size_t(4));
        for (const std::string& dsl : kDsls) {
            QCOMPARE(cellText(*matrix, dsl, dsl), std::string("—"));
        }
        QCOMPARE(cellText(*matrix, "pallas", "numba"), std::string("no data"));
        QCOMPARE(cellText(*matrix, "triton", "cuda"),
                 std::string("-20.0 [-60.0, +20.0] within noise; helped 1, harmed 1 of 2"));
        QCOMPARE(cellText(*matrix, "cuda", "triton"), std::string("+20.0 [+20.0, +20.0]; helped 2, harmed 0 of 2"));
        QCOMPARE(cellText(*matrix, "numba", "cuda"), std::string("+20.0 [+20.0, +20.0]; helped 3, harmed 0 of 3"));
        QVERIFY(matrix->timing && matrix->timing->rule == "paired");
        QCOMPARE(matrix->timing->resolved, std::size_t(23)); // 10 × 2 + 2 + 1
        QCOMPARE(matrix->footnotes.front(), std::string(kDirectionMatrixLine));

        const ReportTable* pairs = tableOf(report, "directions");
        QVERIFY(pairs);
        QCOMPARE(pairs->rows.size(), std::size_t(12));
        const auto column = [&](const std::string& name) {
            return std::size_t(std::find(pairs->columns.begin(), pairs->columns.end(), name) - pairs->columns.begin());
        };
        for (const auto& row : pairs->rows) {
            if (row[0].text == "triton" && row[1].text == "cuda") {
                QCOMPARE(row[column("S lift")].number, -20.0);
                QCOMPARE(row[column("lift 95% low")].number, -60.0);
                QCOMPARE(row[column("lift 95% high")].number, 20.0);
                QCOMPARE(row[column("within noise")].text, std::string("yes"));
                QCOMPARE(row[column("H")].number, 0.5);
                QCOMPARE(row[column("state")].text, std::string("measured"));
            } else if (row[0].text == "pallas" && row[1].text == "numba") {
                QCOMPARE(row[column("cell-replicates")].number, 0.0);
                QCOMPARE(row[column("S lift")].kind, CellKind::Null);
                QCOMPARE(row[column("state")].text, std::string("no data"));
            }
        }
    }

    // the same tables in Markdown, CSV, LaTeX and JSON
    void directions_everyFormatHoldsTheMatrix() {
        const Report report = build(directionsOnly());
        const std::string markdown = toMarkdown(report);
        QVERIFY(contains(markdown, "| source \\ target | cuda | numba | pallas | triton |"));
        QVERIFY(contains(markdown, "| pallas | +20.0 [+20.0, +20.0]; helped 2, harmed 0 of 2 | no data | — |"));
        QVERIFY(contains(markdown, "| triton | -20.0 [-60.0, +20.0] within noise; helped 1, harmed 1 of 2 |"));

        const std::string csv = toCsv(report);
        QVERIFY(contains(csv, "source \\ target,cuda,numba,pallas,triton\r\n"));
        QVERIFY(contains(csv, "pallas,\"+20.0 [+20.0, +20.0]; helped 2, harmed 0 of 2\",no data,—,"));
        QVERIFY(contains(csv, "triton,cuda,2,2,1,0,1,0.500,0.000,0.500,"));

        const std::string latex = toLatex(report);
        QVERIFY(contains(latex, "\\label{tab:mkb-direction-matrix}"));
        QVERIFY(contains(latex, "source \\textbackslash{} target & cuda & numba & pallas & triton \\\\"));
        QVERIFY(contains(latex, "& no data & --- &"));

        const nlohmann::json json = nlohmann::json::parse(toJson(report));
        QCOMPARE(json["tables"][0]["id"].get<std::string>(), std::string("direction-matrix"));
        QCOMPARE(json["tables"][0]["rows"].size(), std::size_t(4));
        QCOMPARE(json["tables"][0]["rows"][2][2].get<std::string>(), std::string("no data")); // pallas → numba
        QCOMPARE(json["tables"][0]["timing"]["rule"].get<std::string>(), std::string("paired"));
        QCOMPARE(json["tables"][1]["id"].get<std::string>(), std::string("directions"));
        QCOMPARE(json["tables"][1]["rows"].size(), std::size_t(12));
    }

    // --split model: one matrix per model over the same DSLs, so they line up; the unpaired rule when asked
    void directions_splitByModelGivesAMatrixPerModel() {
        ReportOptions options = directionsOnly();
        options.split = ReportSplit::Model;
        options.settings.timing = mkb::analysis::TimingRule::Unpaired;
        const Report report = build(options);
        const ReportTable* matrix = tableOf(report, "direction-matrix");
        QVERIFY(matrix);
        QCOMPARE(matrix->columns.front(), std::string("model"));
        QCOMPARE(matrix->rows.size(), std::size_t(8));
        QCOMPARE(matrix->rows[4][0].text, std::string("m2"));
        QCOMPARE(matrix->rows[5][1].text, std::string("numba")); // m2's numba row
        QCOMPARE(matrix->rows[5][2].text, std::string("+20.0 (no CI, 1 cell); helped 1, harmed 0 of 1"));
        QCOMPARE(matrix->rows[5][5].text, std::string("no data")); // numba → triton
        QVERIFY(matrix->title.find("(by model)") != std::string::npos);
        QVERIFY(matrix->timing && matrix->timing->rule == "unpaired");
        QCOMPARE(tableOf(report, "directions")->rows.size(), std::size_t(24));
    }

    // two DSLs give a 2×2 matrix (the report fixture store: triton and cuda)
    void directions_twoDslsGiveTwoByTwo() {
        const auto path = std::filesystem::path(dir_.path().toStdString()) / "two.sqlite";
        const std::unique_ptr<mkb::Store> two = mkbtest::openFixtureStore(path);
        ReportOptions options = directionsOnly();
        options.model = "m1";
        auto report = buildReportFromStore(*two, options);
        QVERIFY(report);
        const ReportTable* matrix = tableOf(*report, "direction-matrix");
        QVERIFY(matrix);
        QCOMPARE(matrix->columns, (std::vector<std::string>{"source \\ target", "cuda", "triton"}));
        QCOMPARE(matrix->rows.size(), std::size_t(2));
        QCOMPARE(cellText(*matrix, "cuda", "cuda"), std::string("—"));
        // P1 harmed (lift −80: base 2.0 attains four thresholds, the skill failed), P2 helped (+60): −10, two cells
        QVERIFY2(cellText(*matrix, "cuda", "triton").rfind("-10.0 [", 0) == 0,
                 cellText(*matrix, "cuda", "triton").c_str());
        QVERIFY(contains(cellText(*matrix, "cuda", "triton"), "; helped 1, harmed 1 of 2"));
        QCOMPARE(tableOf(*report, "directions")->rows.size(), std::size_t(2));
    }

    // `all` holds every set it held before and no direction table; "directions" parses, alone or with all
    void directions_allStaysAsItWas() {
        const auto all = parseMetricSets("all");
        QVERIFY(all);
        QCOMPARE(all->size(), std::size_t(9));
        QVERIFY(std::find(all->begin(), all->end(), MetricSet::Directions) == all->end());
        const auto both = parseMetricSets("directions,all");
        QVERIFY(both);
        QCOMPARE(both->size(), std::size_t(10));
        QCOMPARE(both->back(), MetricSet::Directions);
        QCOMPARE(std::string(toString(MetricSet::Directions)), std::string("directions"));
        ReportOptions options;
        options.metrics = *all;
        const Report report = build(options);
        QVERIFY(!tableOf(report, "direction-matrix") && !tableOf(report, "directions"));
        const auto bad = parseMetricSets("direction");
        QVERIFY(!bad);
        QVERIFY(contains(bad.error().message, "directions"));
    }

    // mkb report --metrics directions in each format, as a user runs it
    void directions_cliPrintsTheMatrixInEveryFormat() {
        for (const char* format : {"md", "csv", "latex", "json"}) {
            const Run run = runMkb({"report", "--store", storePath_, "--metrics", "directions", "--format", format});
            QVERIFY2(run.exitCode == 0, run.err.c_str());
            QVERIFY2(contains(run.out, "no data") && contains(run.out, "within noise"), format);
        }
        const Run help = runMkb({"report", "--help"});
        QVERIFY(contains(help.out, "directions   the direction matrix"));
    }
};

QTEST_GUILESS_MAIN(TestReportDirections)
#include "tst_report_directions.moc"
