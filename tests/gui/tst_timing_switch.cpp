// The timing-rule switch (issue 20): the overview and the comparisons browser share "Timing rule: paired |
// unpaired"; switching recomputes outcomes through the core functions `mkb report --timing` uses, both switches
// follow each other, and the overview's line is the report's line word for word.
#include "core/report/report_model.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/comparisons_view.h"
#include "gui/overview/overview_model.h"
#include "gui/overview/overview_view.h"
#include "gui/project/project_data.h"
#include "gui/project/timing_rule_switch.h"
#include "tst_project_data_fixture.h"

#include <QComboBox>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>

using namespace mkb::gui;

namespace {

/// beta p1 triton2cuda (base 1.0, skill 3.0: helped by the unpaired rule) re-timed as identical kernels, 1.0
/// [0.98, 1.02]: neutral within noise by the paired rule.
void addIdenticalRetiming(const std::string& path, const mkbguitest::FixtureIds& ids) {
    auto store = mkb::Store::open(path);
    QVERIFY(store.ok());
    mkb::RetimingRecord record;
    record.model = "beta";
    record.suite = "fixture";
    record.problemNumber = 1;
    record.replicate = 1;
    record.sourceDsl = "triton";
    record.targetDsl = "cuda";
    record.sourceTrialId = ids.at("beta/1/solo_triton");
    record.baseTrialId = ids.at("beta/1/solo_cuda");
    record.skillTrialId = ids.at("beta/1/triton2cuda_skill");
    record.result.ok = true;
    record.result.device = "cpu";
    record.result.deviceName = "cpu";
    record.result.graderFingerprint = "fixture";
    record.result.rounds = 120;
    mkb::RetimedPair pair;
    pair.a = "base";
    pair.b = "skill";
    pair.ratio = 1.0;
    pair.ciLow = 0.98;
    pair.ciHigh = 1.02;
    pair.n = 120;
    record.result.pairs = {pair};
    auto inserted = (*store)->insertRetiming(record);
    QVERIFY2(inserted.ok(), inserted.ok() ? "" : inserted.error().message.c_str());
}

const OverviewRow* rowOf(const OverviewModel& model, const std::string& name, const std::string& direction) {
    for (const OverviewRow& row : model.rows()) {
        if (row.model == name && row.direction == direction) {
            return &row;
        }
    }
    return nullptr;
}

QString outcomeOf(const ComparisonsModel& model, const std::string& name, const std::string& direction) {
    for (int row = 0; row < model.rowCount(); ++row) {
        const mkb::analysis::Comparison* comparison = model.comparisonAt(row);
        if (comparison->model == name && comparison->direction == direction && comparison->problemNumber == 1) {
            return model.index(row, ComparisonsModel::OutcomeColumn).data().toString();
        }
    }
    return {};
}

/// The report's T and its rule line for beta triton2cuda under a rule (the same store, `mkb report --timing`).
std::pair<double, std::string> reportOf(const std::string& path, mkb::analysis::TimingRule rule) {
    auto store = mkb::Store::open(path);
    if (!store) {
        return {-1, ""};
    }
    mkb::report::ReportOptions options;
    options.metrics = {mkb::report::MetricSet::Transfer};
    options.model = "beta";
    options.direction = "triton2cuda";
    options.settings.timing = rule;
    auto report = mkb::report::buildReportFromStore(**store, options);
    if (!report) {
        return {-1, ""};
    }
    const mkb::report::ReportTable& table = report->tables.front();
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
        if (table.columns[i] == "T") {
            return {table.rows.front()[i].number, table.footnotes.front()};
        }
    }
    return {-1, ""};
}

} // namespace

class TimingSwitchTest : public QObject {
    Q_OBJECT
private slots:
    // paired by default; switching the overview to unpaired re-judges the overview and the browser alike, as the
    // report does under --timing unpaired, and the browser's switch follows; switching back from the browser restores
    void switchingTheRuleRecomputesEveryViewAsTheReportDoes() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("study.sqlite")).toStdString();
        addIdenticalRetiming(path, mkbguitest::writeTransferFixture(path));
        ProjectData data;
        data.setStorePath(QString::fromStdString(path));
        QVERIFY(data.waitUntilIdle());
        QVERIFY2(data.lastError().isEmpty(), qPrintable(data.lastError()));
        OverviewView overview;
        overview.setProjectData(&data);
        ComparisonsView browser;
        browser.setProjectData(&data);
        QComboBox* overviewRule = overview.timingRule()->combo();
        QComboBox* browserRule = browser.timingRule()->combo();
        const auto summary = [&] { return overview.findChild<QLabel*>(QStringLiteral("overviewSummary"))->text(); };

        QCOMPARE(overviewRule->currentText(), QStringLiteral("paired"));
        QCOMPARE(browserRule->currentText(), QStringLiteral("paired"));
        const auto paired = reportOf(path, mkb::analysis::TimingRule::Paired);
        QCOMPARE(*rowOf(*overview.model(), "beta", "triton2cuda")->transferRate, paired.first);
        QCOMPARE(paired.first, 0.0);
        QCOMPARE(outcomeOf(*browser.model(), "beta", "triton2cuda"), QStringLiteral("neutral (within noise)"));
        QVERIFY2(summary().contains(
                     QStringLiteral("Timing: paired rule (docs/metrics.md, \"With paired re-timing\"): 6 resolved "
                                    "comparisons, 1 with a "
                                    "paired re-timing; 1 judged by it (1 within noise)")),
                 qPrintable(summary()));

        overviewRule->setCurrentIndex(overviewRule->findText(QStringLiteral("unpaired")));
        QCOMPARE(data.settings().timing, mkb::analysis::TimingRule::Unpaired);
        QCOMPARE(browserRule->currentText(), QStringLiteral("unpaired"));
        const auto unpaired = reportOf(path, mkb::analysis::TimingRule::Unpaired);
        QCOMPARE(unpaired.first, 1.0);
        QCOMPARE(*rowOf(*overview.model(), "beta", "triton2cuda")->transferRate, unpaired.first);
        QCOMPARE(outcomeOf(*browser.model(), "beta", "triton2cuda"), QStringLiteral("helped"));
        QVERIFY2(summary().contains(QStringLiteral("Timing: unpaired rule (MetaKernelBench, --timing unpaired): 6 "
                                                   "resolved comparisons, 1 with a paired re-timing (not used).")),
                 qPrintable(summary()));

        browserRule->setCurrentIndex(browserRule->findText(QStringLiteral("paired")));
        QCOMPARE(data.settings().timing, mkb::analysis::TimingRule::Paired);
        QCOMPARE(overviewRule->currentText(), QStringLiteral("paired"));
        QCOMPARE(*rowOf(*overview.model(), "beta", "triton2cuda")->transferRate, 0.0);
        QCOMPARE(outcomeOf(*browser.model(), "beta", "triton2cuda"), QStringLiteral("neutral (within noise)"));
    }

    // the overview's line is report::timingLine of the summed counts: the report's wording, not a second one
    void overviewLineIsTheReportsLine() {
        OverviewRow a;
        a.resolved = 3;
        a.judgedPaired = 2;
        a.withinNoise = 1;
        a.withRetiming = 2;
        a.fellBack = 1;
        OverviewRow b;
        b.resolved = 1;
        mkb::report::TableTiming timing;
        timing.rule = "paired";
        timing.resolved = 4;
        timing.paired = 2;
        timing.withinNoise = 1;
        timing.withRetiming = 2;
        timing.fellBack = 1;
        QCOMPARE(timingRuleLine({a, b}, {}), mkb::report::timingLine(timing));
    }
};

QTEST_MAIN(TimingSwitchTest)
#include "tst_timing_switch.moc"
