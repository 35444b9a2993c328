// KernelBench-X's findings from hand-made attempts: η² by category (and why not by method with one model), the rates
// and speedups per round, rescued against correct from the start, the share slower than eager, and the intervals.
#include "core/analysis/kbx_paper.h"

#include <QtTest>

#include <cmath>

using namespace mkb::analysis;

namespace {

SubmissionPoint round(int index, bool compiled, bool correct, double speedup = 0) {
    SubmissionPoint point;
    point.index = index;
    point.compiled = compiled;
    point.correct = correct;
    point.speedup = speedup;
    return point;
}

Attempt attempt(const char* category, std::vector<SubmissionPoint> rounds, const char* model = "kbx-geak") {
    Attempt result;
    result.graded = true;
    result.model = model;
    result.category = category;
    result.submissions = std::move(rounds);
    const SubmissionPoint& last = result.submissions.back();
    result.imported = last.compiled;
    result.correct = last.correct;
    result.passed = last.correct && last.speedup > 0;
    result.speedup = result.passed ? last.speedup : 0;
    return result;
}

const PaperFinding& named(const std::vector<PaperFinding>& findings, const std::string& name) {
    for (const PaperFinding& finding : findings) {
        if (finding.finding == name) {
            return finding;
        }
    }
    qFatal("no finding %s", name.c_str());
}

} // namespace

class KbxPaperTest : public QObject {
    Q_OBJECT
private slots:
    // Fusion: correct from the start at 2.0 then 4.0; rescued at 0.5. Math: correct from the start at 0.8;
    // never correct. Round 0: 4 attempts, 3 compiled, 2 correct; round 1: 4 attempts, 4 compiled, 3 correct.
    void findingsFromHandMadeAttempts() {
        std::vector<Attempt> attempts{
            attempt("Fusion", {round(1, true, true, 2.0), round(2, true, true, 4.0)}),
            attempt("Fusion", {round(1, false, false), round(2, true, true, 0.5)}),
            attempt("Math", {round(1, true, true, 0.8), round(2, true, true, 0.8)}),
            attempt("Math", {round(1, true, false), round(2, true, false)}),
        };
        const std::vector<PaperFinding> findings = kbxPaperFindings(attempts);

        const PaperFinding& compile0 = named(findings, "compile rate, round 0");
        QCOMPARE(compile0.n, std::size_t(4));
        QCOMPARE(*compile0.value, 0.75);
        QVERIFY(compile0.interval && compile0.interval->low <= 0.75 && 0.75 <= compile0.interval->high);
        QCOMPARE(compile0.paper, std::string("52.3% (first round)"));
        QCOMPARE(*named(findings, "correct rate, round 0").value, 0.5);
        QCOMPARE(*named(findings, "correct rate, round 1").value, 0.75);
        QCOMPARE(named(findings, "correct rate, round 1").paper, std::string("30.7% (last round)"));
        // round 1's passing kernels: 4.0, 0.5, 0.8 -> geometric mean (1.6)^(1/3)
        const PaperFinding& speed1 = named(findings, "GM speedup of passing kernels, round 1");
        QCOMPARE(speed1.n, std::size_t(3));
        QVERIFY(std::fabs(*speed1.value - std::cbrt(1.6)) < 1e-12);

        const PaperFinding& fromStart = named(findings, "GM speedup, correct from the start");
        QCOMPARE(fromStart.n, std::size_t(2)); // 4.0 and 0.8
        QVERIFY(std::fabs(*fromStart.value - std::sqrt(3.2)) < 1e-12);
        const PaperFinding& rescued = named(findings, "GM speedup, rescued");
        QCOMPARE(rescued.n, std::size_t(1));
        QCOMPARE(*rescued.value, 0.5);
        QVERIFY(!rescued.interval); // one kernel: no interval
        const PaperFinding& slower = named(findings, "correct kernels slower than eager");
        QCOMPARE(slower.n, std::size_t(3)); // 4.0, 0.5, 0.8: two below 1
        QVERIFY(std::fabs(*slower.value - 2.0 / 3.0) < 1e-12);
        QCOMPARE(*named(findings, "Fusion tasks failing").value, 0.0);

        const PaperFinding& category = named(findings, "η² of correctness by category");
        QCOMPARE(category.n, std::size_t(4));
        // correctness 1, 1, 1, 0: Fusion mean 1, Math 0.5, grand 0.75; between 2·(0.25²) + 2·(0.25²) = 0.25, total
        // 0.75 -> η² = 1/3
        QVERIFY(std::fabs(*category.value - 1.0 / 3.0) < 1e-12);
        QVERIFY(category.interval && category.interval->low >= 0 && category.interval->high <= 1);
        const PaperFinding& method = named(findings, "η² of correctness by method");
        QVERIFY(!method.value);
        QVERIFY2(method.note.find("two or more methods") != std::string::npos, method.note.c_str());
        const PaperFinding& portability = named(findings, "max/min speedup of one kernel across GPUs");
        QVERIFY(!portability.value && !portability.note.empty());
    }

    void etaSquaredIntervalIsSeededByTheItems() {
        const std::vector<double> values{1, 0, 1, 1, 0, 0, 1, 0};
        const std::vector<std::string> groups{"a", "a", "a", "b", "b", "b", "c", "c"};
        const EtaSquaredEstimate once = etaSquaredWithInterval(values, groups);
        const EtaSquaredEstimate again =
            etaSquaredWithInterval({0, 1, 0, 0, 1, 1, 0, 1}, {"c", "c", "b", "b", "b", "a", "a", "a"});
        QVERIFY(once.value && once.interval);
        QCOMPARE(*once.value, *again.value);
        QCOMPARE(once.interval->low, again.interval->low);
        QCOMPARE(once.interval->high, again.interval->high);
        QVERIFY(!etaSquaredWithInterval({1, 1, 1}, {"a", "b", "c"}).value); // no variance to explain
    }
};

QTEST_MAIN(KbxPaperTest)
#include "tst_kbx_paper.moc"
