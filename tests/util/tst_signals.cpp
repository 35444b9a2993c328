// Guarded signals: pid 0, -1 and 1 are refused, so a finished child's pid can never signal the test runner's group.
#include "core/util/signals.h"
#include "support/process_signals.h"

#include <QProcess>
#include <QtTest>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

class SignalsTest : public QObject {
    Q_OBJECT
private slots:
    void pidZeroMinusOneAndInitAreRefused() {
        // SIGCONT is harmless if a guard ever failed; the return value says nothing was sent.
        QVERIFY(!mkb::signalProcess(0, SIGCONT));
        QVERIFY(!mkb::signalProcess(-1, SIGCONT));
        QVERIFY(!mkb::signalProcess(1, SIGCONT));
        QVERIFY(!mkb::signalGroup(0, SIGCONT));
        QVERIFY(!mkb::signalGroup(-5, SIGCONT));
        QVERIFY(!mkb::signalGroup(1, SIGCONT));
    }

    void aLiveChildIsSignalled() {
        const pid_t child = ::fork();
        if (child == 0) {
            ::pause();
            ::_exit(0);
        }
        QVERIFY(child > 0);
        QVERIFY(mkb::signalProcess(child, SIGKILL));
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }

    void aFinishedQProcessIsNotSignalled() {
        // A finished QProcess reports pid 0; the guard must send nothing (kill(0, SIGKILL) would end this test).
        QProcess process;
        process.start("true");
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.processId(), qint64(0));
        QVERIFY(!mkbtest::signalIfRunning(process, SIGKILL));
    }

    void aRunningQProcessIsSignalled() {
        QProcess process;
        process.start("sleep", {"30"});
        QVERIFY(process.waitForStarted());
        QVERIFY(mkbtest::signalIfRunning(process, SIGKILL));
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitStatus(), QProcess::CrashExit);
    }
};

QTEST_GUILESS_MAIN(SignalsTest)
#include "tst_signals.moc"
