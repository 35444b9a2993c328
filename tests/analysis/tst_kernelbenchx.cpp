// Golden tests of the KernelBench-X metrics: accuracies, fast_p, speedup summaries, IOU/MFU distributions, η² of
// correctness by family and by model, and portability across devices.
#include "analysis_fixtures.h"

#include "core/analysis/kernelbenchx.h"
#include "core/analysis/portability.h"
#include "core/analysis/variance.h"

#include <QtTest>

#include <cmath>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

Attempt from(Attempt attempt, const std::string& model, const std::string& family) {
    attempt.model = model;
    attempt.family = family;
    return attempt;
}

/// K1 A/attention: correct 2.0, outliers ok, IOU 0.5, MFU 0.1
/// K2 A/moe:       correct 0.5, outliers wrong, quant passed, IOU 0.3
/// K3 B/attention: imported but not compliant, incorrect, quant failed
/// K4 B/moe:       not imported
/// K5 B/attention: correct 1.0 (tie at p = 1), IOU 0.9, MFU 0.3
/// K6 skipped: not graded, left out of everything
std::vector<Attempt> kernelBenchXFixture() {
    Attempt k1 = from(passing(2.0), "A", "attention");
    k1.outliersCorrect = true;
    k1.iou = 0.5;
    k1.mfu = 0.1;
    Attempt k2 = from(passing(0.5), "A", "moe");
    k2.outliersCorrect = false;
    k2.quantPassed = true;
    k2.iou = 0.3;
    Attempt k3 = from(failing(), "B", "attention");
    k3.compliant = false;
    k3.quantPassed = false;
    Attempt k4 = from(failing(), "B", "moe");
    k4.imported = false;
    k4.compliant = false;
    Attempt k5 = from(passing(1.0), "B", "attention");
    k5.iou = 0.9;
    k5.mfu = 0.3;
    Attempt k6 = from(skippedSkill(), "B", "moe");
    k6.correct = true; // must not count: a skipped arm is not graded
    return {k1, k2, k3, k4, k5, k6};
}

Attempt onDevice(Attempt attempt, const std::string& device, const std::string& source,
                 const std::string& dsl = "triton") {
    attempt.deviceName = device;
    attempt.finalKernelSource = source;
    attempt.problemNumber = 3;
    attempt.dsl = dsl;
    return attempt;
}

} // namespace

class KernelBenchXTest : public QObject {
    Q_OBJECT
private slots:
    // accuracy: call, execution, outlier and quantization rates over graded attempts
    void accuracyRates() {
        const AccuracySummary summary = accuracySummary(kernelBenchXFixture());
        QCOMPARE(summary.attempts, std::size_t(5));      // K6 is not graded
        MKB_NEAR_OPT(summary.callAccuracy, 0.6);         // K1, K2, K5 imported and compliant: 3/5
        MKB_NEAR_OPT(summary.executionAccuracy, 0.6);    // K1, K2, K5 correct: 3/5
        QCOMPARE(summary.outlierJudged, std::size_t(2)); // K1, K2
        MKB_NEAR_OPT(summary.outlierAccuracy, 0.5);      // K1 of {K1, K2}
        QCOMPARE(summary.quantJudged, std::size_t(2));   // K2, K3
        MKB_NEAR_OPT(summary.quantPassRate, 0.5);        // K2 of {K2, K3}
    }

    // a report group's chosen attempts (views, no copies) give the same figures as a copy of those attempts
    void chosenAttemptsEqualACopyOfThem() {
        const std::vector<Attempt> all = kernelBenchXFixture();
        const std::vector<std::size_t> picks{4, 0, 2}; // K5, K1, K3 (out of order on purpose)
        std::vector<const Attempt*> chosen;
        std::vector<Attempt> copied;
        for (std::size_t index : picks) {
            chosen.push_back(&all[index]);
            copied.push_back(all[index]);
        }
        const AttemptSet view(chosen);
        QCOMPARE(view.size(), std::size_t(3));
        QCOMPARE(view[0].speedup, 1.0);
        std::size_t visited = 0;
        for (const Attempt& attempt : view) {
            QCOMPARE(&attempt, chosen[visited++]);
        }
        QCOMPARE(visited, std::size_t(3));
        QVERIFY(AttemptSet().empty());
        QCOMPARE(AttemptSet(all).size(), all.size());

        const AccuracySummary fromView = accuracySummary(view);
        const AccuracySummary fromCopy = accuracySummary(copied);
        QCOMPARE(fromView.attempts, std::size_t(3));
        QCOMPARE(fromView.attempts, fromCopy.attempts);
        QCOMPARE(fromView.callAccuracy, fromCopy.callAccuracy);
        QCOMPARE(fromView.quantPassRate, fromCopy.quantPassRate);
        QCOMPARE(speedupSummary(view).geometricMeanSpeedup, speedupSummary(copied).geometricMeanSpeedup);
        QCOMPARE(iouDistribution(view).count, iouDistribution(copied).count);
    }

    // fast_p: correct and strictly faster than p, over graded attempts
    void fastPStrictlyAboveP() {
        const std::vector<FastP> rows = fastP(kernelBenchXFixture());
        // correct speedups {2.0, 0.5, 1.0} of 5 graded:
        // p=0: 3/5; p=0.5: {2.0, 1.0} 2/5 (0.5 is not > 0.5); p=0.8: 2/5; p=1: {2.0} 1/5 (1.0 is not > 1);
        // p=1.5: 1/5; p=2: 0/5 (2.0 is not > 2)
        const std::vector<double> expected{0.6, 0.4, 0.4, 0.2, 0.2, 0.0};
        QCOMPARE(rows.size(), expected.size());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            MKB_NEAR_OPT(rows[i].share, expected[i]);
        }
        QCOMPARE(rows[3].p, 1.0);
    }

    // speedups: geometric mean over correct attempts, share slower than eager
    void speedupGeometricMeanAndSlowerShare() {
        const SpeedupSummary summary = speedupSummary(kernelBenchXFixture());
        QCOMPARE(summary.correctTimed, std::size_t(3));
        MKB_NEAR_OPT(summary.geometricMeanSpeedup, 1.0);     // (2.0 · 0.5 · 1.0)^(1/3) = 1
        MKB_NEAR_OPT(summary.slowerThanEagerShare, 1.0 / 3); // 0.5 only; 1.0 is not slower
    }

    // distributions: IOU and MFU five-number summaries with the mean
    void iouAndMfuDistributions() {
        const Distribution iou = iouDistribution(kernelBenchXFixture());
        // sorted {0.3, 0.5, 0.9}: q1 at position 0.5 → 0.4, q3 at 1.5 → 0.7, mean 1.7/3
        QCOMPARE(iou.count, std::size_t(3));
        MKB_NEAR_OPT(iou.min, 0.3);
        MKB_NEAR_OPT(iou.q1, 0.4);
        MKB_NEAR_OPT(iou.median, 0.5);
        MKB_NEAR_OPT(iou.q3, 0.7);
        MKB_NEAR_OPT(iou.max, 0.9);
        MKB_NEAR_OPT(iou.mean, 1.7 / 3);
        const Distribution mfu = mfuDistribution(kernelBenchXFixture());
        // sorted {0.1, 0.3}: q1 at 0.25 → 0.15, median 0.2, q3 at 0.75 → 0.25
        QCOMPARE(mfu.count, std::size_t(2));
        MKB_NEAR_OPT(mfu.q1, 0.15);
        MKB_NEAR_OPT(mfu.median, 0.2);
        MKB_NEAR_OPT(mfu.q3, 0.25);
        MKB_NEAR_OPT(mfu.mean, 0.2);
    }

    // KernelBench-X: empty input gives zero counts and null rates
    void kernelBenchXEmptyInput() {
        const KernelBenchXSummary summary = kernelBenchXSummary({});
        QCOMPARE(summary.accuracy.attempts, std::size_t(0));
        QVERIFY(!summary.accuracy.callAccuracy && !summary.accuracy.executionAccuracy);
        QVERIFY(!summary.accuracy.outlierAccuracy && !summary.accuracy.quantPassRate);
        QCOMPARE(summary.fastP.size(), std::size_t(6));
        for (const FastP& row : summary.fastP) {
            QVERIFY(!row.share);
        }
        QVERIFY(!summary.speedups.geometricMeanSpeedup && !summary.speedups.slowerThanEagerShare);
        QCOMPARE(summary.iou.count, std::size_t(0));
        QVERIFY(!summary.iou.median && !summary.mfu.mean);
    }

    // η²: share of correctness variance explained by family vs by model
    void etaSquaredFamilyVersusModel() {
        const CorrectnessVariance variance = correctnessVariance(kernelBenchXFixture());
        QCOMPARE(variance.attempts, std::size_t(5));
        // y = {1, 1, 0, 0, 1}, mean 0.6, SST = 3·0.16 + 2·0.36 = 1.2
        // by model: A {1,1} → 2·0.4² = 0.32; B {0,0,1} → 3·(1/3 − 0.6)² = 0.21333; SSB = 0.53333 → η² = 4/9
        MKB_NEAR_OPT(variance.byModel, 4.0 / 9);
        // by family: attention {1,0,1} → 3·(2/3 − 0.6)² = 0.013333; moe {1,0} → 2·0.1² = 0.02; SSB = 0.033333
        // → η² = 0.033333 / 1.2 = 1/36
        MKB_NEAR_OPT(variance.byFamily, 1.0 / 36);
    }

    // η²: the KernelBench-X category is a grouping of its own, and uncategorised problems form one group
    void etaSquaredByCategoryGroupsUncategorisedProblemsTogether() {
        std::vector<Attempt> attempts = kernelBenchXFixture();
        const std::vector<std::string> categories{"Fusion", "Fusion", "Index", "", "", "Index"}; // K6 is not graded
        for (std::size_t i = 0; i < attempts.size(); ++i) {
            attempts[i].category = categories[i];
        }
        const CorrectnessVariance variance = correctnessVariance(attempts);
        // y = {1, 1, 0, 0, 1}, SST = 1.2; Fusion {1,1} → 2·0.4² = 0.32; Index {0} → 0.6² = 0.36;
        // uncategorised {0,1} → 2·0.1² = 0.02; SSB = 0.70 → η² = 7/12
        MKB_NEAR_OPT(variance.byCategory, 7.0 / 12);
        MKB_NEAR_OPT(variance.byModel, 4.0 / 9);
        for (Attempt& attempt : attempts) {
            attempt.category.clear();
        }
        MKB_NEAR_OPT(correctnessVariance(attempts).byCategory, 0.0);
    }

    // η²: a single family explains nothing; uniform correctness has no variance to explain
    void etaSquaredEdgeCases() {
        std::vector<Attempt> oneFamily = kernelBenchXFixture();
        for (Attempt& attempt : oneFamily) {
            attempt.family = "attention";
        }
        MKB_NEAR_OPT(correctnessVariance(oneFamily).byFamily, 0.0);
        const std::vector<Attempt> allCorrect{from(passing(1), "A", "x"), from(passing(2), "B", "y")};
        QVERIFY(!correctnessVariance(allCorrect).byModel);
        QVERIFY(!correctnessVariance({}).byFamily);
        QVERIFY(!etaSquared({1, 0}, {"only one group label"}));
    }

    // portability: the same kernel on several devices, max/min speedup over the devices where it passed
    void portabilityMaxOverMin() {
        const std::vector<Attempt> attempts{
            onDevice(passing(2.0), "H100", "kernel K"),
            onDevice(passing(3.0), "H100", "kernel K"), // H100 mean (2.0 + 3.0)/2 = 2.5
            onDevice(passing(1.0), "A100", "kernel K"),
            onDevice(failing(), "L4", "kernel K"),
            onDevice(passing(5.0), "H100", "kernel J"),         // one device: left out
            onDevice(passing(1.0), "A100", "kernel K", "cuda"), // other DSL, one device: left out
        };
        const std::vector<PortabilityGroup> groups = portability(attempts);
        QCOMPARE(groups.size(), std::size_t(1));
        const PortabilityGroup& group = groups.front();
        QCOMPARE(group.dsl, std::string("triton"));
        QCOMPARE(group.devices.size(), std::size_t(3));
        QCOMPARE(group.devices[0].deviceName, std::string("A100"));
        QCOMPARE(group.devices[1].evaluations, std::size_t(2));
        MKB_NEAR(group.devices[1].speedup, 2.5);
        QVERIFY(!group.devices[2].passed);
        MKB_NEAR_OPT(group.maxOverMin, 2.5); // 2.5 (H100) / 1.0 (A100); L4 failed
        QCOMPARE(group.fastestDevice, std::string("H100"));
        QCOMPARE(group.slowestDevice, std::string("A100"));
        MKB_NEAR_OPT(portabilitySpread(groups).median, 2.5);
    }

    // portability: one passing device gives no ratio
    void portabilityNeedsTwoPassingDevices() {
        const std::vector<PortabilityGroup> groups =
            portability(std::vector<Attempt>{onDevice(passing(2.0), "H100", "k"), onDevice(failing(), "L4", "k")});
        QCOMPARE(groups.size(), std::size_t(1));
        QVERIFY(!groups.front().maxOverMin);
        QCOMPARE(portabilitySpread(groups).count, std::size_t(0));
    }
};

QTEST_APPLESS_MAIN(KernelBenchXTest)
#include "tst_kernelbenchx.moc"
