// ProjectData suite: loading a fixture store off the GUI thread, superseded loads, failures and clearing, and the
// overview's ΔGM intervals arriving after its rows.
#include "gui/project/project_data.h"
#include "tst_project_data_fixture.h"

#include "gui/overview/overview_model.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using mkb::gui::OverviewRow;
using mkb::gui::ProjectData;

namespace {

/// Every field of two overview rows, the interval bounds exactly: "" when equal, else the first difference.
QString rowDifference(const OverviewRow& left, const OverviewRow& right) {
    const auto sameInterval = [](const std::optional<mkb::analysis::Interval>& a,
                                 const std::optional<mkb::analysis::Interval>& b) {
        return a.has_value() == b.has_value() && (!a || (a->low == b->low && a->high == b->high));
    };
    const QString group = QString::fromStdString(left.model + " " + left.direction);
    if (left.model != right.model || left.direction != right.direction) {
        return group + ": another group";
    }
    if (!sameInterval(left.deltaGeometricMeanCi, right.deltaGeometricMeanCi)) {
        return group + ": ΔGM interval";
    }
    if (left.deltaGeometricMeanCiPending != right.deltaGeometricMeanCiPending) {
        return group + ": interval pending";
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

/// "" when data's overview rows equal overviewRows computed at once (intervals included) over its comparisons.
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
    return {};
}

} // namespace

class ProjectDataTest : public QObject {
    Q_OBJECT
private slots:
    void loadsTrialsAndComparisons();
    void supersededLoadIsDropped();
    void missingStoreFailsAndKeepsData();
    void emptyPathClears();
    void overviewIntervalsArriveAfterTheRowsAndEqualTheSynchronousOnes();
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

void ProjectDataTest::overviewIntervalsArriveAfterTheRowsAndEqualTheSynchronousOnes() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.filePath("p.sqlite").toStdString());
    mkbguitest::writeTransferFixture(path);
    ProjectData data;
    QSignalSpy intervals(&data, &ProjectData::overviewIntervalsLoaded);
    bool pendingAtSummary = false;
    connect(&data, &ProjectData::summaryLoaded, this, [&] {
        pendingAtSummary = !data.overviewRows().empty() && data.intervalsPending();
        for (const OverviewRow& row : data.overviewRows()) {
            pendingAtSummary = pendingAtSummary && row.deltaGeometricMeanCiPending && !row.deltaGeometricMeanCi;
        }
    });
    data.setStorePath(QString::fromStdString(path.string()));
    QVERIFY(data.waitUntilIdle());
    QVERIFY2(pendingAtSummary, "the rows arrive before their intervals");
    QCOMPARE(intervals.count(), 1);
    QVERIFY(!data.intervalsPending());
    QCOMPARE(differenceFromSynchronous(data), QString());
    std::size_t withInterval = 0;
    for (const OverviewRow& row : data.overviewRows()) {
        withInterval += row.deltaGeometricMeanCi ? 1 : 0;
    }
    QVERIFY2(withInterval > 0, "the fixture has a group with two resolved comparisons, so an interval");

    // New settings: the rows are recomputed at once with their intervals pending; of two quick changes only the
    // newest one's intervals are taken in.
    mkb::analysis::AnalysisSettings settings = data.settings();
    settings.clipEffectiveSpeedup = false;
    data.setSettings(settings);
    QVERIFY(data.intervalsPending());
    QVERIFY(data.overviewRows().front().deltaGeometricMeanCiPending);
    settings.delta = 0.2;
    data.setSettings(settings);
    QVERIFY(data.waitUntilIdle());
    QCOMPARE(intervals.count(), 2);
    QCOMPARE(differenceFromSynchronous(data), QString());
}

QTEST_MAIN(ProjectDataTest)
#include "tst_project_data.moc"
