// Golden tests of refinement trajectories and the LCS line diff: rates by submission index, rescued vs
// correct-from-start attempts, fixing-edit sizes and their local/structural classification.
#include "analysis_fixtures.h"

#include "core/analysis/linediff.h"
#include "core/analysis/refinement.h"

#include <QtTest>

#include <cmath>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

SubmissionPoint submission(int index, bool compiled, bool correct, std::string source = "") {
    return SubmissionPoint{index, compiled, correct, correct ? 1.0 : 0.0, std::move(source)};
}

/// R1: [1 not compiled, 2 compiled but wrong, 3 correct], final 1.5 → rescued
/// R2: [1 correct, 2 correct], final 2.0 → correct from the start
/// R3: [1 compiled but wrong], final fail → never correct
/// R4: no submissions → not a trajectory
std::vector<Attempt> trajectoryFixture() {
    Attempt r1 = passing(1.5);
    r1.submissions = {submission(1, false, false), submission(2, true, false, "a\nb\nc\nd\n"),
                      submission(3, true, true, "a\nb\nX\nd\n")};
    Attempt r2 = passing(2.0);
    r2.submissions = {submission(1, true, true), submission(2, true, true)};
    Attempt r3 = failing();
    r3.submissions = {submission(1, true, false)};
    Attempt r4 = passing(3.0);
    return {r1, r2, r3, r4};
}

} // namespace

class RefinementTest : public QObject {
    Q_OBJECT
private slots:
    // line diff: an LCS edit script with removals and insertions
    void lineDiffEditScript() {
        const std::vector<DiffRow> rows = diffLines({"a", "b", "c"}, {"a", "x", "c"});
        QCOMPARE(rows.size(), std::size_t(4));
        QVERIFY(rows[0].change == LineChange::Same && rows[0].text == "a");
        QVERIFY(rows[1].change == LineChange::Removed && rows[1].text == "b" && rows[1].beforeLine == 2);
        QVERIFY(rows[2].change == LineChange::Inserted && rows[2].text == "x" && rows[2].afterLine == 2);
        QVERIFY(rows[3].change == LineChange::Same && rows[3].beforeLine == 3 && rows[3].afterLine == 3);
    }

    // line diff: the edit script keeps the longest common subsequence
    // linediff: the edit script over ids is the one engine; indices are 1-based and 0 on the side a step leaves
    void editScriptOverIdsKeepsCommonIdsAndNumbersBothSides() {
        const std::vector<EditStep> steps = editScript({7, 8, 9}, {7, 5, 9, 9});
        std::size_t same = 0, removed = 0, inserted = 0;
        for (const EditStep& step : steps) {
            switch (step.change) {
            case LineChange::Same:
                ++same;
                QVERIFY(step.beforeIndex > 0 && step.afterIndex > 0);
                break;
            case LineChange::Removed:
                ++removed;
                QCOMPARE(step.beforeIndex, std::size_t(2)); // the 8
                QCOMPARE(step.afterIndex, std::size_t(0));
                break;
            case LineChange::Inserted:
                ++inserted;
                QCOMPARE(step.beforeIndex, std::size_t(0));
                break;
            }
        }
        QCOMPARE(same, std::size_t(2));
        QCOMPARE(removed, std::size_t(1));
        QCOMPARE(inserted, std::size_t(2));
        QVERIFY(steps.front().change == LineChange::Same);
        QCOMPARE(steps.front().afterIndex, std::size_t(1));
        QVERIFY(editScript({}, {}).empty());
    }

    void lineDiffKeepsLongestCommonSubsequence() {
        // LCS of a b c d e f g and x b c y e f z is b c e f (4 lines)
        const std::vector<DiffRow> rows =
            diffLines({"a", "b", "c", "d", "e", "f", "g"}, {"x", "b", "c", "y", "e", "f", "z"});
        std::size_t same = 0;
        for (const DiffRow& row : rows) {
            same += row.change == LineChange::Same ? 1 : 0;
        }
        QCOMPARE(same, std::size_t(4));
        QCOMPARE(lineDiffStats("a\nb\nc\nd\ne\nf\ng\n", "x\nb\nc\ny\ne\nf\nz\n").common, std::size_t(4));
    }

    // line diff: changed-line share = (removed + inserted) / (lines before + lines after)
    void lineDiffChangedShare() {
        const LineDiffStats oneLine = lineDiffStats("a\nb\nc\n", "a\nx\nc\n");
        QCOMPARE(oneLine.common, std::size_t(2));
        QCOMPARE(oneLine.removed, std::size_t(1));
        QCOMPARE(oneLine.inserted, std::size_t(1));
        MKB_NEAR(oneLine.changedShare, 2.0 / 6);
        MKB_NEAR(lineDiffStats("same\ntext", "same\ntext").changedShare, 0.0);
        MKB_NEAR(lineDiffStats("", "").changedShare, 0.0);
        MKB_NEAR(lineDiffStats("", "new\nfile\n").changedShare, 1.0);
        MKB_NEAR(lineDiffStats("a\r\nb\r\n", "a\nb\n").changedShare, 0.0); // line endings do not count
        // swapped pairs: a b c d → b a d c keeps 2 lines; (2 + 2) / 8 = 0.5
        MKB_NEAR(lineDiffStats("a\nb\nc\nd", "b\na\nd\nc").changedShare, 0.5);
    }

    // refinement: compile and correct rates by submission index
    void ratesBySubmissionIndexOverTrajectories() {
        const std::vector<IndexRates> rows = ratesBySubmissionIndex(trajectoryFixture());
        QCOMPARE(rows.size(), std::size_t(3));
        // index 1: R1 R2 R3 → compiled R2, R3 = 2/3; correct R2 = 1/3
        QCOMPARE(rows[0].index, 1);
        QCOMPARE(rows[0].attempts, std::size_t(3));
        MKB_NEAR(rows[0].compileRate, 2.0 / 3);
        MKB_NEAR(rows[0].correctRate, 1.0 / 3);
        // index 2: R1 R2 → compiled 2/2; correct R2 = 1/2
        MKB_NEAR(rows[1].compileRate, 1.0);
        MKB_NEAR(rows[1].correctRate, 0.5);
        // index 3: R1 → 1/1, 1/1
        QCOMPARE(rows[2].attempts, std::size_t(1));
        MKB_NEAR(rows[2].correctRate, 1.0);
        QVERIFY(ratesBySubmissionIndex({}).empty());
    }

    // refinement: rescued attempts against correct-from-the-start ones, with their speedups
    void rescuedVersusCorrectFromStart() {
        const RescueSummary summary = rescueSummary(trajectoryFixture());
        QCOMPARE(summary.withSubmissions, std::size_t(3));  // R4 has none
        QCOMPARE(summary.correctFromStart, std::size_t(1)); // R2
        QCOMPARE(summary.rescued, std::size_t(1));          // R1
        QCOMPARE(summary.neverCorrect, std::size_t(1));     // R3
        MKB_NEAR_OPT(summary.rescuedShare, 0.5);            // R1 of the first-failed {R1, R3}
        MKB_NEAR_OPT(summary.fromStartGeometricMean, 2.0);
        MKB_NEAR_OPT(summary.rescuedGeometricMean, 1.5);
        QCOMPARE(summary.rescuedSpeedups.count, std::size_t(1));
        const RescueSummary empty = rescueSummary({});
        QVERIFY(!empty.rescuedShare && !empty.rescuedGeometricMean && !empty.fromStartSpeedups.median);
    }

    // refinement: fixing edits are consecutive failing→correct pairs, classified at the threshold (ties structural)
    void fixingEditsClassifiedByChangedShare() {
        Attempt r5 = failing();
        r5.submissions = {submission(1, true, false, "p\nq\n"), submission(2, true, true, "r\ns\n"),
                          submission(3, true, false, "r\n"), submission(4, true, true, "r\ns\n")};
        Attempt swapped = failing();
        swapped.submissions = {submission(1, true, false, "a\nb\nc\nd"), submission(2, true, true, "b\na\nd\nc")};
        std::vector<Attempt> attempts = trajectoryFixture();
        attempts.push_back(r5);
        attempts.push_back(swapped);
        const std::vector<FixingEdit> edits = fixingEdits(attempts);
        QCOMPARE(edits.size(), std::size_t(4));
        // R1 2→3: one line of four changed: (1 + 1) / 8 = 0.25 → local fix
        QCOMPARE(edits[0].fromIndex, 2);
        QCOMPARE(edits[0].toIndex, 3);
        MKB_NEAR(edits[0].diff.changedShare, 0.25);
        QVERIFY(edits[0].kind == EditKind::LocalFix);
        // R5 1→2: nothing in common: 4 / 4 = 1 → structural rewrite
        MKB_NEAR(edits[1].diff.changedShare, 1.0);
        QVERIFY(edits[1].kind == EditKind::StructuralRewrite);
        // R5 3→4: r → r s: one insertion over 1 + 2 lines = 1/3 → local fix
        MKB_NEAR(edits[2].diff.changedShare, 1.0 / 3);
        QVERIFY(edits[2].kind == EditKind::LocalFix);
        // swapped pairs: exactly 0.5 = the threshold → structural rewrite
        MKB_NEAR(edits[3].diff.changedShare, 0.5);
        QVERIFY(edits[3].kind == EditKind::StructuralRewrite);
        AnalysisSettings lenient;
        lenient.structuralRewriteShare = 0.6;
        QVERIFY(fixingEdits(std::vector<Attempt>{swapped}, lenient).front().kind == EditKind::LocalFix);

        const FixingEditSummary summary = summarizeFixingEdits(edits);
        QCOMPARE(summary.edits, std::size_t(4));
        QCOMPARE(summary.localFixes, std::size_t(2));
        QCOMPARE(summary.structuralRewrites, std::size_t(2));
        MKB_NEAR_OPT(summary.localFixShare, 0.5);
        // shares {0.25, 1/3, 0.5, 1}: median (1/3 + 0.5) / 2
        MKB_NEAR_OPT(summary.changedLineShare.median, (1.0 / 3 + 0.5) / 2);
        QVERIFY(!summarizeFixingEdits({}).localFixShare);
    }
};

QTEST_APPLESS_MAIN(RefinementTest)
#include "tst_refinement.moc"
