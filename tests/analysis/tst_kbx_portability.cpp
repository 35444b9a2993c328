// Eager portability across GPUs: ops set side by side at the largest size every GPU timed, each GPU against the
// reference, the max/min spread, ops some GPU lacks, and GPU folders that hold identical numbers; hand-computed.
#include "core/analysis/kbx_portability.h"

#include <QtTest>

#include <cmath>

using mkb::analysis::GoldenTiming;
using mkb::analysis::kbxPortability;

class KbxPortabilityTest : public QObject {
    Q_OBJECT
private slots:
    void largestCommonSizeRatiosAndSpread() {
        // add: sizes [1] and [2] on a and h200, only [1] on b: the common size is [1]. abs: [4] everywhere.
        // relu: missing on b: partial.
        const std::vector<GoldenTiming> timings{{"a", "add", "", "[1]", 2.0},
                                                {"a", "add", "", "[2]", 4.0},
                                                {"b", "add", "", "[1]", 8.0},
                                                {"h200", "add", "Math/add", "[1]", 1.0},
                                                {"h200", "add", "Math/add", "[2]", 3.0},
                                                {"a", "abs", "", "[4]", 1.0},
                                                {"b", "abs", "", "[4]", 1.0},
                                                {"h200", "abs", "", "[4]", 2.0},
                                                {"a", "relu", "", "[4]", 1.0},
                                                {"h200", "relu", "", "[4]", 1.5}};
        const auto summary = kbxPortability(timings, "h200");
        QCOMPARE(summary.gpus, (std::vector<std::string>{"a", "b", "h200"}));
        QCOMPARE(summary.ops.size(), std::size_t(2));
        QCOMPARE(summary.partial, std::vector<std::string>{"relu"});
        const auto& abs = summary.ops[0];
        const auto& add = summary.ops[1];
        QCOMPARE(add.op, std::string("add"));
        QCOMPARE(add.task, std::string("Math/add"));
        QCOMPARE(add.sizeKey, std::string("[1]"));
        QCOMPARE(add.maxOverMin, 8.0);
        QCOMPARE(add.fastest, std::string("h200"));
        QCOMPARE(add.slowest, std::string("b"));
        QCOMPARE(abs.maxOverMin, 2.0);
        // a / h200: add 2, abs 0.5 -> GM 1; b / h200: add 8, abs 0.5 -> GM 2. abs runs faster on a and b.
        QCOMPARE(summary.againstReference.size(), std::size_t(2));
        QCOMPARE(summary.againstReference[0].gpu, std::string("a"));
        QVERIFY(std::abs(*summary.againstReference[0].ratioGeometricMean - 1.0) < 1e-12);
        QVERIFY(std::abs(*summary.againstReference[1].ratioGeometricMean - 2.0) < 1e-12);
        QCOMPARE(summary.againstReference[1].fasterThanReference, std::size_t(1));
        QVERIFY(summary.againstReference[1].ratioInterval.has_value());
        // spread: GM of 8 and 2 is 4; the widest op is add.
        QVERIFY(std::abs(*summary.maxOverMinGeometricMean - 4.0) < 1e-12);
        QCOMPARE(*summary.widest, std::size_t(1));
        // a and b agree on abs's one timing, not on add's: one identical op of the two both timed.
        QCOMPARE(summary.identical.size(), std::size_t(1));
        QCOMPARE(summary.identical[0].first, std::string("a"));
        QCOMPARE(summary.identical[0].second, std::string("b"));
        QCOMPARE(summary.identical[0].identicalOps, std::size_t(1));
        QCOMPARE(summary.identical[0].sharedOps, std::size_t(2));
    }

    void withoutTheReferenceOnlyTheSpread() {
        const std::vector<GoldenTiming> timings{{"a", "add", "", "[1]", 1.0}, {"b", "add", "", "[1]", 3.0}};
        const auto summary = kbxPortability(timings, "h200");
        QVERIFY(summary.againstReference.empty());
        QCOMPARE(summary.ops.size(), std::size_t(1));
        QCOMPARE(summary.ops[0].maxOverMin, 3.0);
        QVERIFY(!summary.maxOverMinInterval); // one op carries no spread of its own
        QVERIFY(summary.identical.empty());
    }
};

QTEST_MAIN(KbxPortabilityTest)
#include "tst_kbx_portability.moc"
