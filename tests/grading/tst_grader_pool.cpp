// The grader pool (DESIGN §11) with several CPU "devices": the device list, least-loaded dispatch, one request at a
// time per device, lost devices leaving the rotation with their gradings rerun elsewhere, re-timing on one device.
#include "core/grader_client/gpu_lock.h"
#include "core/grader_client/grader_pool.h"
#include "core/wire/grade_request.h"
#include "support/testpaths.h"

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

using namespace mkb;

namespace {

std::filesystem::path fixture(const char* name) {
    return mkbtest::sourceDir() / "tests" / "grading" / "fixtures" / name;
}

struct LogLine {
    std::string device; // the pool device whose server took it
    int pid = 0;
    std::string event; // "start" or "end"
    double time = 0;
    std::string sentDevice; // what the request told the grader
    std::string kernel;
    std::string deviceLock; // the file name of the request's device_lock
};

std::vector<LogLine> readLog(const std::string& path) {
    std::vector<LogLine> lines;
    std::ifstream in(path);
    std::string text;
    while (std::getline(in, text)) {
        std::istringstream fields(text);
        LogLine line;
        fields >> line.device >> line.pid >> line.event >> line.time >> line.sentDevice >> line.kernel >>
            line.deviceLock;
        lines.push_back(line);
    }
    return lines;
}

GradeRequest fakeRequest(const std::string& kernel = "/k/kernel.py") {
    GradeRequest request;
    request.problemPath = "/p/problem.py";
    request.kernelPath = kernel;
    request.dsl = "cpusim";
    request.dslDescriptorJson = "{\"id\":\"cpusim\"}";
    request.device = "cuda:7"; // the pool replaces it
    request.settings.timeoutS = 20;
    return request;
}

} // namespace

class GraderPoolTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp;
    int counter = 0;

    /// A launch of the fake pool grader with its own log file and the given extra environment.
    GraderLaunch fakeLaunch(std::string& log, std::vector<std::pair<std::string, std::string>> environment = {}) {
        log = (temp.path() + "/pool-" + QString::number(++counter) + ".log").toStdString();
        GraderLaunch launch;
        launch.python = mkbtest::testPython();
        launch.serverArgs = {fixture("fake_pool_grader.py").string()};
        launch.startupTimeoutS = 30;
        launch.deadlineMarginS = 5;
        launch.lock.dir = temp.path().toStdString();
        launch.extraEnvironment = {{"FAKE_POOL_LOG", log}};
        for (auto& entry : environment) {
            launch.extraEnvironment.push_back(entry);
        }
        return launch;
    }

private slots:
    void initTestCase() { QVERIFY(temp.isValid()); }

    void deviceListsNameCudaAndCpuDevicesOnceEach() {
        auto all = parseDeviceList("all", 3);
        QVERIFY(all.ok());
        QCOMPARE(*all, (std::vector<std::string>{"cuda:0", "cuda:1", "cuda:2"}));
        auto none = parseDeviceList("all", 0);
        QVERIFY(!none.ok());
        QVERIFY(none.error().message.find("found no CUDA device") != std::string::npos);
        auto listed = parseDeviceList("cuda:0, cuda:2", 0);
        QVERIFY(listed.ok());
        QCOMPARE(*listed, (std::vector<std::string>{"cuda:0", "cuda:2"}));
        auto cpus = parseDeviceList("cpu:0,cpu:1,cpu", 0);
        QVERIFY(cpus.ok());
        QCOMPARE(cpus->size(), std::size_t(3));
        auto twice = parseDeviceList("cuda:1,cuda:1", 0);
        QVERIFY(!twice.ok());
        QVERIFY(twice.error().message.find("cuda:1 twice") != std::string::npos);
        for (const char* bad : {"gpu1", "cuda:x", "cpu:", "", "cuda:0,,cuda:1"}) {
            auto refused = parseDeviceList(bad, 2);
            QVERIFY2(!refused.ok(), bad);
            QVERIFY(refused.error().message.find("--devices") != std::string::npos);
        }
        QCOMPARE(graderDeviceFor("cpu:3"), std::string("cpu"));
        QCOMPARE(graderDeviceFor("cuda:3"), std::string("cuda:3"));
        QVERIFY(gpuLockPath("cpu:0", "/l") != gpuLockPath("cpu:1", "/l"));
        QVERIFY(gpuLockPath("cpu:0", "/l") != gpuLockPath("cpu", "/l"));
    }

    void gradingsOneAfterAnotherTakeTurnsOnIdleDevices() {
        std::string log;
        GraderPool pool({"cpu:0", "cpu:1"}, fakeLaunch(log, {{"FAKE_POOL_SLEEP", "0.05"}}));
        QVERIFY(pool.start().ok());
        QCOMPARE(pool.hello().graderFingerprint, std::string(64, 'e'));
        std::vector<std::string> devices;
        for (int i = 0; i < 4; ++i) {
            Verdict verdict = pool.grade(fakeRequest());
            QVERIFY2(verdict.passed, verdict.error.c_str());
            devices.push_back(verdict.device);
        }
        QCOMPARE(devices, (std::vector<std::string>{"cpu:0", "cpu:1", "cpu:0", "cpu:1"}));
        for (const LogLine& line : readLog(log)) {
            QCOMPARE(line.sentDevice, std::string("cpu")); // the grader is told "cpu" for a cpu:N device
        }
    }

    void concurrentGradingsSpreadOverTheLeastLoadedDevicesOneAtATimeEach() {
        std::string log;
        GraderPool pool({"cpu:0", "cpu:1", "cpu:2"}, fakeLaunch(log, {{"FAKE_POOL_SLEEP", "0.4"}}));
        QVERIFY(pool.start().ok());
        std::vector<Verdict> verdicts(6);
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < verdicts.size(); ++i) {
            threads.emplace_back([&, i]() { verdicts[i] = pool.grade(fakeRequest("/k/" + std::to_string(i))); });
        }
        for (auto& thread : threads) {
            thread.join();
        }
        std::map<std::string, int> perDevice;
        for (const Verdict& verdict : verdicts) {
            QVERIFY2(verdict.passed, verdict.error.c_str());
            ++perDevice[verdict.device];
        }
        QCOMPARE(perDevice, (std::map<std::string, int>{{"cpu:0", 2}, {"cpu:1", 2}, {"cpu:2", 2}}));
        // Per device, each request ends before the next starts; across devices they overlap.
        std::map<std::string, double> lastEnd;
        std::map<std::string, double> openSince;
        int running = 0, mostRunning = 0;
        auto lines = readLog(log);
        std::sort(lines.begin(), lines.end(), [](const LogLine& a, const LogLine& b) { return a.time < b.time; });
        for (const LogLine& line : lines) {
            if (line.event == "start") {
                QVERIFY2(!openSince.count(line.device), "two requests at once on one device's server");
                openSince[line.device] = line.time;
                mostRunning = std::max(mostRunning, ++running);
            } else {
                openSince.erase(line.device);
                --running;
            }
        }
        QCOMPARE(mostRunning, 3);
        for (const PoolDeviceState& state : pool.devices()) {
            QCOMPARE(state.load, 0);
            QCOMPARE(state.completed, 2);
        }
    }

    void aServerKilledMidGradingLeavesTheRotationOnceAndItsGradingIsRerunElsewhere() {
        std::string log;
        std::vector<std::string> messages;
        GraderPool pool({"cpu:0", "cpu:1"}, fakeLaunch(log, {{"FAKE_POOL_DIE", "cpu:0"}, {"FAKE_POOL_SLEEP", "0.05"}}),
                        [&](const std::string&, const std::string& message) { messages.push_back(message); });
        QVERIFY(pool.start().ok());
        for (int i = 0; i < 3; ++i) {
            Verdict verdict = pool.grade(fakeRequest("/k/" + std::to_string(i)));
            QVERIFY2(verdict.passed, verdict.error.c_str()); // nothing lost
            QCOMPARE(verdict.device, std::string("cpu:1"));
        }
        QCOMPARE(messages.size(), std::size_t(1));
        QVERIFY2(messages[0].find("device cpu:0 left the rotation: its grader server stopped") == 0,
                 messages[0].c_str());
        QVERIFY2(messages[0].find("1 device left") != std::string::npos, messages[0].c_str());
        auto states = pool.devices();
        QVERIFY(states[0].lost && !states[1].lost);
        QCOMPARE(pool.inRotation(), 1);
        int onDead = 0;
        for (const LogLine& line : readLog(log)) {
            onDead += line.device == "cpu:0" ? 1 : 0;
        }
        QCOMPARE(onDead, 1); // the dead device got the first grading only, never a later one
    }

    void aDeviceThatErrorsLeavesTheRotationButAKernelsFailureDoesNot() {
        std::string log;
        std::vector<std::string> messages;
        GraderPool pool({"cpu:0", "cpu:1"},
                        fakeLaunch(log, {{"FAKE_POOL_BAD_DEVICE", "cpu:1"}, {"FAKE_POOL_SLEEP", "0.05"}}),
                        [&](const std::string&, const std::string& message) { messages.push_back(message); });
        QVERIFY(pool.start().ok());
        QCOMPARE(pool.grade(fakeRequest()).device, std::string("cpu:0"));
        Verdict second = pool.grade(fakeRequest()); // tried on cpu:1, which fails its device, then rerun on cpu:0
        QVERIFY2(second.passed, second.error.c_str());
        QCOMPARE(second.device, std::string("cpu:0"));
        QCOMPARE(messages.size(), std::size_t(1));
        QVERIFY2(messages[0].find("device cpu:1 left the rotation: the device failed") == 0, messages[0].c_str());

        Verdict kernelFault;
        kernelFault.infrastructureError = false;
        kernelFault.stage = "load";
        kernelFault.error = "CUDA error: an illegal memory access was encountered";
        QVERIFY(!verdictBlamesDevice(kernelFault));
        kernelFault.infrastructureError = true;
        kernelFault.imported = true;
        QVERIFY(!verdictBlamesDevice(kernelFault));
    }

    void whenEveryDeviceIsLostTheGradingSaysSo() {
        std::string log;
        GraderPool pool({"cpu:0"}, fakeLaunch(log, {{"FAKE_POOL_DIE", "cpu:0"}, {"FAKE_POOL_SLEEP", "0.05"}}));
        QVERIFY(pool.start().ok());
        Verdict verdict = pool.grade(fakeRequest());
        QVERIFY(verdict.infrastructureError && !verdict.passed);
        QVERIFY2(verdict.error.find("every device of the pool left the rotation (cpu:0: its grader server stopped") !=
                     std::string::npos,
                 verdict.error.c_str());
        QVERIFY(!pool.retime(RetimeRequest{}).ok());
    }

    void aDeviceWhoseServerCannotStartIsLeftOutAndTheOthersGrade() {
        std::string log;
        std::vector<std::string> messages;
        GraderPool pool({"cpu:0", "cpu:1"}, fakeLaunch(log, {{"FAKE_POOL_NO_START", "cpu:0"}}),
                        [&](const std::string&, const std::string& message) { messages.push_back(message); });
        QVERIFY(pool.start().ok());
        QCOMPARE(pool.inRotation(), 1);
        QCOMPARE(messages.size(), std::size_t(1));
        QVERIFY2(messages[0].find("device cpu:0 left the rotation: its grader server did not start") == 0,
                 messages[0].c_str());
        QCOMPARE(pool.grade(fakeRequest()).device, std::string("cpu:1"));

        GraderLaunch bad = fakeLaunch(log);
        bad.python = "/nonexistent/python3";
        GraderPool broken({"cpu:0", "cpu:1"}, bad);
        Status none = broken.start();
        QVERIFY(!none.ok());
        QVERIFY2(none.error().message.find("no grader server started on any of the 2 devices (cpu:0: ") == 0,
                 none.error().message.c_str());
    }

    void eachDeviceHasItsOwnLock() {
        std::string log;
        GraderLaunch launch = fakeLaunch(log, {{"FAKE_POOL_SLEEP", "0.05"}});
        launch.lock.waitTimeoutS = 0.3;
        GraderPool pool({"cpu:0", "cpu:1"}, launch);
        QVERIFY(pool.start().ok());
        GpuLockOptions options;
        options.dir = temp.path().toStdString();
        auto held = GpuLock::acquire("cpu:0", options); // another grader holds cpu:0
        QVERIFY(held.ok());
        Verdict busy = pool.grade(fakeRequest());
        QCOMPARE(busy.device, std::string("cpu:0"));
        QVERIFY2(busy.infrastructureError && busy.error.find("cpu:0 is busy") != std::string::npos, busy.error.c_str());
        QCOMPARE(pool.inRotation(), 2);                       // a busy device is not a lost one
        GpuLock::acquire("cpu:1", options).value().release(); // cpu:1's lock is another file, free all along
        held->release();
        Verdict after = pool.grade(fakeRequest());
        QVERIFY2(after.passed && after.device == "cpu:0", after.error.c_str());
    }

    void aRetimingRunsWholeOnItsPreferredDeviceOrWholeOnAnother() {
        std::string log;
        GraderPool pool({"cpu:0", "cpu:1", "cpu:2"},
                        fakeLaunch(log, {{"FAKE_POOL_DIE", "cpu:2"}, {"FAKE_POOL_SLEEP", "0.05"}}));
        QVERIFY(pool.start().ok());
        RetimeRequest request;
        request.problemPath = "/p/problem.py";
        request.kernels = {{"source", "/k/a.py", "cpusim", "{}", 0}, {"base", "/k/b.py", "cpusim", "{}", 0}};
        auto kept = pool.retime(request, "cpu:1");
        QVERIFY2(kept.ok(), kept.ok() ? "" : kept.error().message.c_str());
        QCOMPARE(kept->device, std::string("cpu:1"));
        auto moved = pool.retime(request, "cpu:2"); // cpu:2's server dies during it: the whole re-timing moves
        QVERIFY2(moved.ok(), moved.ok() ? "" : moved.error().message.c_str());
        QVERIFY(moved->device == "cpu:0" || moved->device == "cpu:1");
        std::map<std::string, int> requests;
        for (const LogLine& line : readLog(log)) {
            requests[line.device] += line.event == "start" ? 1 : 0;
        }
        QCOMPARE(requests["cpu:2"], 1);
        QCOMPARE(requests["cpu:0"] + requests["cpu:1"], 2); // one request per re-timing that came back
    }

    void aRetimingGoesBeforeTheGradingsThatArriveWhileItWaits() {
        // As at the GPU lock: a cell's re-timing is not starved by a stream of gradings on its device.
        std::string log;
        GraderPool pool({"cpu:0"}, fakeLaunch(log, {{"FAKE_POOL_SLEEP", "0.6"}}));
        QVERIFY(pool.start().ok());
        RetimeRequest retime;
        retime.problemPath = "/p/problem.py";
        retime.kernels = {{"source", "/k/a.py", "cpusim", "{}", 0}, {"base", "/k/b.py", "cpusim", "{}", 0}};
        std::vector<std::thread> threads;
        threads.emplace_back([&]() { // a worker grading back to back: it would take the server again at once
            pool.grade(fakeRequest("/k/first"));
            for (int i = 0; i < 3; ++i) {
                pool.grade(fakeRequest("/k/later" + std::to_string(i)));
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        threads.emplace_back([&]() { (void)pool.retime(retime); });
        for (auto& thread : threads) {
            thread.join();
        }
        std::vector<std::string> order;
        for (const LogLine& line : readLog(log)) {
            if (line.event == "start") {
                order.push_back(line.kernel);
            }
        }
        QCOMPARE(order.size(), std::size_t(5));
        QCOMPARE(order[0], std::string("/k/first"));
        QCOMPARE(order[1], std::string("-")); // the re-timing (its request names kernels, not one kernel)
    }

    void workOnOneDeviceStartsAgainWholeOnAnotherWhenItsServerDies() {
        std::string log;
        GraderPool pool({"cpu:0", "cpu:1"}, fakeLaunch(log, {{"FAKE_POOL_DIE", "cpu:0"}, {"FAKE_POOL_SLEEP", "0.05"}}));
        QVERIFY(pool.start().ok());
        std::vector<std::string> ranOn;
        std::vector<bool> passed;
        Status done = pool.runOnOneDevice(
            [&](GraderProcess& server, const std::string& device, const std::string& graderDevice) -> Status {
                ranOn.push_back(device);
                passed.clear();
                for (int i = 0; i < 2; ++i) {
                    GradeRequest request = fakeRequest();
                    request.device = graderDevice;
                    passed.push_back(server.grade(request).passed);
                }
                return Ok{};
            });
        QVERIFY(done.ok());
        QCOMPARE(ranOn, (std::vector<std::string>{"cpu:0", "cpu:1"}));
        QCOMPARE(passed, (std::vector<bool>{true, true}));
        QCOMPARE(pool.inRotation(), 1);
    }

    void eachGradingNamesItsDevicesLockForTheServersWarmUp() {
        std::string log;
        GraderPool pool({"cuda:0", "cuda:1"}, fakeLaunch(log, {{"FAKE_POOL_SLEEP", "0.05"}}));
        QVERIFY(pool.start().ok());
        QCOMPARE(pool.grade(fakeRequest()).device, std::string("cuda:0"));
        QCOMPARE(pool.grade(fakeRequest()).device, std::string("cuda:1"));
        auto lines = readLog(log);
        QCOMPARE(lines.size(), std::size_t(4));
        for (const LogLine& line : lines) {
            QCOMPARE(line.sentDevice, line.device);
            QCOMPARE(line.deviceLock, gpuLockPath(line.device, temp.path().toStdString()).filename().string());
        }
    }

    void theRealGraderGradesOnTwoCpuDevicesAtOnce() {
        std::filesystem::path root = mkbtest::sourceDir();
        auto descriptor = loadDslDescriptor("cpusim", {root / "tests" / "fixtures" / "dsls"});
        QVERIFY2(descriptor.ok(), descriptor.ok() ? "" : descriptor.error().message.c_str());
        GraderLaunch launch;
        launch.python = mkbtest::testPython();
        launch.packageDir = root / "core" / "grader";
        launch.lock.dir = temp.path().toStdString();
        GraderPool pool({"cpu:0", "cpu:1"}, launch);
        QVERIFY(pool.start().ok());
        GradeRequest request;
        request.problemPath = root / "tests" / "fixtures" / "problems" / "basic" / "01_vector_add.py";
        request.kernelPath = root / "tests" / "fixtures" / "solutions" / "01_vector_add.cpusim.py";
        request.dsl = "cpusim";
        request.dslDescriptorJson = *descriptor;
        request.settings.correctnessDraws = 2;
        request.settings.warmupDraws = 1;
        request.settings.timingDraws = 3;
        request.settings.recheckDraws = 1;
        std::vector<Verdict> verdicts(2);
        std::thread first([&]() { verdicts[0] = pool.grade(request); });
        std::thread second([&]() { verdicts[1] = pool.grade(request); });
        first.join();
        second.join();
        QVERIFY2(verdicts[0].passed, verdicts[0].error.c_str());
        QVERIFY2(verdicts[1].passed, verdicts[1].error.c_str());
        QVERIFY(verdicts[0].device != verdicts[1].device);
        QVERIFY(verdicts[0].device.rfind("cpu:", 0) == 0 && verdicts[1].device.rfind("cpu:", 0) == 0);
    }
};

QTEST_GUILESS_MAIN(GraderPoolTest)
#include "tst_grader_pool.moc"
