// ProjectData suite: loading a fixture store off the GUI thread, superseded loads, failures and clearing, and the
// overview's bootstrap intervals (ΔGM, S and lift of the rows, the family bars and the direction matrix) arriving after
// its numbers.
#include "gui/project/project_data.h"
#include "tst_project_data_fixture.h"

#include "gui/overview/overview_model.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using mkb::gui::OverviewRow;
using mkb::gui::ProjectData;

namespace {

bool sameInterval(const std::optional<mkb::analysis::Interval>& a, const std::optional<mkb::analysis::Interval>& b) {
    return a.has_value() == b.has_value() && (!a || (a->low == b->low && a->high == b->high));
}

/// Every field of two overview rows, the interval bounds exactly: "" when equal, else the first difference.
QString rowDifference(const OverviewRow& left, const OverviewRow& right) {
    const QString group = QString::fromStdString(left.model + " " + left.direction);
    if (left.model != right.model || left.direction != right.direction) {
        return group + ": another group";
    }
    if (!sameInterval(left.deltaGeometricMeanCi, right.deltaGeometricMeanCi)) {
        return group + ": ΔGM interval";
    }
    if (!sameInterval(left.baseScoreCi, right.baseScoreCi) || !sameInterval(left.skillScoreCi, right.skillScoreCi) ||
        !sameInterval(left.liftCi, right.liftCi)) {
        return group + ": S or lift interval";
    }
    if (left.intervalsPending != right.intervalsPending) {
        return group + ": intervals pending";
    }
    const bool same = left.comparisons == right.comparisons && left.resolved == right.resolved &&
                      left.transferRate == right.transferRate && left.deltaGeometricMean == right.deltaGeometricMean &&
                      left.harmRate == right.harmRate && left.baseScore == right.baseScore &&
                      left.skillScore == right.skillScore && left.lift == right.lift &&
                      left.basePassRate == right.basePassRate && left.skillPassRate == right.skillPassRate &&
                      left.sourcePassed == right.sourcePassed && left.skillCoverage == right.skillCoverage &&
                      left.judgedPaired == right.judgedPaired && left.fellBack == right.fellBack &&
                      left.withinNoise == right.withinNoise && left.withRetiming == right.withRetiming;
    return same ? QString() : group + ": a metric other than the interval";
}

/// "" when data's overview equals the one computed at once, intervals included, over its comparisons (the single
/// stage the overview had before its intervals became a job of their own): the rows (overviewRows), the family bars
/// (familyBars) and the direction matrix's lift intervals (analysis::directionMatrix's, whose groupMetrics computed
/// them), with no ΔGM interval in the matrix as before; else the first difference.
QString differenceFromSynchronous(const ProjectData& data) {
    const std::vector<OverviewRow> expected = mkb::gui::overviewRows(data.comparisons(), data.settings());
    if (expected.size() != data.overviewRows().size()) {
        return QStringLiteral("%1 rows, not %2").arg(data.overviewRows().size()).arg(expected.size());
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (QString difference = rowDifference(data.overviewRows()[i], expected[i]); !difference.isEmpty()) {
            return difference;
        }
    }
    const mkb::gui::FamilyBars bars = mkb::gui::familyBars(data.comparisons(), data.settings());
    if (bars.families != data.familyBars().families || bars.liftCi.size() != data.familyBars().liftCi.size() ||
        data.familyBars().intervalsPending) {
        return QStringLiteral("family bars: other families, or intervals pending");
    }
    for (std::size_t i = 0; i < bars.liftCi.size(); ++i) {
        if (!sameInterval(bars.liftCi[i], data.familyBars().liftCi[i]) || bars.lift[i] != data.familyBars().lift[i]) {
            return QStringLiteral("family bars: %1's lift or interval").arg(QString::fromStdString(bars.families[i]));
        }
    }
    const mkb::analysis::DirectionMatrix matrix = mkb::analysis::directionMatrix(data.comparisons(), data.settings());
    const mkb::analysis::DirectionMatrix& shown = data.directionMatrix();
    if (matrix.dsls != shown.dsls || matrix.cells.size() != shown.cells.size()) {
        return QStringLiteral("direction matrix: other DSLs");
    }
    for (std::size_t i = 0; i < matrix.cells.size(); ++i) {
        const mkb::analysis::LadderIntervals& want = matrix.cells[i].ladder.intervals;
        const mkb::analysis::LadderIntervals& got = shown.cells[i].ladder.intervals;
        if (!sameInterval(want.liftScore, got.liftScore) || !sameInterval(want.baseScore, got.baseScore) ||
            !sameInterval(want.skillScore, got.skillScore) || want.liftRates.size() != got.liftRates.size() ||
            matrix.cells[i].lift() != shown.cells[i].lift() || shown.cells[i].transfer.deltaGeometricMeanCi) {
            return QStringLiteral("direction matrix: %1's lift or intervals")
                .arg(QString::fromStdString(matrix.cells[i].direction()));
        }
    }
    return {};
}

/// Whether data's overview holds its numbers while every interval is unknown yet: marked pending and not set (no
/// fake interval).
bool everyIntervalPending(const ProjectData& data) {
    bool pending = !data.overviewRows().empty() && data.intervalsPending() && data.familyBars().intervalsPending;
    bool anyPoint = false; // the point estimates are in
    for (const OverviewRow& row : data.overviewRows()) {
        pending = pending && row.intervalsPending && !row.deltaGeometricMeanCi && !row.baseScoreCi &&
                  !row.skillScoreCi && !row.liftCi;
        anyPoint = anyPoint || (row.lift && row.deltaGeometricMean);
    }
    pending = pending && anyPoint;
    for (const std::optional<mkb::analysis::Interval>& interval : data.familyBars().liftCi) {
        pending = pending && !interval;
    }
    for (const mkb::analysis::DirectionCell& cell : data.directionMatrix().cells) {
        pending = pending && !cell.ladder.intervals.liftScore && !cell.ladder.intervals.baseScore;
    }
    return pending;
}

} // namespace

class ProjectDataTest : public QObject {
    Q_OBJECT
private slots:
    void loadsTrialsAndComparisons();
    void supersededLoadIsDropped();
    void missingStoreFailsAndKeepsData();
    void emptyPathClears();
    void overviewIntervalsArriveAfterTheNumbersAndEqualTheSynchronousOnes();
};

void ProjectDataTest::loadsTrialsAndComparisons() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("p.sqlite").toStdString());
    mkbguitest::writeTransferFixture(path);
    ProjectData data;
    QSignalSpy loaded(&data, &ProjectData::loaded);
    data.setStorePath(QString::fromStdString(path.string()));
    QVERIFY(data.isLoading());
    QVERIFY(loaded.wait(10000));
    QCOMPARE(loaded.count(), 1);
    QVERIFY(!data.isLoading());
    QCOMPARE(data.trials().size(), size_t(12));
    // alpha: p1 and p2 in two directions, beta: p1 in two directions.
    QCOMPARE(data.comparisons().size(), size_t(6));
    QCOMPARE(data.generation(), 1);
    QVERIFY(data.trial(data.trials().front().id) != nullptr);
    QVERIFY(data.trial(-5) == nullptr);
}

void ProjectDataTest::supersededLoadIsDropped() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("p.sqlite").toStdString());
    mkbguitest::writeTransferFixture(path);
    ProjectData data;
    QSignalSpy loaded(&data, &ProjectData::loaded);
    data.setStorePath(QString::fromStdString(path.string()));
    data.reload();
    data.reload();
    QVERIFY(data.waitUntilIdle());
    QCOMPARE(loaded.count(), 1); // only the newest of three loads is taken in
    QCOMPARE(data.generation(), 1);
    QCOMPARE(data.comparisons().size(), size_t(6));
}

void ProjectDataTest::missingStoreFailsAndKeepsData() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("p.sqlite").toStdString());
    mkbguitest::writeTransferFixture(path);
    ProjectData data;
    data.setStorePath(QString::fromStdString(path.string()));
    QVERIFY(data.waitUntilIdle());
    QSignalSpy failed(&data, &ProjectData::loadFailed);
    data.setStorePath(dir.filePath("missing.sqlite"));
    QVERIFY(failed.wait(10000));
    QVERIFY(!data.lastError().isEmpty());
    QCOMPARE(data.trials().size(), size_t(12));
}

void ProjectDataTest::emptyPathClears() {
    ProjectData data;
    mkb::TrialRecord trial;
    trial.id = 3;
    data.setTrials({trial});
    QCOMPARE(data.trials().size(), size_t(1));
    QSignalSpy loaded(&data, &ProjectData::loaded);
    data.setStorePath(QString());
    QCOMPARE(loaded.count(), 1);
    QVERIFY(data.trials().empty());
}

void ProjectDataTest::overviewIntervalsArriveAfterTheNumbersAndEqualTheSynchronousOnes() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("p.sqlite").toStdString());
    mkbguitest::writeTransferFixture(path);
    ProjectData data;
    QSignalSpy intervals(&data, &ProjectData::overviewIntervalsLoaded);
    bool pendingAtSummary = false;
    connect(&data, &ProjectData::summaryLoaded, this, [&] { pendingAtSummary = everyIntervalPending(data); });
    data.setStorePath(QString::fromStdString(path.string()));
    QVERIFY(data.waitUntilIdle());
    QVERIFY2(pendingAtSummary, "the rows, bars and matrix arrive before their intervals, which are marked pending");
    QCOMPARE(intervals.count(), 1);
    QVERIFY(!data.intervalsPending());
    QCOMPARE(differenceFromSynchronous(data), QString());
    std::size_t withInterval = 0;
    for (const OverviewRow& row : data.overviewRows()) {
        withInterval += row.deltaGeometricMeanCi && row.liftCi && row.baseScoreCi && row.skillScoreCi ? 1 : 0;
    }
    QVERIFY2(withInterval > 0, "the fixture has a group with two resolved comparisons, so intervals");
    std::size_t familyIntervals = 0;
    for (const std::optional<mkb::analysis::Interval>& interval : data.familyBars().liftCi) {
        familyIntervals += interval ? 1 : 0;
    }
    QVERIFY2(familyIntervals > 0, "a family with two resolved cells has a lift interval");
    std::size_t matrixIntervals = 0;
    for (const mkb::analysis::DirectionCell& cell : data.directionMatrix().cells) {
        matrixIntervals += cell.liftCi() ? 1 : 0;
    }
    QVERIFY2(matrixIntervals > 0, "a direction with two resolved cells has a lift interval");

    // New settings: the numbers are recomputed at once with their intervals pending; of two quick changes only the
    // newest one's intervals are taken in.
    mkb::analysis::AnalysisSettings settings = data.settings();
    settings.clipEffectiveSpeedup = false;
    data.setSettings(settings);
    QVERIFY(everyIntervalPending(data));
    settings.delta = 0.2;
    data.setSettings(settings);
    QVERIFY(data.waitUntilIdle());
    QCOMPARE(intervals.count(), 2);
    QCOMPARE(differenceFromSynchronous(data), QString());
}

QTEST_MAIN(ProjectDataTest)
#include "tst_project_data.moc"
