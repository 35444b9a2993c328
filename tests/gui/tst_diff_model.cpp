// Diff model suite: line rows, filler alignment, changed-word spans and change navigation, apart from rendering.
#include "gui/common/diff_model.h"

#include <QTest>

using namespace mkb::gui;

class DiffModelTest : public QObject {
    Q_OBJECT
private slots:
    void identicalTextsHaveNoChanges();
    void insertionGetsLeftFiller();
    void deletionGetsRightFiller();
    void changedLinePairsWithWordSpans();
    void unevenRunAlignsWithFillers();
    void emptySides();
    void navigationStepsThroughRuns();
    void wordsSplitIntoRunsAndPunctuation();
};

static QString lines(std::initializer_list<const char*> items) {
    QString text;
    for (const char* item : items) {
        text += QString::fromUtf8(item) + QLatin1Char('\n');
    }
    return text;
}

void DiffModelTest::identicalTextsHaveNoChanges() {
    const SideBySideDiff diff = sideBySideDiff(lines({"a", "b"}), lines({"a", "b"}));
    QCOMPARE(diff.rows.size(), size_t(2));
    QVERIFY(diff.changeStarts.empty());
    QCOMPARE(diff.rows[1].kind, DiffRowKind::Same);
    QCOMPARE(diff.rows[1].left.lineNumber, 2);
    QCOMPARE(diff.rows[1].right.lineNumber, 2);
}

void DiffModelTest::insertionGetsLeftFiller() {
    const SideBySideDiff diff = sideBySideDiff(lines({"a", "c"}), lines({"a", "b", "c"}));
    QCOMPARE(diff.rows.size(), size_t(3));
    QCOMPARE(diff.rows[1].kind, DiffRowKind::Inserted);
    QVERIFY(diff.rows[1].left.isFiller());
    QCOMPARE(diff.rows[1].right.lineNumber, 2);
    QCOMPARE(diff.rows[1].right.text, QStringLiteral("b"));
    QCOMPARE(diff.rows[2].left.lineNumber, 2);
    QCOMPARE(diff.rows[2].right.lineNumber, 3);
    QCOMPARE(diff.insertedLines, 1);
    QCOMPARE(diff.removedLines, 0);
    QCOMPARE(diff.changeStarts, std::vector<int>{1});
}

void DiffModelTest::deletionGetsRightFiller() {
    const SideBySideDiff diff = sideBySideDiff(lines({"a", "b", "c"}), lines({"a", "c"}));
    QCOMPARE(diff.rows.size(), size_t(3));
    QCOMPARE(diff.rows[1].kind, DiffRowKind::Removed);
    QVERIFY(diff.rows[1].right.isFiller());
    QCOMPARE(diff.rows[1].left.lineNumber, 2);
    QCOMPARE(diff.removedLines, 1);
}

void DiffModelTest::changedLinePairsWithWordSpans() {
    const SideBySideDiff diff =
        sideBySideDiff(lines({"x = 1", "y = x.softmax(-1)"}), lines({"x = 1", "y = x.log_softmax(-1)"}));
    QCOMPARE(diff.rows.size(), size_t(2));
    const DiffRow& row = diff.rows[1];
    QCOMPARE(row.kind, DiffRowKind::Changed);
    QCOMPARE(row.left.changedWords.size(), size_t(1));
    QCOMPARE(row.left.text.mid(row.left.changedWords[0].start, row.left.changedWords[0].length),
             QStringLiteral("softmax"));
    QCOMPARE(row.right.changedWords.size(), size_t(1));
    QCOMPARE(row.right.text.mid(row.right.changedWords[0].start, row.right.changedWords[0].length),
             QStringLiteral("log_softmax"));
    // The unchanged rows carry no spans.
    QVERIFY(diff.rows[0].left.changedWords.empty());
}

void DiffModelTest::unevenRunAlignsWithFillers() {
    // One line replaced by three: one Changed row, then two Inserted rows with left fillers; both sides stay aligned.
    const SideBySideDiff diff = sideBySideDiff(lines({"head", "old line", "tail"}),
                                               lines({"head", "new line", "extra one", "extra two", "tail"}));
    QCOMPARE(diff.rows.size(), size_t(5));
    QCOMPARE(diff.rows[1].kind, DiffRowKind::Changed);
    QCOMPARE(diff.rows[2].kind, DiffRowKind::Inserted);
    QCOMPARE(diff.rows[3].kind, DiffRowKind::Inserted);
    QVERIFY(diff.rows[3].left.isFiller());
    QCOMPARE(diff.rows[4].left.lineNumber, 3);
    QCOMPARE(diff.rows[4].right.lineNumber, 5);
    QCOMPARE(diff.rows[4].kind, DiffRowKind::Same);
    QCOMPARE(diff.changeStarts, std::vector<int>{1});
    // Word spans of the changed pair: only "old" / "new".
    QCOMPARE(diff.rows[1].left.changedWords, (std::vector<DiffSpan>{{0, 3}}));
    QCOMPARE(diff.rows[1].right.changedWords, (std::vector<DiffSpan>{{0, 3}}));
}

void DiffModelTest::emptySides() {
    const SideBySideDiff onlyRight = sideBySideDiff(QString(), lines({"a", "b"}));
    QCOMPARE(onlyRight.rows.size(), size_t(2));
    QCOMPARE(onlyRight.rows[0].kind, DiffRowKind::Inserted);
    QCOMPARE(onlyRight.insertedLines, 2);
    const SideBySideDiff none = sideBySideDiff(QString(), QString());
    QVERIFY(none.rows.empty());
    const SideBySideDiff crlf = sideBySideDiff(QStringLiteral("a\r\nb"), QStringLiteral("a\nb\n"));
    QCOMPARE(crlf.rows.size(), size_t(2));
    QVERIFY(crlf.changeStarts.empty());
}

void DiffModelTest::navigationStepsThroughRuns() {
    const SideBySideDiff diff = sideBySideDiff(lines({"a", "b", "c", "d", "e"}), lines({"a", "B", "c", "d", "E"}));
    QCOMPARE(diff.changeStarts, (std::vector<int>{1, 4}));
    QCOMPARE(nextChangeRow(diff, -1), 1);
    QCOMPARE(nextChangeRow(diff, 1), 4);
    QCOMPARE(nextChangeRow(diff, 4), -1);
    QCOMPARE(previousChangeRow(diff, 4), 1);
    QCOMPARE(previousChangeRow(diff, 1), -1);
}

void DiffModelTest::wordsSplitIntoRunsAndPunctuation() {
    const std::vector<QString> words = diffWordsOf(QStringLiteral("tl.load(x_ptr +  1)"));
    const std::vector<QString> expected{"tl", ".", "load", "(", "x_ptr", " ", "+", "  ", "1", ")"};
    QCOMPARE(words, expected);
}

QTEST_MAIN(DiffModelTest)
#include "tst_diff_model.moc"
