// KernelBench-X's performance events against paired ratios: the claimed direction of each kind, the standing of an
// event (held, within noise, reversed, not timed), and the counts per kind and category.
#include "core/analysis/kbx_events.h"

#include <QtTest>

using namespace mkb::analysis;

namespace {

TransitionEvent eventOf(const char* category, const char* kinds, std::optional<PairedRatio> paired,
                        std::optional<double> claimed = {}) {
    TransitionEvent result;
    result.task = std::string(category) + "/task";
    result.category = category;
    result.kinds = kinds;
    result.beforeIndex = 1;
    result.afterIndex = 2;
    result.paired = paired;
    result.claimedRatio = claimed;
    if (!paired) {
        result.notTimed = "fails under our grader";
    }
    return result;
}

PairedRatio ratio(double value, double low, double high) {
    return PairedRatio{value, low, high, 200};
}

} // namespace

class KbxEventsTest : public QObject {
    Q_OBJECT
private slots:
    void kindsClaimADirection() {
        QCOMPARE(claimedDirection("speedup_increase"), 1);
        QCOMPARE(claimedDirection("regression_perf"), -1);
        QCOMPARE(claimedDirection("regression_exe"), -1);
        QCOMPARE(claimedDirection("exe_fail_to_pass"), 0);
        QCOMPARE(performanceKinds("exe_fail_to_pass,speedup_increase"), std::vector<std::string>{"speedup_increase"});
        QCOMPARE(performanceKinds("regression_exe, regression_perf"),
                 (std::vector<std::string>{"regression_exe", "regression_perf"}));
    }

    void standingFollowsTheInterval() {
        QCOMPARE(eventStanding(eventOf("Math", "speedup_increase", ratio(1.2, 1.1, 1.3)), 1), EventStanding::Held);
        QCOMPARE(eventStanding(eventOf("Math", "speedup_increase", ratio(1.01, 0.98, 1.04)), 1),
                 EventStanding::WithinNoise);
        QCOMPARE(eventStanding(eventOf("Math", "speedup_increase", ratio(0.8, 0.75, 0.85)), 1),
                 EventStanding::Reversed);
        QCOMPARE(eventStanding(eventOf("Math", "regression_perf", ratio(0.8, 0.75, 0.85)), -1), EventStanding::Held);
        QCOMPARE(eventStanding(eventOf("Math", "regression_perf", std::nullopt), -1), EventStanding::NotTimed);
        QCOMPARE(std::string(toString(EventStanding::WithinNoise)), std::string("within noise"));
    }

    // regression_exe is judged on our verdict of the after kernel, not on a ratio.
    void anExecutionRegressionHoldsWhenOurGraderFindsTheAfterKernelWrong() {
        TransitionEvent broken = eventOf("Math", "regression_exe,regression_perf", std::nullopt);
        broken.afterFailsOurs = true;
        QCOMPARE(kindStanding(broken, "regression_exe"), EventStanding::Held);
        QCOMPARE(kindStanding(broken, "regression_perf"), EventStanding::NotTimed);
        const TransitionEvent fine = eventOf("Math", "regression_exe", ratio(1.0, 0.98, 1.02));
        QCOMPARE(kindStanding(fine, "regression_exe"), EventStanding::Reversed);
        const EventsSummary summary = kbxEventsSummary({broken});
        QCOMPARE(summary.groups.front().kind, std::string("regression_exe"));
        QCOMPARE(summary.groups.front().held, std::size_t(1));
        QCOMPARE(*summary.groups.front().heldShare.share, 1.0);
        QVERIFY(!summary.groups.front().pairedGeometricMean); // no ratio to average
    }

    // Pooling: two speedup increases, one held and one within noise; Math: a regression of two kinds (counted under
    // both), not timed; an event with no performance kind is left out.
    void summaryCountsPerKindAndCategory() {
        const std::vector<TransitionEvent> events{eventOf("Pooling", "speedup_increase", ratio(1.2, 1.1, 1.3), 2.0),
                                                  eventOf("Pooling", "speedup_increase", ratio(1.0, 0.97, 1.03), 1.05),
                                                  eventOf("Math", "regression_exe,regression_perf", std::nullopt),
                                                  eventOf("Activation", "exe_fail_to_pass", ratio(1.0, 0.9, 1.1))};
        const EventsSummary summary = kbxEventsSummary(events);
        QCOMPARE(summary.rows.size(), std::size_t(4)); // 2 increases + 1 event under 2 regression kinds
        QVERIFY(!summary.groups.empty());
        const EventGroup& increases = summary.groups.front();
        QCOMPARE(increases.kind, std::string("speedup_increase"));
        QCOMPARE(increases.category, std::string());
        QCOMPARE(increases.events, std::size_t(2));
        QCOMPARE(increases.held, std::size_t(1));
        QCOMPARE(increases.withinNoise, std::size_t(1));
        QCOMPARE(*increases.heldShare.share, 0.5);
        bool sawRegression = false;
        for (const EventGroup& group : summary.groups) {
            if (group.kind == "regression_perf" && group.category.empty()) {
                sawRegression = true;
                QCOMPARE(group.notTimed, std::size_t(1));
                QVERIFY(!group.heldShare.share); // nothing timed
                QCOMPARE(group.notTimedReasons.front().first, std::string("fails under our grader"));
            }
            QVERIFY(group.kind != "exe_fail_to_pass");
        }
        QVERIFY(sawRegression);
    }
};

QTEST_MAIN(KbxEventsTest)
#include "tst_kbx_events.moc"
