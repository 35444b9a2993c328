// The report and the implementation boundary (DESIGN §5.2): it names the boundaries its tables cover, counts the
// cell-replicates whose arms were graded under different ones, filters with --boundary and splits by boundary.
#include "core/report/report_model.h"

#include <QtTest>

using namespace mkb::report;

namespace {

mkb::TrialRecord trial(std::int64_t id, int problem, const std::string& arm, const std::string& dsl,
                       const std::string& boundary, double speedup) {
    mkb::TrialRecord record;
    record.id = id;
    record.model = "m";
    record.problemNumber = problem;
    record.problemSlug = "p" + std::to_string(problem);
    record.family = "f";
    record.arm = arm;
    record.dsl = dsl;
    record.status = mkb::TrialStatus::Finished;
    mkb::Verdict verdict;
    verdict.imported = verdict.compliant = verdict.correct = verdict.passed = true;
    verdict.speedupVsEager = speedup;
    verdict.boundary = boundary;
    record.finalVerdict = verdict;
    record.skillText = "# Skill\n";
    return record;
}

/// Problem 1: all three arms under mkb. Problem 2: the skill arm was graded under strict, the others under mkb.
std::vector<mkb::TrialRecord> mixedTrials() {
    return {
        trial(1, 1, "solo_triton", "triton", "mkb", 2.0),     trial(2, 1, "solo_cuda", "cuda", "mkb", 1.0),
        trial(3, 1, "triton2cuda_skill", "cuda", "mkb", 1.5), trial(4, 2, "solo_triton", "triton", "mkb", 2.0),
        trial(5, 2, "solo_cuda", "cuda", "mkb", 1.0),         trial(6, 2, "triton2cuda_skill", "cuda", "strict", 1.5)};
}

bool hasNote(const Report& report, const std::string& part) {
    for (const std::string& note : report.notes) {
        if (note.find(part) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

class TestReportBoundary : public QObject {
    Q_OBJECT
private slots:
    // a report over two boundaries names both and counts the pair it never compares
    void reportNamesItsBoundariesAndCountsTheNotComparable() {
        ReportOptions options;
        options.metrics = {MetricSet::Transfer};
        const Report report = buildReport(mixedTrials(), {}, options);
        QVERIFY(hasNote(report, "Boundaries: mkb (5 attempts), strict (1 attempts)"));
        QVERIFY(hasNote(report, "1 cell-replicates not comparable"));
        QCOMPARE(report.tables.at(0).timing->resolved, std::size_t(1)); // the mixed cell is never paired
    }

    // --boundary strict keeps only the strict attempts: no comparison resolves, nothing is mixed
    void boundaryFilterKeepsOneBoundary() {
        ReportOptions options;
        options.metrics = {MetricSet::Transfer};
        options.boundary = "mkb";
        const Report report = buildReport(selectTrials(mixedTrials(), options), {}, options);
        QVERIFY(hasNote(report, "Boundary: mkb (5 attempts); 0 cell-replicates not comparable"));
        QVERIFY(hasNote(report, "boundary mkb"));
        QCOMPARE(report.tables.at(0).timing->resolved, std::size_t(1));
    }

    // --split boundary puts the mixed cell in a group of its own
    void splitByBoundaryGroupsTheMixedCellApart() {
        QCOMPARE(*parseReportSplit("boundary"), ReportSplit::Boundary);
        ReportOptions options;
        options.metrics = {MetricSet::Transfer};
        options.split = ReportSplit::Boundary;
        const Report report = buildReport(mixedTrials(), {}, options);
        std::vector<std::string> groups;
        for (const auto& row : report.tables.at(0).rows) {
            groups.push_back(row.at(0).text);
        }
        QVERIFY(std::find(groups.begin(), groups.end(), "mkb") != groups.end());
        QVERIFY(std::find(groups.begin(), groups.end(), "not comparable") != groups.end());
    }
};

QTEST_GUILESS_MAIN(TestReportBoundary)
#include "tst_report_boundary.moc"
