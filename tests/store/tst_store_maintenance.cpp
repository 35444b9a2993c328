// store upkeep (core/store/store_maintenance): init tells a new store, an empty file, an older store and a current one
// apart; migrate leaves a current store alone and brings an older one forward; inspect and check never migrate.
#include "core/store/store_maintenance.h"
#include "store_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

class StoreMaintenanceTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::filesystem::path at(const char* name) const { return dir_.filePath(QString::fromUtf8(name)).toStdString(); }

private slots:
    void initTellsANewStoreAnEmptyFileAndACurrentStoreApart() {
        const auto fresh = at("deep/new.sqlite");
        auto created = mkb::initStore(fresh);
        QVERIFY2(created, created ? "" : created.error().message.c_str());
        QVERIFY(created->kind == mkb::StoreInitKind::Created);
        QCOMPARE(created->toVersion, mkb::Store::latestSchemaVersion());
        auto again = mkb::initStore(fresh);
        QVERIFY(again && again->kind == mkb::StoreInitKind::AlreadyCurrent);

        const auto empty = at("empty.sqlite");
        storetest::writeBytes(empty, "");
        auto initialised = mkb::initStore(empty);
        QVERIFY(initialised && initialised->kind == mkb::StoreInitKind::InitialisedEmpty);

        const auto text = at("notes.txt");
        storetest::writeBytes(text, "not a store\n");
        QVERIFY(!mkb::initStore(text));
        QCOMPARE(storetest::fileBytes(text), std::string("not a store\n")); // never overwritten
    }

    void initMigratesAnOlderStoreForward() {
        const auto old = at("init-old.sqlite");
        QVERIFY(storetest::writeVersion1Store(old));
        auto init = mkb::initStore(old);
        QVERIFY(init && init->kind == mkb::StoreInitKind::Migrated);
        QCOMPARE(init->fromVersion, 1);
        QCOMPARE(init->toVersion, mkb::Store::latestSchemaVersion());
    }

    void inspectAndCheckLeaveAnOlderStoreAsItIsAndMigrateBringsItForward() {
        const auto old = at("old.sqlite");
        QVERIFY(storetest::writeVersion1Store(old));
        auto info = mkb::inspectStore(old);
        QVERIFY2(info, info ? "" : info.error().message.c_str());
        QCOMPARE(info->schemaVersion, 1);
        auto problems = mkb::checkStore(old);
        QVERIFY(problems && problems->empty());
        QCOMPARE(*mkb::Store::fileSchemaVersion(old), 1);

        auto migrated = mkb::migrateStore(old);
        QVERIFY(migrated && migrated->changed());
        QCOMPARE(migrated->fromVersion, 1);
        QCOMPARE(*mkb::Store::fileSchemaVersion(old), mkb::Store::latestSchemaVersion());
        auto current = mkb::migrateStore(old);
        QVERIFY(current && !current->changed());
        QVERIFY(!mkb::migrateStore(at("absent.sqlite")));
        QVERIFY(!mkb::inspectStore(at("absent.sqlite")));
    }
};

QTEST_GUILESS_MAIN(StoreMaintenanceTest)
#include "tst_store_maintenance.moc"
