// Report tables on the fixture store (report_fixtures.h): hand-checked ladder, coverage, transfer, standing, reverse,
// usage and refinement numbers, splits and filters, and option parsing.
#include "core/analysis/stats.h"
#include "core/io/attempt_loader.h"
#include "core/report/report_model.h"
#include "core/report/report_writers.h"
#include "report_fixtures.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace mkb::report;

namespace {

const ReportTable& tableOf(const Report& report, const std::string& id) {
    for (const ReportTable& table : report.tables) {
        if (table.id == id) {
            return table;
        }
    }
    qFatal("no table %s in the report", id.c_str());
}

/// The row whose leading text cells equal keys.
const std::vector<ReportCell>& rowOf(const ReportTable& table, const std::vector<std::string>& keys) {
    for (const auto& row : table.rows) {
        bool match = true;
        for (std::size_t i = 0; i < keys.size() && match; ++i) {
            match = row[i].kind == CellKind::Text && row[i].text == keys[i];
        }
        if (match) {
            return row;
        }
    }
    qFatal("no row %s in table %s", keys.empty() ? "" : keys[0].c_str(), table.id.c_str());
}

/// The cell under a column name.
const ReportCell& cellOf(const ReportTable& table, const std::vector<ReportCell>& row, const std::string& column) {
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
        if (table.columns[i] == column) {
            return row[i];
        }
    }
    qFatal("no column %s in table %s", column.c_str(), table.id.c_str());
}

double valueOf(const ReportTable& table, const std::vector<std::string>& keys, const std::string& column) {
    const ReportCell& cell = cellOf(table, rowOf(table, keys), column);
    if (cell.kind == CellKind::Null || cell.kind == CellKind::Text) {
        qFatal("cell %s of table %s holds no number", column.c_str(), table.id.c_str());
    }
    return cell.number;
}

bool isNull(const ReportTable& table, const std::vector<std::string>& keys, const std::string& column) {
    return cellOf(table, rowOf(table, keys), column).kind == CellKind::Null;
}

} // namespace

class TestReportTables : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<mkb::Store> store_;

    Report build(ReportOptions options) {
        auto report = buildReportFromStore(*store_, options);
        if (!report) {
            qFatal("report: %s", report.error().message.c_str());
        }
        return std::move(*report);
    }

    ReportOptions m1(std::vector<MetricSet> metrics) {
        ReportOptions options;
        options.model = "m1";
        options.metrics = std::move(metrics);
        return options;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        store_ = mkbtest::openFixtureStore(std::filesystem::path(dir_.path().toStdString()) / "fixture.sqlite");
    }

    // report: read row by row from the store, it equals the report over the trials loaded whole, for every split
    void report_readRowByRowEqualsTheReportOverLoadedTrials() {
        // Two trials that fill no arm: a running one (a replicate of its own) and an archived one.
        mkb::TrialRecord running;
        running.model = "m1";
        running.suite = "fixture";
        running.problemNumber = 1;
        running.problemSlug = "attn";
        running.family = "attention";
        running.replicate = 7;
        running.arm = "triton2cuda_skill";
        running.dsl = "cuda";
        running.coordinate = "p01_r7_triton2cuda_skill";
        QVERIFY(store_->insertTrial(running).ok());
        int checked = 0;
        for (ReportSplit split :
             {ReportSplit::Overall, ReportSplit::Direction, ReportSplit::Family, ReportSplit::WithSkill,
              ReportSplit::SourceVerdict, ReportSplit::Model, ReportSplit::Category}) {
            for (int filter = 0; filter < 3; ++filter) {
                ReportOptions options;
                options.metrics = *parseMetricSets("all");
                options.split = split;
                if (filter == 1) {
                    options.model = "m1";
                } else if (filter == 2) {
                    options.direction = "triton2cuda";
                }
                mkb::TrialFilter trialFilter;
                trialFilter.model = options.model;
                auto trials = store_->loadTrials(trialFilter, mkb::TrialDetail::Metrics, metricColumns(options));
                auto submissions = mkb::io::loadSubmissionSummaries(*store_);
                QVERIFY(trials && submissions);
                const std::string whole =
                    toMarkdown(buildReport(selectTrials(*trials, options), *submissions, options));
                const std::string rowByRow = toMarkdown(build(options));
                QCOMPARE(rowByRow, whole);
                ++checked;
            }
        }
        QCOMPARE(checked, 21);
        auto runningTrials = store_->loadTrials({std::string("m1"), {}, false});
        QVERIFY(runningTrials);
        for (const mkb::TrialRecord& trial : *runningTrials) {
            if (trial.replicate == 7) {
                QVERIFY(store_->archiveTrial(trial.id).ok()); // leave the fixture as the other tests expect it
            }
        }
    }

    void report_overallLadderMatchesTheHandComputedRates() {
        const Report report = build(m1({MetricSet::Ladder}));
        const ReportTable& ladder = tableOf(report, "ladder");
        QCOMPARE(ladder.columns, (std::vector<std::string>{"group", "arm", "resolved", "R@0", "R@0.5", "R@1", "R@2",
                                                           "R@4", "S", "S 95% low", "S 95% high"}));
        QCOMPARE(valueOf(ladder, {"all", "base"}, "resolved"), 4.0);
        QCOMPARE(valueOf(ladder, {"all", "base"}, "R@0"), 0.75);
        QCOMPARE(valueOf(ladder, {"all", "base"}, "R@1"), 0.5);
        QCOMPARE(valueOf(ladder, {"all", "base"}, "R@4"), 0.0);
        QCOMPARE(valueOf(ladder, {"all", "base"}, "S"), 45.0);
        QCOMPARE(valueOf(ladder, {"all", "skill"}, "R@4"), 0.25);
        QCOMPARE(valueOf(ladder, {"all", "skill"}, "S"), 50.0);
        QCOMPARE(valueOf(ladder, {"all", "lift"}, "S"), 5.0);
        QCOMPARE(valueOf(ladder, {"all", "lift"}, "R@4"), 0.25);
        // the bootstrap over the four cells brackets each figure; the lift's bounds have rows of their own
        QVERIFY(valueOf(ladder, {"all", "base"}, "S 95% low") <= 45.0 &&
                45.0 <= valueOf(ladder, {"all", "base"}, "S 95% high"));
        QVERIFY(valueOf(ladder, {"all", "lift 95% low"}, "S") <= 5.0 &&
                5.0 <= valueOf(ladder, {"all", "lift 95% high"}, "S"));
        QCOMPARE(valueOf(ladder, {"all", "lift 95% low"}, "S"), valueOf(ladder, {"all", "lift"}, "S 95% low"));
        QVERIFY(valueOf(ladder, {"all", "lift 95% low"}, "R@4") <= 0.25 &&
                0.25 <= valueOf(ladder, {"all", "lift 95% high"}, "R@4"));
    }

    void report_coverageAndTransferMatchTheHandComputedNumbers() {
        const Report report = build(m1({MetricSet::Coverage, MetricSet::Transfer}));
        const ReportTable& coverage = tableOf(report, "coverage");
        QCOMPARE(valueOf(coverage, {"all"}, "cell-replicates"), 4.0);
        QCOMPARE(valueOf(coverage, {"all"}, "source passed"), 0.75);
        QCOMPARE(valueOf(coverage, {"all"}, "source wrote skill"), 0.75);
        const ReportTable& transfer = tableOf(report, "transfer");
        QCOMPARE(valueOf(transfer, {"all"}, "helped"), 2.0);
        QCOMPARE(valueOf(transfer, {"all"}, "neutral"), 1.0);
        QCOMPARE(valueOf(transfer, {"all"}, "harmed"), 1.0);
        QCOMPARE(valueOf(transfer, {"all"}, "T"), 0.5);
        QCOMPARE(valueOf(transfer, {"all"}, "H"), 0.25);
        QVERIFY(std::fabs(valueOf(transfer, {"all"}, "ΔGM") - (std::pow(3.0, 0.25) - 1.0)) < 1e-12);
    }

    // ΔGM's 95% CI: by direction each group holds two cells, so the bootstrap spans their ratios (cuda2triton r = 1/2
    // and 1.5 → [−50%, +50%]; triton2cuda r = 4 and 1 → [0%, +300%]); overall it is the core's interval of the four
    // ratios; JSON and CSV carry it as the lo/hi columns
    void report_transferCarriesTheDeltaGmInterval() {
        ReportOptions byDirection = m1({MetricSet::Transfer});
        byDirection.split = ReportSplit::Direction;
        const Report report = build(byDirection);
        const ReportTable& transfer = tableOf(report, "transfer");
        QVERIFY(std::fabs(valueOf(transfer, {"cuda2triton"}, "ΔGM CI low") + 0.5) < 1e-12);
        QVERIFY(std::fabs(valueOf(transfer, {"cuda2triton"}, "ΔGM CI high") - 0.5) < 1e-12);
        QVERIFY(std::fabs(valueOf(transfer, {"triton2cuda"}, "ΔGM CI low") - 0.0) < 1e-12);
        QVERIFY(std::fabs(valueOf(transfer, {"triton2cuda"}, "ΔGM CI high") - 3.0) < 1e-12);
        const Report overallReport = build(m1({MetricSet::Transfer}));
        const ReportTable& overall = tableOf(overallReport, "transfer");
        const auto ci = mkb::analysis::geometricMeanBootstrapCi({0.5, 4.0, 1.5, 1.0});
        QVERIFY(ci);
        QCOMPARE(valueOf(overall, {"all"}, "ΔGM CI low"), ci->low - 1);
        QCOMPARE(valueOf(overall, {"all"}, "ΔGM CI high"), ci->high - 1);
        QVERIFY(toCsv(report).find("ΔGM,ΔGM CI low,ΔGM CI high") != std::string::npos);
        const nlohmann::json json = nlohmann::json::parse(toJson(report));
        const nlohmann::json& columns = json["tables"][0]["columns"];
        QCOMPARE(columns[columns.size() - 2].get<std::string>(), std::string("ΔGM CI low"));
        QVERIFY(std::fabs(json["tables"][0]["rows"][0][columns.size() - 2].get<double>() + 0.5) < 1e-9);
    }

    void report_standingAndReverseTablesCountEachComparisonOnce() {
        const Report report = build(m1({MetricSet::Standing, MetricSet::Reverse}));
        const ReportTable& standing = tableOf(report, "standing");
        QCOMPARE(valueOf(standing, {"all", "above"}, "resolved"), 2.0);
        QCOMPARE(valueOf(standing, {"all", "above"}, "helped"), 2.0);
        QCOMPARE(valueOf(standing, {"all", "same"}, "resolved"), 0.0);
        QVERIFY(isNull(standing, {"all", "same"}, "T"));
        QCOMPARE(valueOf(standing, {"all", "below"}, "harmed"), 1.0);
        QCOMPARE(valueOf(standing, {"all", "below"}, "neutral"), 1.0);
        const ReportTable& reverse = tableOf(report, "reverse");
        QCOMPARE(valueOf(reverse, {"all", "helped"}, "comparisons"), 2.0);
        QCOMPARE(valueOf(reverse, {"all", "helped"}, "reverse harmed"), 1.0);
        QCOMPARE(valueOf(reverse, {"all", "helped"}, "reverse neutral"), 1.0);
        QCOMPARE(valueOf(reverse, {"all", "helped"}, "reverse missing"), 0.0);
    }

    void report_usageSumTurnsNullWhenOneCountedRecordLacksIt() {
        const Report report = build(m1({MetricSet::Usage}));
        const ReportTable& usage = tableOf(report, "usage");
        QCOMPARE(valueOf(usage, {"all", "solo_cuda"}, "with usage"), 2.0);
        QCOMPARE(valueOf(usage, {"all", "solo_cuda"}, "input tokens"), 200.0);
        QVERIFY(isNull(usage, {"all", "solo_cuda"}, "cost USD"));
        QCOMPARE(valueOf(usage, {"all", "cuda2triton_skill"}, "attempts"), 2.0);
        QCOMPARE(valueOf(usage, {"all", "cuda2triton_skill"}, "with usage"), 1.0);
        QCOMPARE(valueOf(usage, {"all", "cuda2triton_skill"}, "cost USD"), 0.5);
    }

    // report: arms without a verdict yet are listed in the usage table with zero attempts
    void report_usageListsArmsWithoutAVerdictYet() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto opened = mkb::Store::open(std::filesystem::path(dir.path().toStdString()) / "pending.sqlite");
        QVERIFY(opened.ok());
        mkb::Store& store = **opened;
        mkbtest::addTrial(store, "m3", 1, "attn", "attention", "solo_triton", {true, 2.0});
        mkbtest::addTrial(store, "m3", 1, "attn", "attention", "solo_cuda", {true, 1.0});
        for (const std::string arm : {"triton2cuda_skill", "cuda2triton_skill"}) {
            mkb::TrialRecord running;
            running.model = "m3";
            running.suite = "fixture";
            running.problemNumber = 1;
            running.problemSlug = "attn";
            running.family = "attention";
            running.arm = arm;
            running.dsl = arm == "cuda2triton_skill" ? "triton" : "cuda";
            running.coordinate = "p01_r1_" + arm;
            QVERIFY(store.insertTrial(running).ok()); // status running: no verdict yet
        }
        ReportOptions options;
        options.metrics = {MetricSet::Usage};
        auto report = buildReportFromStore(store, options);
        QVERIFY(report.ok());
        const ReportTable& usage = tableOf(*report, "usage");
        QCOMPARE(usage.rows.size(), std::size_t(4));
        QCOMPARE(valueOf(usage, {"all", "solo_triton"}, "attempts"), 1.0);
        QVERIFY(cellOf(usage, rowOf(usage, {"all", "solo_triton"}), "note").kind == CellKind::Null);
        for (const std::string arm : {"triton2cuda_skill", "cuda2triton_skill"}) {
            QCOMPARE(valueOf(usage, {"all", arm}, "attempts"), 0.0);
            QCOMPARE(valueOf(usage, {"all", arm}, "with usage"), 0.0);
            QVERIFY(isNull(usage, {"all", arm}, "input tokens")); // a sum over no record is null, never 0
            QVERIFY(isNull(usage, {"all", arm}, "cost USD"));
            QCOMPARE(cellOf(usage, rowOf(usage, {"all", arm}), "note").text, std::string("no verdict yet"));
        }
        // Under the direction split a group lists its three arms, the skill arm still pending.
        options.split = ReportSplit::Direction;
        auto byDirection = buildReportFromStore(store, options);
        QVERIFY(byDirection.ok());
        const ReportTable& directed = tableOf(*byDirection, "usage");
        QCOMPARE(directed.rows.size(), std::size_t(6));
        QCOMPARE(valueOf(directed, {"triton2cuda", "solo_cuda"}, "attempts"), 1.0);
        QCOMPARE(valueOf(directed, {"triton2cuda", "triton2cuda_skill"}, "attempts"), 0.0);
        QCOMPARE(cellOf(directed, rowOf(directed, {"triton2cuda", "triton2cuda_skill"}), "note").text,
                 std::string("no verdict yet"));
    }

    void report_refinementReadsSubmissionsAndFindsTwoFixingEdits() {
        const Report report = build(m1({MetricSet::Refinement}));
        const ReportTable& byIndex = tableOf(report, "refinement-index");
        QCOMPARE(byIndex.rows.size(), std::size_t(3));
        QCOMPARE(byIndex.rows[0][2].number, 3.0);                          // three attempts made a first submission
        QVERIFY(std::fabs(byIndex.rows[0][4].number - 1.0 / 3.0) < 1e-12); // one of them correct
        QVERIFY(std::fabs(byIndex.rows[1][4].number - 2.0 / 3.0) < 1e-12);
        const ReportTable& rescue = tableOf(report, "refinement-rescue");
        QCOMPARE(valueOf(rescue, {"all"}, "rescued"), 2.0);
        QCOMPARE(valueOf(rescue, {"all"}, "correct from start"), 1.0);
        QCOMPARE(valueOf(rescue, {"all"}, "rescued share"), 1.0);
        const ReportTable& edits = tableOf(report, "refinement-edits");
        QCOMPARE(valueOf(edits, {"all"}, "fixing edits"), 2.0);
        QCOMPARE(valueOf(edits, {"all"}, "local fixes"), 1.0);
        QCOMPARE(valueOf(edits, {"all"}, "structural rewrites"), 1.0);
    }

    void report_splitByDirectionGivesOneRowGroupPerDirection() {
        ReportOptions options = m1({MetricSet::Ladder});
        options.split = ReportSplit::Direction;
        const Report report = build(options);
        const ReportTable& ladder = tableOf(report, "ladder");
        QCOMPARE(ladder.columns[0], std::string("direction"));
        QCOMPARE(ladder.rows.size(), std::size_t(10)); // two directions × base, skill, lift, lift's low and high
        QCOMPARE(valueOf(ladder, {"cuda2triton", "base"}, "R@0"), 0.5);
        QCOMPARE(valueOf(ladder, {"triton2cuda", "base"}, "R@0"), 1.0);
        QCOMPARE(valueOf(ladder, {"triton2cuda", "skill"}, "R@4"), 0.5);
    }

    void report_splitByModelAndSourceVerdict() {
        ReportOptions options;
        options.split = ReportSplit::Model;
        options.metrics = {MetricSet::Transfer};
        const Report modelReport = build(options);
        const ReportTable& byModel = tableOf(modelReport, "transfer");
        QCOMPARE(valueOf(byModel, {"m1"}, "helped"), 2.0);
        QCOMPARE(valueOf(byModel, {"m2"}, "neutral"), 2.0);
        QCOMPARE(valueOf(byModel, {"m2"}, "T"), 0.0);

        ReportOptions verdict = m1({MetricSet::Ladder});
        verdict.split = ReportSplit::SourceVerdict;
        const Report verdictReport = build(verdict);
        const ReportTable& ladder = tableOf(verdictReport, "ladder");
        QCOMPARE(valueOf(ladder, {"failed", "base"}, "resolved"), 1.0);
        QCOMPARE(valueOf(ladder, {"failed", "base"}, "R@0.5"), 1.0);
        QCOMPARE(valueOf(ladder, {"failed", "base"}, "R@1"), 0.0);
        QCOMPARE(valueOf(ladder, {"passed", "base"}, "resolved"), 3.0);
    }

    void report_filtersKeepOnlyTheChosenFamilyProblemsAndDirection() {
        ReportOptions family = m1({MetricSet::Ladder});
        family.family = "gemm";
        const Report gemmReport = build(family);
        const ReportTable& gemm = tableOf(gemmReport, "ladder");
        QCOMPARE(valueOf(gemm, {"all", "base"}, "resolved"), 2.0);
        QCOMPARE(valueOf(gemm, {"all", "base"}, "S"), 20.0); // base: fail, 0.5 -> R@0 = R@0.5 = 1/2

        ReportOptions problems = m1({MetricSet::Ladder});
        problems.problems = "01_*";
        const Report problemsReport = build(problems);
        QCOMPARE(valueOf(tableOf(problemsReport, "ladder"), {"all", "base"}, "resolved"), 2.0);

        ReportOptions direction = m1({MetricSet::Transfer});
        direction.direction = "triton2cuda";
        const Report directionReport = build(direction);
        const ReportTable& transfer = tableOf(directionReport, "transfer");
        QCOMPARE(valueOf(transfer, {"all"}, "resolved"), 2.0);
        QCOMPARE(valueOf(transfer, {"all"}, "helped"), 1.0);
        QCOMPARE(valueOf(transfer, {"all"}, "neutral"), 1.0);

        ReportOptions nothing = m1({MetricSet::Ladder});
        nothing.family = "no-such-family";
        const Report emptyReport = build(nothing);
        const ReportTable& empty = tableOf(emptyReport, "ladder");
        QCOMPARE(valueOf(empty, {"all", "base"}, "resolved"), 0.0);
        QVERIFY(isNull(empty, {"all", "base"}, "S"));
    }

    void report_settingsChangeTheLadderAndTheOutcomeBand() {
        ReportOptions options = m1({MetricSet::Ladder});
        options.settings.thresholds = {0.0, 3.0};
        const Report report = build(options);
        const ReportTable& ladder = tableOf(report, "ladder");
        QCOMPARE(ladder.columns[4], std::string("R@3"));
        QCOMPARE(valueOf(ladder, {"all", "skill"}, "R@3"), 0.25);
        QCOMPARE(valueOf(ladder, {"all", "skill"}, "S"), 50.0); // (3/4 + 1/4) / 2
    }

    void report_categorySplitGroupsByTheKernelBenchXCategoryTheStoredProblemNames() {
        // Problem 1 names its category in MKB_META; problem 2 names none and is uncategorised.
        mkb::Problem attn;
        attn.suite = "fixture";
        attn.number = 1;
        attn.slug = "attn";
        attn.family = "attention";
        attn.title = "Attention.";
        attn.source = "\"\"\"Attention.\"\"\"\n\nMKB_META = {'category': 'Fusion', 'tags': []}\n";
        attn.fingerprint = "f1";
        mkb::Problem mm = attn;
        mm.number = 2;
        mm.slug = "mm";
        mm.family = "gemm";
        mm.source = "\"\"\"Matmul.\"\"\"\n";
        mm.fingerprint = "f2";
        QVERIFY(store_->upsertProblem(attn).ok());
        QVERIFY(store_->upsertProblem(mm).ok());
        ReportOptions options;
        options.metrics = *parseMetricSets("kbx,ladder");
        options.split = ReportSplit::Category;
        const Report report = build(options);
        const ReportTable& kbx = tableOf(report, "kbx");
        QCOMPARE(kbx.columns[0], std::string("category"));
        // m1's four problem-1 arms and m2's problem-1 arms are Fusion; m1's problem-2 arms are uncategorised.
        QVERIFY(valueOf(kbx, {"Fusion"}, "graded") > 0);
        QVERIFY(valueOf(kbx, {"uncategorised"}, "graded") > 0);
        QCOMPARE(valueOf(kbx, {"Fusion"}, "graded") + valueOf(kbx, {"uncategorised"}, "graded"), 11.0);
        const ReportTable& variance = tableOf(report, "variance");
        QVERIFY(std::find(variance.columns.begin(), variance.columns.end(), "η² category") != variance.columns.end());
        tableOf(report, "ladder"); // comparisons group by category as well
        QVERIFY(parseReportSplit("category").ok());
        QVERIFY(parseReportSplit("sideways").error().message.find("category") != std::string::npos);
    }

    void report_allMetricSetsBuildEveryTable() {
        ReportOptions options;
        options.metrics = *parseMetricSets("all");
        const Report report = build(options);
        for (const char* id : {"ladder", "coverage", "transfer", "standing", "reverse", "usage", "kbx", "variance",
                               "refinement-index", "refinement-rescue", "refinement-edits", "portability"}) {
            tableOf(report, id);
        }
        const ReportTable& kbx = tableOf(report, "kbx");
        QCOMPARE(valueOf(kbx, {"all"}, "graded"), 11.0); // 12 trials, the skipped skill arm is not graded
    }

    void report_optionParsersNameTheBadValueInOneLine() {
        QVERIFY(parseReportSplit("with_skill").ok());
        auto split = parseReportSplit("sideways");
        QVERIFY(!split.ok());
        QVERIFY(split.error().message.find("'sideways'") != std::string::npos);
        auto metrics = parseMetricSets("ladder,bogus");
        QVERIFY(!metrics.ok());
        QVERIFY(metrics.error().message.find("'bogus'") != std::string::npos);
        QCOMPARE(parseMetricSets("transfer,ladder,ladder")->size(), std::size_t(2));
        QCOMPARE(parseThresholds("0, 0.5,1")->size(), std::size_t(3));
        QVERIFY(!parseThresholds("1,0.5").ok());
        QVERIFY(!parseThresholds("0,x").ok());
        QVERIFY(!parseThresholds("-1").ok());
    }
};

QTEST_GUILESS_MAIN(TestReportTables)
#include "tst_report_tables.moc"
