// The workbench's one job runner: a superseded job is told through its cancelled test and stops, results arrive on
// the context's thread, and a job whose context went away delivers nothing.
#include "gui/common/job_runner.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <atomic>

using namespace mkb::gui;

namespace {

/// Work that runs until its job is cancelled (or 10 s passed, so a runner that never cancels fails the test rather
/// than hanging it); returns whether it saw the cancellation.
bool workUntilCancelled(const JobControl& job, std::atomic<bool>& started) {
    started = true;
    const QDeadlineTimer deadline(10000);
    while (!job.cancelled() && !deadline.hasExpired()) {
        QThread::msleep(1);
    }
    return job.cancelled();
}

/// A context object that owns its runner, as the views and ProjectData do.
class JobOwner : public QObject {
public:
    JobRunner jobs{this};
};

} // namespace

class JobRunnerTest : public QObject {
    Q_OBJECT
private slots:
    void supersededJobSeesItsCancellationAndStops() {
        std::atomic<bool> started{false};
        std::atomic<bool> firstSawCancel{false};
        bool firstTaken = false;
        int secondResult = 0;
        QObject context;
        JobRunner runner(&context);
        runner.start(
            [&](const JobControl& job) {
                firstSawCancel = workUntilCancelled(job, started);
                return 1;
            },
            [&](int&) { firstTaken = true; });
        QTRY_VERIFY(started.load()); // the first job is working when the second supersedes it
        QVERIFY(runner.isJobRunning());
        runner.start([](const JobControl& job) { return job.cancelled() ? -1 : 2; },
                     [&](int& result) { secondResult = result; });
        QTRY_VERIFY(firstSawCancel.load());
        QTRY_COMPARE(secondResult, 2);
        QVERIFY(!runner.isJobRunning());
        QTRY_VERIFY(!runner.isBusy());
        QCoreApplication::processEvents();
        QVERIFY(!firstTaken);
    }

    void jobSupersededWhileItsResultIsOnTheWayDeliversNothing() {
        std::atomic<bool> returned{false};
        bool firstTaken = false;
        int secondResult = 0;
        QObject context;
        JobRunner runner(&context);
        runner.start(
            [&](const JobControl&) {
                returned = true;
                return 1;
            },
            [&](int&) { firstTaken = true; });
        // Without processing events: the first result is posted, not yet taken in, when the second job starts.
        const QDeadlineTimer deadline(10000);
        while (!returned.load() && !deadline.hasExpired()) {
            QThread::msleep(1);
        }
        QThread::msleep(50);
        runner.start([](const JobControl&) { return 2; }, [&](int& result) { secondResult = result; });
        QTRY_COMPARE(secondResult, 2);
        QVERIFY(!firstTaken);
        // cancelAll drops a result on the way too.
        returned = false;
        runner.start(
            [&](const JobControl&) {
                returned = true;
                return 3;
            },
            [&](int& result) { secondResult = result; });
        while (!returned.load()) {
            QThread::msleep(1);
        }
        QThread::msleep(50);
        runner.cancelAll();
        QTest::qWait(20);
        QCOMPARE(secondResult, 2);
    }

    void cancelFlagIsTheCancelledTestForCoreCalls() {
        std::atomic<bool> started{false};
        std::atomic<bool> flagSet{false};
        QObject context;
        JobRunner runner(&context);
        runner.start(
            [&](const JobControl& job) {
                workUntilCancelled(job, started);
                flagSet = job.cancelFlag()->load();
                return 0;
            },
            [](int&) {});
        QTRY_VERIFY(started.load());
        runner.cancelAll();
        QVERIFY(!runner.isJobRunning());
        QTRY_VERIFY(flagSet.load());
    }

    void resultArrivesOnTheContextThread() {
        QThread* workThread = nullptr;
        QThread* takeThread = nullptr;
        QObject context;
        JobRunner runner(&context);
        runner.start(
            [&](const JobControl&) {
                workThread = QThread::currentThread();
                return QStringLiteral("done");
            },
            [&](QString& result) {
                QCOMPARE(result, QStringLiteral("done"));
                takeThread = QThread::currentThread();
            });
        QTRY_VERIFY(takeThread != nullptr);
        QCOMPARE(takeThread, QCoreApplication::instance()->thread());
        QVERIFY(workThread != nullptr);
        QVERIFY(workThread != QCoreApplication::instance()->thread());
    }

    void partialResultsArriveOnTheContextThreadInOrder() {
        QStringList arrived;
        QObject context;
        JobRunner runner(&context);
        runner.start(
            [&](const JobControl& job) {
                job.post([&] { arrived << QStringLiteral("summary"); });
                return QStringLiteral("rest");
            },
            [&](QString& result) { arrived << result; });
        QTRY_COMPARE(arrived, (QStringList{QStringLiteral("summary"), QStringLiteral("rest")}));
    }

    void jobWhoseContextWasDestroyedDeliversNothing() {
        std::atomic<bool> started{false};
        std::atomic<bool> sawCancel{false};
        bool taken = false;
        bool postedRan = false;
        auto* context = new QObject;
        JobRunner runner(context); // outlives its context
        runner.start(
            [&](const JobControl& job) {
                sawCancel = workUntilCancelled(job, started);
                job.post([&] { postedRan = true; });
                return 1;
            },
            [&](int&) { taken = true; });
        QTRY_VERIFY(started.load());
        delete context;
        QTRY_VERIFY(sawCancel.load());
        QTRY_VERIFY(!runner.isBusy());
        QTest::qWait(20);
        QVERIFY(!taken);
        QVERIFY(!postedRan);
        // A job started after the context went away is cancelled from the start.
        bool laterTaken = false;
        runner.start([](const JobControl& job) { return job.cancelled(); }, [&](bool&) { laterTaken = true; });
        QTRY_VERIFY(!runner.isBusy());
        QTest::qWait(20);
        QVERIFY(!laterTaken);
    }

    void ownerDestroyedWhileItsJobWorksCancelsAndWaitsForIt() {
        std::atomic<bool> started{false};
        std::atomic<bool> sawCancel{false};
        std::atomic<bool> returned{false};
        bool taken = false;
        auto* owner = new JobOwner;
        owner->jobs.start(
            [&](const JobControl& job) {
                sawCancel = workUntilCancelled(job, started);
                QThread::msleep(20); // still working when the owner's destructor begins to wait
                returned = true;
                return 1;
            },
            [&](int&) { taken = true; });
        QTRY_VERIFY(started.load());
        delete owner; // cancels the job and waits for its work to return
        QVERIFY(sawCancel.load());
        QVERIFY(returned.load());
        QTest::qWait(20);
        QVERIFY(!taken);
    }
};

QTEST_MAIN(JobRunnerTest)
#include "tst_job_runner.moc"
