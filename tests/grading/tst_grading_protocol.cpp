// The C++ side of the grader protocol against fake servers that misbehave on purpose, and against the real grader.
#include "core/grader_client/gpu_lock.h"
#include "core/grader_client/grader_process.h"
#include "core/wire/grade_request.h"
#include "core/wire/verdict_json.h"
#include "support/testpaths.h"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

using namespace mkb;

namespace {

std::filesystem::path fixture(const char* name) {
    return mkbtest::sourceDir() / "tests" / "grading" / "fixtures" / name;
}

GradeRequest dummyRequest(double timeoutS = 1) {
    GradeRequest request;
    request.problemPath = "/nonexistent/problem.py";
    request.kernelPath = "/nonexistent/kernel.py";
    request.dsl = "cpusim";
    request.dslDescriptorJson = "{\"id\":\"cpusim\"}";
    request.device = "cpu";
    request.settings.timeoutS = timeoutS;
    return request;
}

/// True when the process no longer exists or is a zombie waiting for its (new) parent to reap it.
bool processGone(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
        return true;
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    return close == std::string::npos || (close + 2 < text.size() && text[close + 2] == 'Z');
}

bool waitUntilGone(pid_t pid, int timeoutMs) {
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        if (processGone(pid)) {
            return true;
        }
        QTest::qWait(20);
    }
    return processGone(pid);
}

} // namespace

class GradingProtocolTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp;

    GraderLaunch fakeLaunch(const std::string& mode, const std::string& stateFile = "") {
        GraderLaunch launch;
        launch.python = mkbtest::testPython();
        launch.serverArgs = {fixture("fake_grader.py").string(), mode};
        launch.startupTimeoutS = 30;
        launch.deadlineMarginS = 1;
        launch.lock.dir = temp.path().toStdString();
        launch.extraEnvironment = {{"FAKE_GRADER_STATE", stateFile}};
        return launch;
    }
    std::string stateFile(const char* name) { return (temp.path() + "/" + name).toStdString(); }

private slots:
    void initTestCase() { QVERIFY(temp.isValid()); }

    void normalVerdictRoundTrip() {
        // "protocol: a normal verdict round trip, reusing one server"
        GraderProcess grader(fakeLaunch("normal"));
        std::vector<std::string> stages;
        Verdict verdict = grader.grade(dummyRequest(7), [&](const std::string& s) { stages.push_back(s); });
        QVERIFY2(!verdict.infrastructureError, verdict.error.c_str());
        QVERIFY(verdict.imported && verdict.correct && verdict.passed);
        QCOMPARE(verdict.speedupVsEager, 2.5);
        QCOMPARE(verdict.stage, std::string("done"));
        QCOMPARE(verdict.correctDraws, 5);
        QCOMPARE(verdict.kernelMedianMs.value_or(-1), 0.4);
        QVERIFY(verdict.roofline && verdict.roofline->iou && *verdict.roofline->iou == 0.5);
        QVERIFY(!verdict.roofline->mfu);
        QCOMPARE(verdict.outliersCorrect, std::optional<bool>(true));
        QVERIFY(verdict.json.find("\"echo_kernel\":\"/nonexistent/kernel.py\"") != std::string::npos);
        QVERIFY(verdict.json.find("\"echo_timeout\":7") != std::string::npos);
        QCOMPARE(stages, std::vector<std::string>{"import"}); // the stage of another id is not ours
        QCOMPARE(grader.hello().protocol, 1);
        QCOMPARE(grader.hello().torchVersion, std::string("fake"));
        pid_t first = grader.pid();
        Verdict again = grader.grade(dummyRequest());
        QVERIFY(again.passed);
        QCOMPARE(grader.pid(), first);
        QCOMPARE(grader.spawnCount(), 1);
    }

    void theGraderBacksItsLargeHostBlocksWithHugePages() {
        // glibc.malloc.hugetlb=1 is added to the caller's tunables, and a caller's own choice of it is kept
        const QByteArray before = qgetenv("GLIBC_TUNABLES");
        const bool hadBefore = qEnvironmentVariableIsSet("GLIBC_TUNABLES");
        const auto tunablesSeenByGrader = [&](const char* callers) {
            if (callers) {
                qputenv("GLIBC_TUNABLES", callers);
            } else {
                qunsetenv("GLIBC_TUNABLES");
            }
            GraderProcess grader(fakeLaunch("normal"));
            const Verdict verdict = grader.grade(dummyRequest());
            const nlohmann::json json = nlohmann::json::parse(verdict.json, nullptr, false);
            return json.is_object() && json.value("echo_glibc_tunables", nlohmann::json()).is_string()
                       ? json["echo_glibc_tunables"].get<std::string>()
                       : std::string("(none)");
        };
        const std::string withNone = tunablesSeenByGrader(nullptr);
        const std::string withOthers = tunablesSeenByGrader("glibc.malloc.arena_max=2");
        const std::string withOwnChoice = tunablesSeenByGrader("glibc.malloc.hugetlb=0");
        if (hadBefore) { // restored before any comparison can end the test
            qputenv("GLIBC_TUNABLES", before);
        } else {
            qunsetenv("GLIBC_TUNABLES");
        }
        QCOMPARE(withNone, std::string("glibc.malloc.hugetlb=1"));
        QCOMPARE(withOthers, std::string("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"));
        QCOMPARE(withOwnChoice, std::string("glibc.malloc.hugetlb=0"));
    }

    void garbageLineIsInfrastructureError() {
        // "protocol: a garbage line is an infrastructure error and the server is killed"
        GraderProcess grader(fakeLaunch("garbage"));
        Verdict verdict = grader.grade(dummyRequest());
        QVERIFY(verdict.infrastructureError);
        QVERIFY(!verdict.passed && !verdict.imported && verdict.speedupVsEager == 0);
        QVERIFY2(verdict.error.find("not a JSON object") != std::string::npos, verdict.error.c_str());
        QVERIFY2(verdict.error.find("Traceback") != std::string::npos, verdict.error.c_str());
        QVERIFY(verdict.error.find('\n') == std::string::npos);
        QVERIFY(!grader.running());
        auto parsed = verdictFromJson(verdict.json);
        QVERIFY(parsed.ok() && parsed->infrastructureError);
    }

    void wrongRewardTypeIsInfrastructureError() {
        // "protocol: a reward of the wrong type is an infrastructure error"
        GraderProcess grader(fakeLaunch("wrong_types"));
        Verdict verdict = grader.grade(dummyRequest());
        QVERIFY(verdict.infrastructureError);
        QVERIFY2(verdict.error.find("passed") != std::string::npos, verdict.error.c_str());
        QVERIFY(!verdict.passed);
    }

    void silenceKillsWholeProcessTree() {
        // "protocol: silence past timeout_s + margin kills the server and its grandchildren within the bound"
        std::string pids = stateFile("silent.pids");
        GraderProcess grader(fakeLaunch("silent", pids));
        QElapsedTimer timer;
        timer.start();
        Verdict verdict = grader.grade(dummyRequest(1)); // bound: 1 s + 1 s margin
        qint64 elapsed = timer.elapsed();
        QVERIFY(verdict.infrastructureError);
        QVERIFY(verdict.timedOut);
        QVERIFY2(elapsed >= 1900 && elapsed < 5000, std::to_string(elapsed).c_str());
        QVERIFY2(verdict.error.find("no reply within 2.0 s") != std::string::npos, verdict.error.c_str());
        QCOMPARE(verdict.stage, std::string("import"));
        std::ifstream in(pids);
        pid_t plain = 0;
        pid_t detached = 0;
        in >> plain >> detached;
        QVERIFY(plain > 0 && detached > 0);
        QVERIFY2(waitUntilGone(plain, 3000), "the grandchild in the server's group survived");
        QVERIFY2(waitUntilGone(detached, 3000), "the grandchild in its own session survived");
        QVERIFY(!grader.running());
    }

    void crashMidRequest() {
        // "protocol: the server dying mid-request names its exit status and last stderr line"
        GraderProcess grader(fakeLaunch("crash"));
        Verdict verdict = grader.grade(dummyRequest(30));
        QVERIFY(verdict.infrastructureError);
        QVERIFY(!verdict.timedOut);
        QVERIFY2(verdict.error.find("exited with status 3") != std::string::npos, verdict.error.c_str());
        QVERIFY2(verdict.error.find("crashing on purpose") != std::string::npos, verdict.error.c_str());
        QCOMPARE(verdict.stage, std::string("import"));
    }

    void hugeLineIsRefused() {
        // "protocol: a 50 MB line is refused at the 16 MiB cap"
        GraderProcess grader(fakeLaunch("huge"));
        QElapsedTimer timer;
        timer.start();
        Verdict verdict = grader.grade(dummyRequest(30));
        QVERIFY(verdict.infrastructureError);
        QVERIFY2(verdict.error.find("16 MiB") != std::string::npos, verdict.error.c_str());
        QVERIFY(timer.elapsed() < 20000);
        QVERIFY(!grader.running());
    }

    void silentStartTimesOut() {
        // "protocol: a server that prints nothing on start fails within the start-up deadline"
        GraderLaunch launch = fakeLaunch("mute");
        launch.startupTimeoutS = 1.5;
        GraderProcess grader(launch);
        QElapsedTimer timer;
        timer.start();
        Verdict verdict = grader.grade(dummyRequest(60));
        QVERIFY(verdict.infrastructureError);
        QVERIFY2(verdict.error.find("no ready line within 1.5 s") != std::string::npos, verdict.error.c_str());
        QVERIFY2(timer.elapsed() < 5000, std::to_string(timer.elapsed()).c_str());
        QVERIFY(!grader.running());
    }

    void restartAfterFailure() {
        // "protocol: after a failure the next request starts a fresh server"
        GraderProcess grader(fakeLaunch("crash_once", stateFile("crashed-once")));
        Verdict first = grader.grade(dummyRequest(30));
        QVERIFY(first.infrastructureError);
        Verdict second = grader.grade(dummyRequest(30));
        QVERIFY2(!second.infrastructureError, second.error.c_str());
        QVERIFY(second.passed);
        QCOMPARE(grader.spawnCount(), 2);
    }

    void missingInterpreter() {
        // "protocol: a missing interpreter is one clear line"
        GraderLaunch launch = fakeLaunch("normal");
        launch.python = "/nonexistent/python3";
        GraderProcess grader(launch);
        Verdict verdict = grader.grade(dummyRequest());
        QVERIFY(verdict.infrastructureError);
        QVERIFY2(verdict.error.find("cannot start the grader with '/nonexistent/python3'") != std::string::npos,
                 verdict.error.c_str());
        QVERIFY(verdict.error.find("MKB_PYTHON") != std::string::npos);
    }

    void probeRoundTrip() {
        // "protocol: probe results become DeviceProbe; unsupported dtypes are left out"
        GraderProcess grader(fakeLaunch("normal"));
        auto probe = grader.probe("cuda:0");
        QVERIFY2(probe.ok(), probe.ok() ? "" : probe.error().message.c_str());
        QCOMPARE(probe->name, std::string("Fake GPU"));
        QCOMPARE(probe->uuid, std::string("GPU-fake"));
        QCOMPARE(probe->device, std::string("cuda:0"));
        QCOMPARE(probe->copyGBps, 4000.0);
        QCOMPARE(probe->tflops.size(), std::size_t(2));
        QCOMPARE(probe->tflops[1].first, std::string("bfloat16"));
    }

    void concurrentGradersAreSerialisedByTheGpuLock() {
        // "gpu lock: two graders on one device never overlap (and without the lock they do)"
        auto runPair = [&](bool lockDevice, const std::string& log) {
            std::atomic<int> failures{0};
            std::vector<std::thread> threads;
            for (int i = 0; i < 2; ++i) {
                GraderLaunch launch = fakeLaunch("slow", log);
                launch.lockDevice = lockDevice;
                threads.emplace_back([&failures, launch] {
                    GraderProcess grader(launch);
                    failures += grader.start().ok() ? 0 : 1;
                    for (int round = 0; round < 2; ++round) {
                        failures += grader.grade(dummyRequest(30)).passed ? 0 : 1;
                    }
                });
            }
            for (auto& thread : threads) {
                thread.join();
            }
            std::ifstream in(log);
            std::vector<std::pair<double, double>> spans;
            std::string word;
            double time = 0;
            while (in >> word >> time) {
                if (word == "start") {
                    spans.push_back({time, -1});
                } else {
                    auto open = std::find_if(spans.begin(), spans.end(), [](auto& s) { return s.second < 0; });
                    if (open != spans.end()) {
                        open->second = time;
                    }
                }
            }
            std::sort(spans.begin(), spans.end());
            int overlaps = 0;
            for (std::size_t i = 1; i < spans.size(); ++i) {
                overlaps += spans[i].first < spans[i - 1].second ? 1 : 0;
            }
            return std::make_tuple(spans.size(), overlaps, failures.load());
        };
        auto [lockedSpans, lockedOverlaps, lockedFailures] = runPair(true, stateFile("locked.log"));
        QCOMPARE(lockedFailures, 0);
        QCOMPARE(lockedSpans, std::size_t(4));
        QCOMPARE(lockedOverlaps, 0);
        auto [freeSpans, freeOverlaps, freeFailures] = runPair(false, stateFile("unlocked.log"));
        QCOMPARE(freeFailures, 0);
        QCOMPARE(freeSpans, std::size_t(4));
        QVERIFY2(freeOverlaps > 0, "without the lock the fake timings should overlap; the test proves nothing");
    }

    void lockWaitIsBoundedAndInterruptible() {
        // "gpu lock: waiting is bounded, names the holder, and stops when cancelled"
        GpuLockOptions options;
        options.dir = temp.path().toStdString();
        auto held = GpuLock::acquire("cuda:3", options);
        QVERIFY(held.ok());
        options.waitTimeoutS = 0.3;
        QElapsedTimer timer;
        timer.start();
        auto second = GpuLock::acquire("cuda:3", options);
        QVERIFY(!second.ok());
        QVERIFY(timer.elapsed() >= 250 && timer.elapsed() < 2000);
        QVERIFY2(second.error().message.find("pid " + std::to_string(::getpid())) != std::string::npos,
                 second.error().message.c_str());
        std::atomic<bool> cancel{true};
        options.waitTimeoutS = 60;
        timer.restart();
        auto cancelled = GpuLock::acquire("cuda:3", options, &cancel);
        QVERIFY(!cancelled.ok());
        QVERIFY(cancelled.error().message.find("stopped") != std::string::npos);
        QVERIFY(timer.elapsed() < 1000);
        QVERIFY(GpuLock::acquire("cuda:2", options).ok()); // another device is free
        held->release();
        QVERIFY(GpuLock::acquire("cuda:3", options).ok());
    }

    void aPriorityWaiterGoesBeforeGradingsThatKeepRetakingTheLock() {
        // "gpu lock: a waiting re-timing (priority) is not starved by gradings that release and re-take the lock"
        GpuLockOptions options;
        options.dir = temp.path().toStdString();
        std::atomic<bool> stop{false};
        std::atomic<int> ordinaryTurns{0};
        std::atomic<int> turnsWhenPriorityGotIt{-1};
        auto grader = [&]() { // an ordinary waiter: holds the lock 20 ms, lets go, at once wants it again
            while (!stop.load()) {
                auto lock = GpuLock::acquire("cuda:5", options);
                QVERIFY(lock.ok());
                ++ordinaryTurns;
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        };
        std::thread a(grader);
        std::thread b(grader);
        while (ordinaryTurns.load() < 4) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        GpuLockOptions first = options;
        first.priority = true;
        first.waitTimeoutS = 5;
        QElapsedTimer timer;
        timer.start();
        const int before = ordinaryTurns.load();
        auto retiming = GpuLock::acquire("cuda:5", first);
        turnsWhenPriorityGotIt = ordinaryTurns.load() - before;
        const qint64 waited = timer.elapsed();
        stop = true;
        QVERIFY2(retiming.ok(), retiming.ok() ? "" : retiming.error().message.c_str());
        retiming->release();
        a.join();
        b.join();
        // At most the turn in progress and the one already past its check finish first; without the priority the
        // two gradings could take turns for the whole 5 s.
        QVERIFY2(turnsWhenPriorityGotIt.load() <= 2,
                 qPrintable(QString("%1 ordinary turns went first").arg(turnsWhenPriorityGotIt.load())));
        QVERIFY2(waited < 1000, qPrintable(QString("the priority waiter waited %1 ms").arg(waited)));
    }

    void realGraderEndToEndOnCpu() {
        // "end to end: the real grader passes a cpusim solution, fails a wrong one, and bounds a spinning one"
        std::filesystem::path root = mkbtest::sourceDir();
        auto descriptor = loadDslDescriptor("cpusim", {root / "tests" / "fixtures" / "dsls"});
        QVERIFY2(descriptor.ok(), descriptor.ok() ? "" : descriptor.error().message.c_str());
        GraderLaunch launch;
        launch.python = mkbtest::testPython();
        launch.packageDir = root / "core" / "grader";
        launch.lock.dir = temp.path().toStdString();
        GraderProcess grader(launch);
        GradeRequest request;
        request.problemPath = root / "tests" / "fixtures" / "problems" / "basic" / "01_vector_add.py";
        request.kernelPath = root / "tests" / "fixtures" / "solutions" / "01_vector_add.cpusim.py";
        request.dsl = "cpusim";
        request.dslDescriptorJson = *descriptor;
        request.device = "cpu";
        request.settings.timingDraws = 10;
        request.settings.warmupDraws = 2;
        Verdict good = grader.grade(request);
        QVERIFY2(good.passed, good.error.c_str());
        QCOMPARE(good.correctDraws, 5);
        QVERIFY(good.kernelMedianMs && good.eagerMedianMs && good.speedupVsEager > 0);
        QVERIFY(!grader.hello().graderFingerprint.empty());

        request.kernelPath = root / "tests" / "fixtures" / "hostile" / "wrong_shape.cpusim.py";
        Verdict wrong = grader.grade(request);
        QVERIFY(!wrong.infrastructureError && wrong.imported && !wrong.correct && !wrong.passed);
        QVERIFY2(wrong.mismatch.find("shape") != std::string::npos, wrong.mismatch.c_str());

        request.kernelPath = root / "tests" / "fixtures" / "hostile" / "spin_forever.cpusim.py";
        request.settings.timeoutS = 3;
        Verdict spinning = grader.grade(request);
        QVERIFY2(spinning.timedOut && !spinning.passed, spinning.json.c_str());
        QVERIFY(!spinning.infrastructureError);

        request.kernelPath = root / "tests" / "fixtures" / "solutions" / "01_vector_add.cpusim.py";
        QVERIFY(grader.grade(request).passed);
        QCOMPARE(grader.spawnCount(), 1);
    }
};

QTEST_GUILESS_MAIN(GradingProtocolTest)
#include "tst_grading_protocol.moc"
