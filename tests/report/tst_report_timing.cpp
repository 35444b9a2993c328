// The report's timing rule (DESIGN §8) on the fixture store with a paired re-timing: --timing paired judges a re-timed
// cell on its ratio and CI, --timing unpaired keeps MetaKernelBench's outcome, and every outcome table says which
// rule it used and on how many re-timed cells, in Markdown, CSV, LaTeX and JSON.
#include "core/io/mkb_results_export.h"
#include "core/report/report_model.h"
#include "core/report/report_writers.h"
#include "report_fixtures.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <tuple>

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

double cellOf(const ReportTable& table, const std::string& column) {
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
        if (table.columns[i] == column) {
            return table.rows.at(0).at(i).number;
        }
    }
    qFatal("no column %s in table %s", column.c_str(), table.id.c_str());
}

/// The live trial id of m1's problem 1 in arm.
std::int64_t trialId(mkb::Store& store, const std::string& arm) {
    auto trials = store.loadTrials({}, mkb::TrialDetail::Lean);
    if (!trials) {
        qFatal("trials: %s", trials.error().message.c_str());
    }
    for (const mkb::TrialRecord& trial : *trials) {
        if (trial.model == "m1" && trial.problemNumber == 1 && trial.arm == arm) {
            return trial.id;
        }
    }
    qFatal("no trial in arm %s", arm.c_str());
}

mkb::RetimedPair pair(const std::string& a, const std::string& b, double ratio, double low, double high) {
    mkb::RetimedPair result;
    result.a = a;
    result.b = b;
    result.ratio = ratio;
    result.ciLow = low;
    result.ciHigh = high;
    result.n = 200;
    return result;
}

/// A re-timing of m1's P1 triton2cuda cell (source solo_triton 2.0, base solo_cuda 1.0, skill 4.0: helped by tiers
/// and by ratio in the unpaired rule) whose paired ratio skill/base is 1.01 with CI [0.98, 1.04]: within noise.
mkb::RetimingRecord p1Retiming(std::int64_t source, std::int64_t base, std::int64_t skill) {
    mkb::RetimingRecord record;
    record.model = "m1";
    record.suite = "fixture";
    record.problemNumber = 1;
    record.replicate = 1;
    record.sourceDsl = "triton";
    record.targetDsl = "cuda";
    record.sourceTrialId = source;
    record.baseTrialId = base;
    record.skillTrialId = skill;
    record.createdAt = "2026-12-01T00:00:00Z";
    mkb::RetimingResult& result = record.result;
    result.ok = true;
    result.device = "cpu";
    result.deviceName = "cpu";
    result.graderFingerprint = "fixture";
    result.rounds = 200;
    result.stop = "converged";
    for (const char* label : {"source", "base", "skill"}) {
        result.kernels.push_back(mkb::RetimedKernel{label, "cuda", std::string(64, 'a'), 0.001, std::nullopt});
    }
    result.pairs = {pair("source", "base", 0.98, 0.96, 1.0), pair("base", "skill", 1.01, 0.98, 1.04)};
    return record;
}

} // namespace

class TestReportTiming : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<mkb::Store> store_;

    Report build(mkb::analysis::TimingRule rule) {
        ReportOptions options;
        options.model = "m1";
        options.metrics = {MetricSet::Transfer, MetricSet::Standing, MetricSet::Reverse};
        options.settings.timing = rule;
        auto report = buildReportFromStore(*store_, options);
        if (!report) {
            qFatal("report: %s", report.error().message.c_str());
        }
        return std::move(*report);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        store_ = mkbtest::openFixtureStore(std::filesystem::path(dir_.path().toStdString()) / "fixture.sqlite");
        const std::int64_t source = trialId(*store_, "solo_triton");
        const std::int64_t base = trialId(*store_, "solo_cuda");
        const std::int64_t skill = trialId(*store_, "triton2cuda_skill");
        // A stale record first (it names another trial as the skill), archived by the live one that follows.
        QVERIFY(store_->insertRetiming(p1Retiming(source, base, trialId(*store_, "cuda2triton_skill"))).ok());
        QVERIFY(store_->insertRetiming(p1Retiming(source, base, skill)).ok());
    }

    // paired: the re-timed helped cell turns neutral within noise; the unpaired rule still calls it helped
    void timing_pairedRuleJudgesTheRetimedCellOnItsRatio() {
        const Report pairedReport = build(mkb::analysis::TimingRule::Paired);
        const ReportTable& paired = tableOf(pairedReport, "transfer");
        QCOMPARE(cellOf(paired, "helped"), 1.0); // P2 cuda2triton (pass/fail) only
        QCOMPARE(cellOf(paired, "neutral"), 2.0);
        QCOMPARE(cellOf(paired, "harmed"), 1.0);
        const Report unpairedReport = build(mkb::analysis::TimingRule::Unpaired);
        const ReportTable& unpaired = tableOf(unpairedReport, "transfer");
        QCOMPARE(cellOf(unpaired, "helped"), 2.0);
        QCOMPARE(cellOf(unpaired, "neutral"), 1.0);
        // ΔGM: the paired r = 1.01 replaces 4: (1/2 · 1.01 · 1.5 · 1)^(1/4) − 1
        QVERIFY(std::fabs(cellOf(paired, "ΔGM") - (std::pow(0.5 * 1.01 * 1.5, 0.25) - 1.0)) < 1e-12);
    }

    // every outcome table says its rule and counts the re-timed cells
    void timing_everyOutcomeTableSaysItsRule() {
        const Report report = build(mkb::analysis::TimingRule::Paired);
        for (const char* id : {"transfer", "standing", "reverse"}) {
            const ReportTable& table = tableOf(report, id);
            QVERIFY2(table.timing, id);
            QCOMPARE(table.timing->rule, std::string("paired"));
            QCOMPARE(table.timing->resolved, std::size_t(4));
            QCOMPARE(table.timing->withRetiming, std::size_t(1));
            QCOMPARE(table.timing->paired, std::size_t(1));
            QCOMPARE(table.timing->withinNoise, std::size_t(1));
            QCOMPARE(table.timing->fellBack, std::size_t(0)); // the other cells differ in pass/fail or are skipped
            // transfer adds the ΔGM CI's line after the rule line
            QCOMPARE(table.footnotes.size(), std::size_t(std::string(id) == "transfer" ? 2 : 1));
        }
        QCOMPARE(tableOf(report, "transfer").footnotes[0],
                 std::string("Timing: paired rule (docs/metrics.md, \"With paired re-timing\"): 4 resolved "
                             "comparisons, 1 with a paired re-timing; 1 judged by it (1 within noise), 0 fell back to "
                             "the unpaired rule for want of one."));
        const Report plain = build(mkb::analysis::TimingRule::Unpaired);
        QCOMPARE(tableOf(plain, "transfer").footnotes[0],
                 std::string("Timing: unpaired rule (MetaKernelBench, --timing unpaired): 4 resolved comparisons, 1 "
                             "with a paired re-timing (not used)."));
    }

    // standing: the paired source/base ratio 0.98 [0.96, 1.0] is within noise, so the source stands level with base
    void timing_standingUsesTheSourceBasePair() {
        const Report pairedReport = build(mkb::analysis::TimingRule::Paired);
        const Report unpairedReport = build(mkb::analysis::TimingRule::Unpaired);
        const ReportTable& paired = tableOf(pairedReport, "standing");
        const ReportTable& unpaired = tableOf(unpairedReport, "standing");
        auto resolvedIn = [](const ReportTable& table, const std::string& standing) {
            for (const auto& row : table.rows) {
                if (row[1].text == standing) {
                    return row[2].number;
                }
            }
            return -1.0;
        };
        QCOMPARE(resolvedIn(unpaired, "above"), 2.0);
        QCOMPARE(resolvedIn(paired, "above"), 1.0);
        QCOMPARE(resolvedIn(paired, "same"), 1.0);
    }

    // the rule line appears under the table in every format, and JSON carries it as a field
    void timing_ruleLineInEveryFormat() {
        const Report report = build(mkb::analysis::TimingRule::Paired);
        QVERIFY(toMarkdown(report).find("\n_Timing: paired rule (docs/metrics.md, \"With paired re-timing\"): 4 "
                                        "resolved") != std::string::npos);
        QVERIFY(toCsv(report).find("\r\n\"Timing: paired rule (docs/metrics.md, \"\"With paired re-timing\"\"): 4 "
                                   "resolved") != std::string::npos); // quoted: it holds commas
        QVERIFY(toLatex(report).find("\\end{tabular}\n\\par\\smallskip{\\footnotesize Timing: paired rule "
                                     "(docs/metrics.md,") != std::string::npos);
        const nlohmann::json json = nlohmann::json::parse(toJson(report));
        const nlohmann::json& timing = json["tables"][0]["timing"];
        QCOMPARE(timing["rule"].get<std::string>(), std::string("paired"));
        QCOMPARE(timing["with_retiming"].get<int>(), 1);
        QCOMPARE(timing["judged_paired"].get<int>(), 1);
        QCOMPARE(timing["within_noise"].get<int>(), 1);
        QCOMPARE(timing["fell_back"].get<int>(), 0);
    }

    // the ladder says which rule ranked it (paired: how many cells were ranked on a re-timing, how many fell back,
    // the ties) and what its intervals are; coverage uses no timing rule and carries no line; neither is an
    // outcome table, so neither has a "timing" object
    void timing_ladderSaysWhichRuleRankedIt() {
        ReportOptions options;
        options.metrics = {MetricSet::Ladder, MetricSet::Coverage};
        auto report = buildReportFromStore(*store_, options);
        QVERIFY(report.ok());
        const ReportTable& ladder = tableOf(*report, "ladder");
        QCOMPARE(ladder.footnotes.size(), std::size_t(2));
        QVERIFY2(ladder.footnotes[0].rfind("Ladder: paired rule (docs/metrics.md, \"Paired ladder\"): ", 0) == 0,
                 ladder.footnotes[0].c_str());
        QVERIFY2(ladder.footnotes[0].find(" resolved cells ranked on one re-timing of both arms, ") !=
                         std::string::npos &&
                     ladder.footnotes[0].find("; ties (a crossing of t within noise, lifting nothing): R@0 0, ") !=
                         std::string::npos,
                 ladder.footnotes[0].c_str());
        QCOMPARE(ladder.footnotes[1], std::string(kLadderIntervalLine));
        QVERIFY(tableOf(*report, "coverage").footnotes.empty());
        QVERIFY(toJson(*report).find("\"timing\"") == std::string::npos);
        options.settings.timing = mkb::analysis::TimingRule::Unpaired;
        auto plain = buildReportFromStore(*store_, options);
        QVERIFY(plain.ok());
        const std::string unpairedLine = tableOf(*plain, "ladder").footnotes[0];
        QVERIFY2(unpairedLine.rfind("Ladder: unpaired rule (MetaKernelBench's ladder, --timing unpaired): each arm "
                                    "ranked on its own grading's speedup, ",
                                    0) == 0,
                 unpairedLine.c_str());
    }

    // ladder: with speedup CIs in the verdicts, a line counts the attempts whose CI straddles each t
    void timing_ladderCountsBorderlineAttempts() {
        std::vector<mkb::TrialRecord> trials;
        auto add = [&](std::int64_t id, const std::string& arm, const std::string& dsl, double speedup,
                       std::optional<double> low, std::optional<double> high) {
            mkb::TrialRecord trial;
            trial.id = id;
            trial.model = "m";
            trial.problemNumber = 1;
            trial.problemSlug = "p";
            trial.family = "f";
            trial.arm = arm;
            trial.dsl = dsl;
            trial.status = mkb::TrialStatus::Finished;
            mkb::Verdict verdict;
            verdict.imported = verdict.compliant = verdict.correct = verdict.passed = true;
            verdict.speedupVsEager = speedup;
            verdict.speedupCiLow = low;
            verdict.speedupCiHigh = high;
            trial.finalVerdict = verdict;
            trial.skillText = "# Skill\n";
            trials.push_back(trial);
        };
        add(1, "solo_triton", "triton", 3.0, 2.5, 3.5);
        add(2, "solo_cuda", "cuda", 1.05, 0.95, 1.15);      // base: R@1 borderline
        add(3, "triton2cuda_skill", "cuda", 2.1, 1.9, 2.3); // skill: R@2 borderline
        ReportOptions options;
        options.metrics = {MetricSet::Ladder};
        const Report report = buildReport(trials, {}, options);
        const ReportTable& ladder = tableOf(report, "ladder");
        QCOMPARE(ladder.footnotes.size(), std::size_t(3)); // the rule, the intervals, the borderline counts
        QCOMPARE(ladder.footnotes[2],
                 std::string("Borderline (passed, speedup 95% CI contains t; 2 base and skill attempts carry a CI): "
                             "base R@0 0, R@0.5 0, R@1 1, R@2 0, R@4 0; skill R@0 0, R@0.5 0, R@1 0, R@2 1, R@4 0."));
        QVERIFY(!ladder.timing);
    }

    // without re-timings both rules give the same report, line for line, except the rule lines
    void timing_storeWithoutRetimingsGivesTheSameNumbersUnderBothRules() {
        QTemporaryDir plainDir;
        auto plain = mkbtest::openFixtureStore(std::filesystem::path(plainDir.path().toStdString()) / "plain.sqlite");
        ReportOptions options;
        options.metrics = {MetricSet::Ladder, MetricSet::Coverage, MetricSet::Transfer, MetricSet::Standing,
                           MetricSet::Reverse};
        auto paired = buildReportFromStore(*plain, options);
        options.settings.timing = mkb::analysis::TimingRule::Unpaired;
        auto unpaired = buildReportFromStore(*plain, options);
        QVERIFY(paired.ok() && unpaired.ok());
        auto withoutRuleLines = [](const std::string& markdown) {
            std::string kept;
            std::size_t start = 0;
            while (start < markdown.size()) {
                std::size_t end = markdown.find('\n', start);
                end = end == std::string::npos ? markdown.size() : end + 1;
                const std::string line = markdown.substr(start, end - start);
                if (line.rfind("_Timing: ", 0) != 0 && line.rfind("_Ladder: ", 0) != 0) {
                    kept += line;
                }
                start = end;
            }
            return kept;
        };
        const std::string pairedText = toMarkdown(*paired);
        const std::string unpairedText = toMarkdown(*unpaired);
        QVERIFY(pairedText != unpairedText); // the rule lines differ
        QCOMPARE(withoutRuleLines(pairedText), withoutRuleLines(unpairedText));
        QVERIFY(pairedText.find("0 with a paired re-timing; 0 judged by it (0 within noise)") != std::string::npos);
    }

    // results.json ranks its ladders as the report does: with the live re-timings attached under the paired rule, and
    // it says so. P1 triton2cuda is re-timed with eager (base 1.5x, skill 1.515x: the unpaired skill 4.0x no longer
    // reaches R@2 and R@4), so the paired lift differs from the unpaired one, and each export's S lift is the
    // report's own under the same rule.
    void timing_resultsJsonUsesTheRuleAndSaysSo() {
        QTemporaryDir exportDir;
        auto store = mkbtest::openFixtureStore(std::filesystem::path(exportDir.path().toStdString()) / "x.sqlite");
        mkb::RetimingRecord record = p1Retiming(trialId(*store, "solo_triton"), trialId(*store, "solo_cuda"),
                                                trialId(*store, "triton2cuda_skill"));
        record.result.kernels.push_back(
            mkb::RetimedKernel{"eager", "torch", std::string(64, 'e'), 0.002, std::nullopt});
        record.result.pairs.push_back(pair("eager", "source", 2.0, 1.95, 2.05));
        record.result.pairs.push_back(pair("eager", "base", 1.5, 1.45, 1.55));
        record.result.pairs.push_back(pair("eager", "skill", 1.515, 1.46, 1.57));
        QVERIFY(store->insertRetiming(record).ok());
        auto reportLift = [&](mkb::analysis::TimingRule rule) {
            ReportOptions options;
            options.model = "m1";
            options.metrics = {MetricSet::Ladder};
            options.settings.timing = rule;
            auto report = buildReportFromStore(*store, options);
            if (!report) {
                qFatal("report: %s", report.error().message.c_str());
            }
            const ReportTable& ladder = tableOf(*report, "ladder");
            const auto column = [&ladder](const std::string& name) {
                const auto found = std::find(ladder.columns.begin(), ladder.columns.end(), name);
                if (found == ladder.columns.end()) {
                    qFatal("no column %s in the ladder", name.c_str());
                }
                return std::size_t(found - ladder.columns.begin());
            };
            for (const auto& row : ladder.rows) {
                if (row.at(column("arm")).text == "lift") {
                    return row.at(column("S")).number;
                }
            }
            qFatal("no lift S in the ladder");
        };
        mkb::analysis::AnalysisSettings settings;
        auto paired = mkb::exportMetaKernelBenchResults(*store, "m1", settings);
        settings.timing = mkb::analysis::TimingRule::Unpaired;
        auto unpaired = mkb::exportMetaKernelBenchResults(*store, "m1", settings);
        QVERIFY(paired.ok() && unpaired.ok());
        QCOMPARE((*paired)["timing"]["rule"].get<std::string>(), std::string("paired"));
        QCOMPARE((*paired)["timing"]["n_paired_cells"].get<int>(), 1);
        QCOMPARE((*unpaired)["timing"]["rule"].get<std::string>(), std::string("unpaired"));
        QCOMPARE((*unpaired)["timing"]["n_paired_cells"].get<int>(), 0);
        const double pairedLift = (*paired)["overall"]["lift"]["S"].get<double>();
        const double unpairedLift = (*unpaired)["overall"]["lift"]["S"].get<double>();
        QVERIFY2(pairedLift != unpairedLift, qPrintable(QString::number(pairedLift)));
        QCOMPARE(pairedLift, reportLift(mkb::analysis::TimingRule::Paired));
        QCOMPARE(unpairedLift, reportLift(mkb::analysis::TimingRule::Unpaired));
        QVERIFY((*paired)["legend"].contains("timing"));
    }

    // ladder from a store: the speedup CIs come back with the stored verdicts (their columns)
    void timing_ladderBorderlineFromTheStoredVerdicts() {
        QTemporaryDir ciDir;
        auto opened = mkb::Store::open(std::filesystem::path(ciDir.path().toStdString()) / "ci.sqlite");
        QVERIFY(opened.ok());
        mkb::Store& store = **opened;
        for (const auto& [arm, dsl, json] :
             {std::tuple{"solo_triton", "triton", R"({"speedup_ci_low": 2.5, "speedup_ci_high": 3.5})"},
              std::tuple{"solo_cuda", "cuda", R"({"speedup_ci_low": 0.95, "speedup_ci_high": 1.15})"},
              std::tuple{"triton2cuda_skill", "cuda", R"({"stage": "done"})"}}) {
            mkb::TrialRecord trial;
            trial.model = "m";
            trial.suite = "fixture";
            trial.problemNumber = 1;
            trial.problemSlug = "p";
            trial.family = "f";
            trial.replicate = 1;
            trial.arm = arm;
            trial.dsl = dsl;
            trial.coordinate = std::string("p01_r1_") + arm;
            trial.startedAt = "2026-12-01T00:00:00Z";
            trial.status = mkb::TrialStatus::Finished;
            mkb::TrialOutcome outcome;
            outcome.finishedAt = "2026-12-01T00:10:00Z";
            mkb::Verdict verdict;
            verdict.imported = verdict.compliant = verdict.correct = verdict.passed = true;
            verdict.speedupVsEager = 1.05;
            verdict.stage = "done";
            verdict.json = json;
            if (const auto parsed = nlohmann::json::parse(json); parsed.contains("speedup_ci_low")) {
                verdict.speedupCiLow = parsed["speedup_ci_low"].get<double>(); // as the grader's verdict carries them
                verdict.speedupCiHigh = parsed["speedup_ci_high"].get<double>();
            }
            outcome.verdict = verdict;
            outcome.skillText = "# Skill\n";
            QVERIFY(store.insertFinishedTrial(trial, outcome).ok());
        }
        ReportOptions options;
        options.metrics = {MetricSet::Ladder};
        auto report = buildReportFromStore(store, options);
        QVERIFY(report.ok());
        const ReportTable& ladder = tableOf(*report, "ladder");
        QCOMPARE(ladder.footnotes.size(), std::size_t(3));
        QVERIFY2(ladder.footnotes[2].find("1 base and skill attempts carry a CI): base R@0 0, R@0.5 0, R@1 1,") !=
                     std::string::npos,
                 ladder.footnotes[2].c_str());
    }

    void timing_parseTimingRuleNamesTheBadValue() {
        QVERIFY(*parseTimingRule("paired") == mkb::analysis::TimingRule::Paired);
        QVERIFY(*parseTimingRule("unpaired") == mkb::analysis::TimingRule::Unpaired);
        auto bad = parseTimingRule("pairwise");
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find("'pairwise' in --timing") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestReportTiming)
#include "tst_report_timing.moc"
