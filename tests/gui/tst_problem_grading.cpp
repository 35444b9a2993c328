// Tests of the problems view's last grading results: the newest trial per problem, DSL and model from the project's
// trials, shown in the table's column and in the details of the selected problem.
#include "gui/problems/problem_grading.h"
#include "gui/problems/problems_model.h"
#include "gui/problems/problems_view.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QTableView>
#include <QTest>

using namespace mkb;
using namespace mkb::gui;

namespace {

TrialRecord trial(std::int64_t id, int problem, const std::string& dsl, const std::string& model,
                  const std::string& finishedAt, std::optional<bool> passed, double speedup = 0,
                  TrialStatus status = TrialStatus::Finished) {
    TrialRecord record;
    record.id = id;
    record.suite = "shipped";
    record.problemNumber = problem;
    record.problemSlug = problem == 1 ? "softmax" : "gelu";
    record.dsl = dsl;
    record.model = model;
    record.arm = "solo_" + dsl;
    record.coordinate = "p0" + std::to_string(problem) + "_r1_solo_" + dsl;
    record.status = status;
    record.finishedAt = finishedAt;
    if (passed) {
        Verdict verdict;
        verdict.passed = *passed;
        verdict.speedupVsEager = speedup;
        verdict.stage = *passed ? "done" : "correctness";
        record.finalVerdict = verdict;
    }
    return record;
}

ProblemRow problemRow(int number, const std::string& slug) {
    ProblemRow row;
    row.problem.suite = "shipped";
    row.problem.number = number;
    row.problem.slug = slug;
    row.problem.family = "reduction";
    return row;
}

} // namespace

class ProblemGradingTest : public QObject {
    Q_OBJECT

private slots:
    void theNewestTrialPerDslAndModelIsTheLastGrading() {
        std::vector<TrialRecord> trials = {
            trial(1, 1, "triton", "alpha", "2026-01-01T10:00:00Z", false),
            trial(2, 1, "triton", "alpha", "2026-01-02T10:00:00Z", true, 1.5), // newer: wins
            trial(3, 1, "cuda", "alpha", "2026-01-03T10:00:00Z", false),
            trial(4, 1, "triton", "beta", "2026-01-01T09:00:00Z", true, 3.0),
            trial(5, 2, "cuda", "alpha", "", std::nullopt, 0, TrialStatus::Running),
        };
        TrialRecord archived = trial(6, 1, "cuda", "alpha", "2026-02-01T10:00:00Z", true, 9.0);
        archived.archived = true; // redone trials never count
        trials.push_back(archived);

        const auto gradings = lastGradings(trials);
        QCOMPARE(int(gradings.size()), 2);
        const std::vector<LastGrading>& first = gradings.at({"shipped", 1, "softmax"});
        QCOMPARE(int(first.size()), 3); // cuda/alpha, triton/alpha, triton/beta, in DSL then model order
        QCOMPARE(first[0].dsl, std::string("cuda"));
        QCOMPARE(first[0].trialId, std::int64_t(3));
        QCOMPARE(first[1].trialId, std::int64_t(2));
        QCOMPARE(first[2].model, std::string("beta"));
        QCOMPARE(describeGrading(first[0]), std::string("failed (correctness)"));
        QCOMPARE(describeGrading(first[1]), std::string("passed 1.50×"));

        // Per DSL the newest over all models: triton/alpha (Jan 2) beats triton/beta (Jan 1).
        const auto newest = newestPerDsl(first);
        QCOMPARE(int(newest.size()), 2);
        QCOMPARE(newest[1]->model, std::string("alpha"));
        QCOMPARE(describeGrading(gradings.at({"shipped", 2, "gelu"}).front()), std::string("running"));
    }

    void theTableAndTheDetailsShowTheLastGrading() {
        ProblemsView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        ProblemsListing listing;
        listing.rows = {problemRow(1, "softmax"), problemRow(2, "gelu"), problemRow(3, "untried")};
        view.setListing(std::move(listing));
        // Another suite folder with the same name and number but another problem: its trial lands on no row here.
        TrialRecord namesake = trial(9, 1, "tirx", "alpha", "2026-03-01T10:00:00Z", true, 7.0);
        namesake.problemSlug = "vector_add";
        view.setLastGradings(lastGradings({namesake, trial(2, 1, "triton", "alpha", "2026-01-02T10:00:00Z", true, 1.5),
                                           trial(3, 1, "cuda", "alpha", "2026-01-03T10:00:00Z", false),
                                           trial(5, 2, "cuda", "alpha", "", std::nullopt, 0, TrialStatus::Running)}));
        ProblemsModel* model = view.model();
        QCOMPARE(model->index(0, ProblemsModel::LastGradingColumn).data().toString(),
                 QString("cuda failed (correctness) · triton passed 1.50×"));
        QCOMPARE(model->index(1, ProblemsModel::LastGradingColumn).data().toString(), QString("cuda running"));
        QCOMPARE(model->index(2, ProblemsModel::LastGradingColumn).data().toString(), QString("—"));
        QVERIFY(model->index(0, ProblemsModel::LastGradingColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("p01_r1_solo_cuda"));
        QCOMPARE(model->headerData(ProblemsModel::LastGradingColumn, Qt::Horizontal).toString(),
                 QString("Last grading"));

        view.table()->selectRow(0);
        const QString details = view.gradingLabel()->text();
        QVERIFY2(details.contains("passed 1.50×") && details.contains("2026-01-03T10:00:00Z"), qPrintable(details));
        view.table()->selectRow(2);
        QVERIFY(view.gradingLabel()->text().contains("no trial of this problem"));

        // Sorting by the column puts the problem with a passing DSL first when descending.
        view.table()->sortByColumn(ProblemsModel::LastGradingColumn, Qt::DescendingOrder);
        QCOMPARE(view.table()->model()->index(0, ProblemsModel::SlugColumn).data().toString(), QString("softmax"));
    }
};

QTEST_MAIN(ProblemGradingTest)
#include "tst_problem_grading.moc"
