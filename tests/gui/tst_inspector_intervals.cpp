// The inspector's per-verdict speedup intervals say what they cover: "within-grading" always, and where the device
// has a calibration, the interval across gradings widened by the spread its A/A controls measured, with that figure.
#include "gui/inspector/inspector_view.h"

#include "core/analysis/calibration.h"
#include "core/report/report_model.h"
#include "core/store/store.h"
#include "gui/project/project_data.h"

#include "analysis/analysis_fixtures.h"

#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

using namespace mkb::gui;
using mkbtest::passing;

namespace {

/// Three unpaired A/A controls: gaps |ln(s2/s1)| of ln 1.1, 0 and ln 1.05; a fourth whose second grading failed.
mkb::CalibrationRecord calibration() {
    mkb::CalibrationRecord record;
    record.device = "cuda:0";
    record.deviceName = "NVIDIA H200";
    record.graderFingerprint = "gf";
    record.selection = "--problems 1-3";
    record.detailJson = R"([{"problem": 1, "unpaired": [1.0, 1.1]}, {"problem": 2, "unpaired": [2.0, 2.0]},
                            {"problem": 3, "unpaired": [1.5, 1.575]}, {"problem": 4, "unpaired": [1.2, 0]},
                            {"problem": 5, "paired": 1.0}])";
    record.createdAt = "2026-11-30T10:00:00Z";
    return record;
}

/// A cell whose base passed at 2.0 with a within-grading CI [1.9, 2.1], graded on the device given.
mkb::analysis::Comparison cellOn(const std::string& device) {
    mkb::analysis::Attempt base = passing(2.0);
    base.speedupCiLow = 1.9;
    base.speedupCiHigh = 2.1;
    base.deviceName = device;
    return mkbtest::cell(passing(1), base, passing(1));
}

QString baseSpeedupCell(InspectorView& view) {
    auto* arms = view.findChild<QTableWidget*>(QStringLiteral("inspectorArms"));
    return arms && arms->item(1, 5) ? arms->item(1, 5)->text() : QString();
}

/// Shows comparison and waits for its stored detail (the calibrations among it) to arrive.
bool showWithDetail(InspectorView& view, const mkb::analysis::Comparison& comparison) {
    QSignalSpy shown(&view, &InspectorView::detailShown);
    view.showComparison(comparison);
    return shown.wait(10000);
}

} // namespace

class InspectorIntervalsTest : public QObject {
    Q_OBJECT
private slots:
    // the spread is the 95th percentile of the A/A gaps (linear: 0.0488 + 0.9 × (0.0953 − 0.0488) = 0.0907), over the
    // controls where both gradings passed; the across interval divides and multiplies by exp(spread / 2)
    void spreadIsTheNinetyFifthPercentileOfTheAaGaps() {
        const std::vector<mkb::analysis::UnpairedControl> controls = mkb::report::unpairedAaControls(calibration());
        QCOMPARE(controls.size(), std::size_t(4));
        const std::optional<mkb::analysis::BetweenGradingSpread> spread = mkb::analysis::betweenGradingSpread(controls);
        QVERIFY(spread.has_value());
        QCOMPARE(spread->controls, std::size_t(3));
        const double expected = std::log(1.05) + 0.9 * (std::log(1.1) - std::log(1.05));
        QVERIFY(std::fabs(spread->logSpread - expected) < 1e-12);
        const mkb::analysis::Interval across = mkb::analysis::acrossGradings(1.9, 2.1, *spread);
        QVERIFY(std::fabs(across.low - 1.9 / std::exp(expected / 2)) < 1e-12);
        QVERIFY(std::fabs(across.high - 2.1 * std::exp(expected / 2)) < 1e-12);
        QVERIFY(!mkb::analysis::betweenGradingSpread({}).has_value());
        mkb::CalibrationRecord unreadable = calibration();
        unreadable.detailJson = "not json";
        QVERIFY(mkb::report::unpairedAaControls(unreadable).empty());
    }

    // without a store (so without a calibration) the interval is labelled within-grading, and the tooltip says how
    // to learn the spread
    void verdictIntervalIsLabelledWithinGrading() {
        InspectorView view;
        view.showComparison(cellOn("NVIDIA H200"));
        QCOMPARE(baseSpeedupCell(view), QStringLiteral("2.00 [1.90, 2.10] within-grading"));
        auto* arms = view.findChild<QTableWidget*>(QStringLiteral("inspectorArms"));
        QVERIFY(arms->item(1, 5)->toolTip().contains(QStringLiteral("run mkb calibrate")));
    }

    // with the device's calibration in the store, the across-gradings interval and the A/A figure stand beside it;
    // another device's calibration does not apply
    void calibratedDeviceShowsTheSpreadAcrossGradings() {
        QTemporaryDir dir;
        auto store = mkb::Store::open(std::filesystem::path(dir.path().toStdString()) / "calibrated.sqlite");
        QVERIFY(store.ok());
        QVERIFY((*store)->insertCalibration(calibration()).ok());
        ProjectData data;
        data.setStorePath(dir.filePath(QStringLiteral("calibrated.sqlite")));
        QVERIFY(data.waitUntilIdle());
        InspectorView view;
        view.setProjectData(&data);
        QVERIFY(showWithDetail(view, cellOn("NVIDIA H200")));
        // exp(0.0907) − 1 = 9.5%; 1.9 / exp(0.04535) = 1.82, 2.1 × exp(0.04535) = 2.20
        QCOMPARE(baseSpeedupCell(view),
                 QStringLiteral("2.00 [1.90, 2.10] within-grading · [1.82, 2.20] across gradings (A/A ±9.5%)"));
        auto* arms = view.findChild<QTableWidget*>(QStringLiteral("inspectorArms"));
        QVERIFY2(arms->item(1, 5)->toolTip().contains(QStringLiteral("95th percentile of 3 controls")),
                 qPrintable(arms->item(1, 5)->toolTip()));
        QVERIFY(showWithDetail(view, cellOn("NVIDIA A100")));
        QCOMPARE(baseSpeedupCell(view), QStringLiteral("2.00 [1.90, 2.10] within-grading"));
    }
};

QTEST_MAIN(InspectorIntervalsTest)
#include "tst_inspector_intervals.moc"
