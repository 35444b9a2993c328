// The before/after planner: which submission pairs are timed, which are current or stale and why, and which
// transition kinds --kinds selects.
#include "core/protocol/transition_plan.h"
#include "core/protocol/transition_retimer.h"

#include <QTest>

using namespace mkb;

namespace {

TransitionRound round(int index, const std::string& kernel) {
    TransitionRound r;
    r.index = index;
    r.hasCode = !kernel.empty();
    r.imported = true;
    r.correct = true;
    r.kernel = kernel;
    r.kernelSha256 = kernel.empty() ? "" : "sha-" + kernel;
    return r;
}

TransitionPair pair(int before, int after) {
    TransitionPair p;
    p.trialId = 7;
    p.model = "kbx-geak";
    p.suite = "kernelbenchx";
    p.problemNumber = 106;
    p.problemSlug = "row_avg_pool1d";
    p.problemName = "pooling/106_row_avg_pool1d";
    p.arm = "solo_triton";
    p.dsl = "triton";
    p.kind = "speedup_increase";
    p.before = round(before, "k" + std::to_string(before));
    p.after = round(after, "k" + std::to_string(after));
    return p;
}

TransitionRetimingRecord storedFor(const TransitionPair& p, const std::string& device = "cuda:0",
                                   const std::string& grader = "gf") {
    TransitionRetimingRecord record;
    record.id = 42;
    record.model = p.model;
    record.suite = p.suite;
    record.problemNumber = p.problemNumber;
    record.replicate = p.replicate;
    record.arm = p.arm;
    record.beforeIndex = p.before.index;
    record.afterIndex = p.after.index;
    record.result.ok = true;
    record.result.device = device;
    record.result.graderFingerprint = grader;
    record.result.kernels = {{"before", "triton", p.before.kernelSha256, 0.002, std::nullopt},
                             {"after", "triton", p.after.kernelSha256, 0.001, std::nullopt}};
    return record;
}

RetimePlanRequest here() {
    RetimePlanRequest request;
    request.device = "cuda:0";
    request.graderFingerprint = "gf";
    return request;
}

} // namespace

class TransitionPlanTest : public QObject {
    Q_OBJECT

private slots:
    void aPairWithoutARetimingIsMissingAndOneWithAMatchingRecordIsCurrent() {
        const TransitionPair first = pair(1, 2);
        const TransitionPair second = pair(2, 3);
        const TransitionPlan plan = makeTransitionPlan({first, second}, {storedFor(second)}, here());
        QCOMPARE(plan.entries.size(), std::size_t(2));
        QCOMPARE(plan.entries[0].status, RetimeStatus::Missing);
        QVERIFY(plan.entries[0].retime);
        QCOMPARE(plan.entries[1].status, RetimeStatus::Current);
        QVERIFY(!plan.entries[1].retime);
        QCOMPARE(plan.entries[1].liveRetimingId, std::optional<std::int64_t>(42));
        QCOMPARE(plan.toRetime(), 1);
    }

    void aChangedKernelDeviceOrGraderMakesThePairStale() {
        TransitionPair changed = pair(1, 2);
        const TransitionRetimingRecord record = storedFor(changed);
        changed.after.kernelSha256 = "sha-edited";
        TransitionPlan plan = makeTransitionPlan({changed}, {record}, here());
        QCOMPARE(plan.entries[0].status, RetimeStatus::Stale);
        QVERIFY2(plan.entries[0].reason.find("the after kernel changed") == 0, plan.entries[0].reason.c_str());

        const TransitionPair same = pair(1, 2);
        plan = makeTransitionPlan({same}, {storedFor(same, "cuda:1")}, here());
        QCOMPARE(plan.entries[0].status, RetimeStatus::Stale);
        QCOMPARE(plan.entries[0].reason, std::string("re-timed on cuda:1, now cuda:0"));
        plan = makeTransitionPlan({same}, {storedFor(same, "cuda:0", "old")}, here());
        QCOMPARE(plan.entries[0].status, RetimeStatus::Stale);
        QVERIFY(plan.entries[0].reason.find("the grader changed") == 0);
    }

    void aRecordOfAnotherPairOrTrialIsIgnored() {
        const TransitionPair p = pair(1, 2);
        TransitionRetimingRecord other = storedFor(pair(2, 3));
        TransitionRetimingRecord otherArm = storedFor(p);
        otherArm.arm = "solo_cuda";
        const TransitionPlan plan = makeTransitionPlan({p}, {other, otherArm}, here());
        QCOMPARE(plan.entries[0].status, RetimeStatus::Missing);
    }

    void aPairWhoseRoundNeverRanOrHasNoCodeIsNotTimedWithItsReason() {
        TransitionPair neverRan = pair(1, 2);
        neverRan.before.imported = false;
        TransitionPair noCode = pair(1, 2);
        noCode.after = round(2, "");
        TransitionPair noKernel = pair(1, 2);
        noKernel.after.kernel.clear();
        noKernel.after.kernelProblem = "no function scaled_add in the code";
        TransitionPair wrongButRan = pair(3, 4);
        wrongButRan.after.correct = false; // ran, gave a wrong result: tried, the grader's draw decides
        const TransitionPlan plan =
            makeTransitionPlan({neverRan, noCode, noKernel, wrongButRan}, {storedFor(neverRan)}, here());
        QCOMPARE(plan.entries[0].status, RetimeStatus::NotRetimed);
        QCOMPARE(plan.entries[0].reason,
                 std::string("the before submission (1) never ran: its own verdict says it failed to load"));
        QVERIFY(!plan.entries[0].retime);
        QCOMPARE(plan.entries[1].reason, std::string("the after submission (2) has no stored kernel source"));
        QCOMPARE(plan.entries[2].reason, std::string("the after submission (2) gives no kernel to time: no function "
                                                     "scaled_add in the code"));
        QCOMPARE(plan.entries[3].status, RetimeStatus::Missing);
    }

    void redoCurrentRetimesCurrentPairsButNeverBlockedOnes() {
        RetimePlanRequest request = here();
        request.redoCurrent = true;
        const TransitionPair current = pair(1, 2);
        TransitionPair blocked = pair(2, 3);
        blocked.before.hasCode = false;
        const TransitionPlan plan = makeTransitionPlan({current, blocked}, {storedFor(current)}, request);
        QCOMPARE(plan.entries[0].status, RetimeStatus::Current);
        QVERIFY(plan.entries[0].retime);
        QVERIFY(!plan.entries[1].retime);
    }

    void kindsMatchAnyPartOfTheTransitionAndAStarMatchesByPrefix() {
        QVERIFY(transitionKindMatches("speedup_increase", {}));
        QVERIFY(transitionKindMatches("", {}));
        QVERIFY(transitionKindMatches("speedup_increase", {"speedup_increase"}));
        QVERIFY(transitionKindMatches("regression_exe,regression_perf", {"regression_perf"}));
        QVERIFY(transitionKindMatches("regression_exe,regression_perf", {"regression_*"}));
        QVERIFY(!transitionKindMatches("exe_fail_to_pass,perf_ok_newly", {"speedup_increase", "regression_*"}));
        QVERIFY(!transitionKindMatches("", {"speedup_increase"}));
        QVERIFY(!transitionKindMatches("speedup_increase_x", {"speedup_increase"}));
    }

    void aPairIsNamedByTrialAndSubmissions() {
        QCOMPARE(pair(2, 3).name(), std::string("kbx-geak p106 r1 solo_triton 2->3"));
    }
};

QTEST_GUILESS_MAIN(TransitionPlanTest)
#include "tst_transition_plan.moc"
