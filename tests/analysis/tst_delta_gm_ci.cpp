// Golden tests of ΔGM's 95% bootstrap CI: hand-computed intervals, an exact enumeration of the bootstrap as an
// independent implementation, determinism, and the cases without an interval.
#include "analysis_fixtures.h"

#include "core/analysis/stats.h"
#include "core/analysis/transfer.h"

#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

/// A resolved comparison whose paired ratio (clipped effective speedups, both above 1) is skill / base = ratio.
Comparison ratioCell(double ratio) {
    return cell(passing(1), passing(2.0), passing(2.0 * ratio));
}

/// The p-quantile of sorted values, linear between order statistics (written here independently of stats.cpp).
double exactQuantile(const std::vector<double>& sorted, double p) {
    const double position = p * double(sorted.size() - 1);
    const auto low = std::size_t(position);
    const std::size_t high = std::min(low + 1, sorted.size() - 1);
    return sorted[low] + (position - double(low)) * (sorted[high] - sorted[low]);
}

/// The whole bootstrap distribution of the geometric mean of four values: all 4^4 equally likely resamples.
std::vector<double> exactBootstrapOfFour(const std::vector<double>& values) {
    std::vector<double> means;
    for (int code = 0; code < 256; ++code) {
        double product = 1;
        for (int draw = 0, rest = code; draw < 4; ++draw, rest /= 4) {
            product *= values[std::size_t(rest % 4)];
        }
        means.push_back(std::pow(product, 0.25));
    }
    std::sort(means.begin(), means.end());
    return means;
}

} // namespace

class DeltaGmCiTest : public QObject {
    Q_OBJECT
private slots:
    // two cells a < b: a resample's geomean is a (p 1/4), √ab (1/2) or b (1/4); with 1000 resamples the 2.5% and
    // 97.5% quantiles fall on a and b, so the CI of ΔGM is [a − 1, b − 1] by hand
    void deltaGmCi_twoCellsSpanTheirRatios() {
        const std::vector<Comparison> cells{ratioCell(0.9), ratioCell(1.2)};
        const std::optional<Interval> ci = deltaGeometricMeanCi(cells);
        QVERIFY(ci);
        QVERIFY(std::fabs(ci->low - (0.9 - 1)) < 1e-12);
        QVERIFY(std::fabs(ci->high - (1.2 - 1)) < 1e-12);
        MKB_NEAR_OPT(deltaGeometricMean(cells), std::sqrt(0.9 * 1.2) - 1);
    }

    // four cells: the Monte Carlo interval lies within the exact bootstrap distribution's 1%–5% (and 95%–99%)
    // quantiles, computed by enumerating all 256 resamples
    void deltaGmCi_agreesWithTheExactBootstrapOfFourCells() {
        const std::vector<double> ratios{0.95, 1.0, 1.03, 1.3};
        std::vector<Comparison> cells;
        for (double ratio : ratios) {
            cells.push_back(ratioCell(ratio));
        }
        const std::vector<double> exact = exactBootstrapOfFour(ratios);
        const std::optional<Interval> ci = deltaGeometricMeanCi(cells);
        QVERIFY(ci);
        QVERIFY2(ci->low + 1 >= exactQuantile(exact, 0.01) - 1e-12 && ci->low + 1 <= exactQuantile(exact, 0.05) + 1e-12,
                 qPrintable(QString::number(ci->low)));
        QVERIFY2(ci->high + 1 >= exactQuantile(exact, 0.95) - 1e-12 &&
                     ci->high + 1 <= exactQuantile(exact, 0.99) + 1e-12,
                 qPrintable(QString::number(ci->high)));
        const double point = *deltaGeometricMean(cells);
        QVERIFY(ci->low < point && point < ci->high);
    }

    // the same cells in another order, and a second call, give the very same interval (reproducible reports)
    void deltaGmCi_isDeterministicAndOrderFree() {
        const std::vector<Comparison> forward{ratioCell(0.8), ratioCell(1.1), ratioCell(1.02), ratioCell(1.4),
                                              ratioCell(0.97)};
        const std::vector<Comparison> backward(forward.rbegin(), forward.rend());
        const std::optional<Interval> first = deltaGeometricMeanCi(forward);
        const std::optional<Interval> again = deltaGeometricMeanCi(forward);
        const std::optional<Interval> reversed = deltaGeometricMeanCi(backward);
        QVERIFY(first && again && reversed);
        QCOMPARE(first->low, again->low);
        QCOMPARE(first->high, again->high);
        QCOMPARE(first->low, reversed->low);
        QCOMPARE(first->high, reversed->high);
        QVERIFY(first->low < first->high);
    }

    // one resolved cell has no interval ("n/a"): resampling one value cannot show how much cells vary, and a
    // collapsed [r−1, r−1] would read as certainty; no cells, none either
    void deltaGmCi_oneCellHasNone() {
        QVERIFY(!deltaGeometricMeanCi(std::vector<Comparison>{ratioCell(1.2)}));
        QVERIFY(!deltaGeometricMeanCi(std::vector<Comparison>{}));
        QVERIFY(!geometricMeanBootstrapCi({1.5}));
        const TransferSummary summary = transferSummary(std::vector<Comparison>{ratioCell(1.2)});
        MKB_NEAR_OPT(summary.deltaGeometricMean, 0.2);
        QVERIFY(!summary.deltaGeometricMeanCi);
    }

    // cells that all agree give a point interval: every resample is the same
    void deltaGmCi_identicalCellsCollapseToThePoint() {
        const std::optional<Interval> ci =
            deltaGeometricMeanCi(std::vector<Comparison>{ratioCell(1.1), ratioCell(1.1), ratioCell(1.1)});
        QVERIFY(ci);
        QVERIFY(std::fabs(ci->low - 0.1) < 1e-12 && std::fabs(ci->high - 0.1) < 1e-12);
    }

    // only resolved comparisons enter the resampling, and transferSummary carries the same interval
    void deltaGmCi_resamplesOnlyResolvedCells() {
        std::vector<Comparison> cells{ratioCell(0.9), ratioCell(1.2), unresolvedCell(passing(1), passing(1))};
        const std::optional<Interval> ci = deltaGeometricMeanCi(cells);
        QVERIFY(ci);
        QVERIFY(std::fabs(ci->low + 0.1) < 1e-12 && std::fabs(ci->high - 0.2) < 1e-12);
        const TransferSummary summary = transferSummary(cells);
        QVERIFY(summary.deltaGeometricMeanCi);
        QCOMPARE(summary.deltaGeometricMeanCi->low, ci->low);
        QCOMPARE(summary.deltaGeometricMeanCi->high, ci->high);
    }

    // a non-positive value leaves no geometric mean, hence no interval
    void geometricMeanCi_refusesNonPositiveValues() {
        QVERIFY(!geometricMeanBootstrapCi({1.0, 0.0}));
        QVERIFY(!geometricMeanBootstrapCi({1.0, -2.0, 3.0}));
        QVERIFY(geometricMeanBootstrapCi({1.0, 2.0}));
    }
};

QTEST_APPLESS_MAIN(DeltaGmCiTest)
#include "tst_delta_gm_ci.moc"
