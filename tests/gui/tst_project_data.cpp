// ProjectData suite: loading a fixture store off the GUI thread, superseded loads, failures and clearing.
#include "gui/project/project_data.h"
#include "tst_project_data_fixture.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using mkb::gui::ProjectData;

class ProjectDataTest : public QObject {
    Q_OBJECT
private slots:
    void loadsTrialsAndComparisons();
    void supersededLoadIsDropped();
    void missingStoreFailsAndKeepsData();
    void emptyPathClears();
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

QTEST_MAIN(ProjectDataTest)
#include "tst_project_data.moc"
