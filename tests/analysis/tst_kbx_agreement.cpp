// Our verdicts against KernelBench-X's on the same rounds: counts, shares, agreement and the speedup ratio per
// category, with hand-computed numbers.
#include "core/analysis/kbx_agreement.h"

#include <QtTest>

#include <cmath>

using mkb::analysis::AgreementGroup;
using mkb::analysis::RegradedRound;

namespace {

RegradedRound round(const char* category, bool theirs, bool ours, std::optional<double> theirsSpeedup = {},
                    std::optional<double> oursSpeedup = {}) {
    RegradedRound result;
    result.category = category;
    result.theirsCorrect = theirs;
    result.oursCorrect = ours;
    result.theirsSpeedup = theirsSpeedup;
    result.oursSpeedup = oursSpeedup;
    return result;
}

} // namespace

class KbxAgreementTest : public QObject {
    Q_OBJECT
private slots:
    // Math: both correct (ours 1.0 vs theirs 2.0, and ours 3.0 vs theirs 1.5), only theirs, neither.
    // Pooling: only ours. Uncategorised: both correct without speedups.
    // all: 6 rounds, theirs correct 4, ours correct 4, both 3, only theirs 1, only ours 1, neither 1, agreement 4/6;
    // speedup ratios 0.5 and 2.0: geometric mean 1.0.
    void countsSharesAndRatioPerCategory() {
        const std::vector<RegradedRound> rounds{
            round("Math", true, true, 2.0, 1.0), round("Math", true, true, 1.5, 3.0), round("Math", true, false),
            round("Math", false, false),         round("Pooling", false, true),       round("", true, true)};
        const std::vector<AgreementGroup> groups = mkb::analysis::kbxAgreement(rounds);
        QCOMPARE(groups.size(), std::size_t(4)); // all, Math, Pooling, uncategorised
        const AgreementGroup& all = groups[0];
        QCOMPARE(all.category, std::string());
        QCOMPARE(all.rounds, std::size_t(6));
        QCOMPARE(all.theirsCorrect, std::size_t(4));
        QCOMPARE(all.oursCorrect, std::size_t(4));
        QCOMPARE(all.bothCorrect, std::size_t(3));
        QCOMPARE(all.onlyTheirs, std::size_t(1));
        QCOMPARE(all.onlyOurs, std::size_t(1));
        QCOMPARE(all.neither, std::size_t(1));
        QVERIFY(std::fabs(*all.agreement - 4.0 / 6.0) < 1e-12);
        QVERIFY(all.agreementInterval);
        QVERIFY(all.agreementInterval->low <= *all.agreement && *all.agreement <= all.agreementInterval->high);
        QCOMPARE(all.speedupPairs, std::size_t(2));
        QVERIFY(std::fabs(*all.speedupRatioGeometricMean - 1.0) < 1e-12);
        QVERIFY(all.speedupRatioInterval);
        QCOMPARE(groups[1].category, std::string("Math"));
        QCOMPARE(groups[1].rounds, std::size_t(4));
        QVERIFY(std::fabs(*groups[1].agreement - 0.75) < 1e-12);
        QCOMPARE(groups[2].category, std::string("Pooling"));
        QCOMPARE(*groups[2].agreement, 0.0);
        QVERIFY(!groups[2].agreementInterval); // one round: no interval
        QVERIFY(!groups[2].speedupRatioGeometricMean);
        QCOMPARE(groups[3].category, std::string("uncategorised"));
        QCOMPARE(groups[3].speedupPairs, std::size_t(0)); // both correct, but no speedups to compare
    }

    // The intervals come from a seeded bootstrap: the same rounds in another order give the same numbers.
    void intervalsDoNotDependOnOrder() {
        std::vector<RegradedRound> rounds;
        for (int i = 0; i < 20; ++i) {
            rounds.push_back(round("Math", i % 3 != 0, i % 4 != 0, 1.0 + i, 1.1 + i));
        }
        const AgreementGroup forward = mkb::analysis::kbxAgreement(rounds)[0];
        std::reverse(rounds.begin(), rounds.end());
        const AgreementGroup backward = mkb::analysis::kbxAgreement(rounds)[0];
        QCOMPARE(forward.agreementInterval->low, backward.agreementInterval->low);
        QCOMPARE(forward.agreementInterval->high, backward.agreementInterval->high);
        QCOMPARE(forward.speedupRatioInterval->low, backward.speedupRatioInterval->low);
    }

    void eachDisagreementNamesTheRuleBehindIt() {
        using mkb::analysis::kbxDisagreementRule;
        using mkb::analysis::OurFailure;
        const auto key = [](bool theirs, OurFailure ours) {
            const std::string rule = kbxDisagreementRule(theirs, ours);
            return QString::fromStdString(rule.substr(0, rule.find(':')));
        };
        QCOMPARE(key(true, {true, "", "", false}), QString());
        QCOMPARE(key(false, {false, "", "solve raised", false}), QString());
        QCOMPARE(key(false, {true, "", "", false}), QString("their failure"));
        QCOMPARE(
            key(true, {false, "no_launch", "compliance: no_launch: a solve call made no triton kernel launch", false}),
            QString("launch rule"));
        QCOMPARE(key(true, {false, "no_kernel", "compliance: no_kernel", false}), QString("launch rule"));
        QCOMPARE(key(true, {false, "eager_compute", "compliance: eager_compute: solve ran aten.mean", false}),
                 QString("boundary"));
        QCOMPARE(key(true, {false, "", "kernel.py does not parse: line 3: invalid syntax", false}),
                 QString("published code"));
        QCOMPARE(key(true, {false, "", "solve modified input 0 in place; inputs must be left unchanged", false}),
                 QString("in-place semantics"));
        QCOMPARE(key(true, {false, "",
                            "incorrect: draw 1: output (float32) max abs error 1.7e-05 against the "
                            "float64 anchor exceeds the allowance 8.6e-06",
                            false}),
                 QString("numerics"));
        QCOMPARE(key(true, {false, "", "solve raised _LinAlgError: cusolver error", false}), QString("inputs"));
        QCOMPARE(key(true, {false, "", "solve raised TimeoutError", true}), QString("time limit"));
        QCOMPARE(key(true, {false, "", "something new", false}), QString("other"));
    }

    void noRoundsGiveOneEmptyGroup() {
        const std::vector<AgreementGroup> groups = mkb::analysis::kbxAgreement({});
        QCOMPARE(groups.size(), std::size_t(1));
        QCOMPARE(groups[0].rounds, std::size_t(0));
        QVERIFY(!groups[0].agreement);
    }
};

QTEST_MAIN(KbxAgreementTest)
#include "tst_kbx_agreement.moc"
