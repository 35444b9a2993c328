// retime store (core/protocol/retime_job): the device is named from this host's latest probe of it, and a store
// that cannot be opened or a grader that cannot start stops the re-timing at that stage with a message.
#include "core/grader_client/device_probe.h"
#include "core/protocol/retime_job.h"
#include "core/store/store.h"

#include <QTemporaryDir>
#include <QTest>

namespace {

mkb::DeviceRecord probeOf(const std::string& name, const std::string& device, const std::string& host,
                          const std::string& probedAt, const std::string& uuid) {
    mkb::DeviceRecord record;
    record.name = name;
    record.uuid = uuid;
    record.peaksJson = R"({"copy_gbps": 4000, "device": ")" + device + R"(", "host": ")" + host + R"("})";
    record.probedAt = probedAt;
    return record;
}

} // namespace

class RetimeStoreTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

    std::filesystem::path storeAt(const QString& name) {
        const std::filesystem::path path = dir_.filePath(name).toStdString();
        auto store = mkb::Store::open(path, mkb::OpenMode::CreateIfMissing);
        if (!store) {
            qFatal("%s", store.error().message.c_str());
        }
        return path;
    }

private slots:
    void theDeviceIsNamedFromThisHostsLatestProbeOfIt() {
        auto store = mkb::Store::open(storeAt(QStringLiteral("devices.sqlite")), mkb::OpenMode::MustExist);
        QVERIFY(store);
        const std::string host = mkb::currentHostName();
        QVERIFY(!host.empty());
        QCOMPARE(mkb::storedDeviceName(**store, "cuda:0"), std::string()); // never probed
        QVERIFY((*store)->saveDevice(probeOf("NVIDIA A100", "cuda:0", host, "2026-01-01T00:00:00Z", "GPU-a")));
        QVERIFY((*store)->saveDevice(probeOf("NVIDIA H200", "cuda:0", host, "2026-02-01T00:00:00Z", "GPU-b")));
        QVERIFY((*store)->saveDevice(probeOf("NVIDIA B200", "cuda:1", host, "2026-03-01T00:00:00Z", "GPU-c")));
        QVERIFY((*store)->saveDevice(probeOf("NVIDIA L4", "cuda:0", host + "-other", "2026-04-01T00:00:00Z", "GPU-d")));
        QCOMPARE(mkb::storedDeviceName(**store, "cuda:0"), std::string("NVIDIA H200"));
        QCOMPARE(mkb::storedDeviceName(**store, "cuda:1"), std::string("NVIDIA B200"));
    }

    void aMissingStoreStopsBeforeTheGraderStarts() {
        bool started = false;
        mkb::RetimeCallbacks callbacks;
        callbacks.graderStarted = [&] { started = true; };
        mkb::GraderLaunch launch;
        launch.python = "/nonexistent/python3";
        const auto path = std::filesystem::path(dir_.filePath(QStringLiteral("missing.sqlite")).toStdString());
        const mkb::RetimeStoreRun run = mkb::retimeStore(path, launch, mkb::RetimeJob{}, callbacks, nullptr);
        QVERIFY(!run.summary);
        QVERIFY(run.failedAt == mkb::RetimeStage::OpeningStore);
        QVERIFY2(run.error.find("missing.sqlite") != std::string::npos, run.error.c_str());
        QVERIFY(!started);
    }

    void aGraderThatCannotStartStopsTheRetimingAtThatStage() {
        bool started = false;
        mkb::RetimeCallbacks callbacks;
        callbacks.graderStarted = [&] { started = true; };
        mkb::GraderLaunch launch;
        launch.python = "/nonexistent/python3";
        launch.startupTimeoutS = 20;
        const mkb::RetimeStoreRun run =
            mkb::retimeStore(storeAt(QStringLiteral("empty.sqlite")), launch, mkb::RetimeJob{}, callbacks, nullptr);
        QVERIFY(!run.summary);
        QVERIFY(run.failedAt == mkb::RetimeStage::StartingGrader);
        QVERIFY2(run.error.find("the grader could not start") == 0, run.error.c_str());
        QVERIFY(!started);
    }
};

QTEST_GUILESS_MAIN(RetimeStoreTest)
#include "tst_retime_store.moc"
