// The child-process primitive: exit codes and signals, deadlines that kill a whole tree, pipes drained without
// deadlock, environment and working directory, clear start errors, and a destroyed handle that leaves nothing behind.
#include "core/util/child_process.h"

#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <iterator>
#include <sys/wait.h>
#include <unistd.h>

using namespace mkb;

namespace {

ChildSpec shell(const std::string& script) {
    ChildSpec spec;
    spec.argv = {"sh", "-c", script};
    return spec;
}

/// True when the process no longer exists or is a zombie waiting for its new parent (init) to reap it.
bool processGone(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
        return true;
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
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

/// Reads the child's stdout until it holds a whole line, and returns that line as a pid (-1 at the deadline).
pid_t firstLinePid(ChildProcess& child, double timeoutS) {
    std::string out;
    const Deadline deadline = deadlineIn(timeoutS);
    while (out.find('\n') == std::string::npos && secondsUntil(deadline) > 0) {
        child.waitReadable(deadline);
        if (child.readAvailable(ChildPipe::Output, out) == PipeRead::Closed) {
            break;
        }
    }
    return out.find('\n') == std::string::npos ? -1 : static_cast<pid_t>(std::stol(out));
}

std::string readText(const QString& path) {
    std::ifstream in(path.toStdString());
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace

class ChildProcessTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp;

private slots:
    void initTestCase() { QVERIFY(temp.isValid()); }

    void anExitCodeAndAKillingSignalAreReportedAndTheChildIsReaped() {
        auto exited = ChildProcess::spawn(shell("exit 3"));
        QVERIFY2(exited.ok(), exited.ok() ? "" : exited.error().message.c_str());
        const pid_t pid = exited->pid();
        auto status = exited->waitUntil(deadlineIn(10));
        QVERIFY(status.has_value());
        QCOMPARE(status->code, 3);
        QVERIFY(status->exited() && !status->succeeded());
        QCOMPARE(status->describe(), std::string("exited with status 3"));
        int raw = 0;
        QCOMPARE(::waitpid(pid, &raw, WNOHANG), pid_t(-1)); // already reaped: no zombie left for anyone
        QCOMPARE(errno, ECHILD);

        auto signalled = runChild(shell("kill -9 $$"), 10);
        QVERIFY(signalled.ok());
        QVERIFY(!signalled->timedOut);
        QCOMPARE(signalled->status.signal, SIGKILL);
        QVERIFY(!signalled->status.exited());
        QVERIFY2(signalled->status.describe().find("was killed by signal 9") == 0,
                 signalled->status.describe().c_str());
    }

    void aDeadlineKillsTheChildAndTheSleepItLeftInTheBackground() {
        auto child = ChildProcess::spawn(shell("sleep 100 & echo $!; wait"));
        QVERIFY(child.ok());
        const pid_t grandchild = firstLinePid(*child, 10);
        QVERIFY(grandchild > 1);
        QElapsedTimer timer;
        timer.start();
        QVERIFY(!child->waitUntil(deadlineIn(0.3)).has_value()); // the deadline passes, the child runs on
        QVERIFY(timer.elapsed() >= 250);
        QVERIFY(!processGone(grandchild));
        const ExitStatus status = child->kill();
        QCOMPARE(status.signal, SIGKILL);
        QVERIFY2(waitUntilGone(grandchild, 3000), "the background sleep outlived the kill");
    }

    void aGrandchildInASessionOfItsOwnIsKilledWithTheTree() {
        // setsid takes the sleep out of the child's process group: only the walk over its descendants finds it.
        auto child = ChildProcess::spawn(shell("setsid sleep 100 & echo $!; wait"));
        QVERIFY(child.ok());
        const pid_t detached = firstLinePid(*child, 10);
        QVERIFY(detached > 1);
        QTest::qWait(100); // let setsid take effect before the kill
        QVERIFY(::getpgid(detached) != child->pid());
        child->kill();
        QVERIFY2(waitUntilGone(detached, 3000), "the grandchild in its own session outlived the kill");
    }

    void captureAtItsDeadlineKillsTheTreeAndSaysItTimedOut() {
        QElapsedTimer timer;
        timer.start();
        auto ran = runChild(shell("echo started; sleep 100"), 0.5);
        QVERIFY(ran.ok());
        QVERIFY(ran->timedOut);
        QCOMPARE(ran->out, std::string("started\n"));
        QCOMPARE(ran->status.signal, SIGKILL);
        QVERIFY2(timer.elapsed() >= 450 && timer.elapsed() < 5000, std::to_string(timer.elapsed()).c_str());
    }

    void aGracePeriodLetsTheChildEndOnSigterm() {
        auto child = ChildProcess::spawn(shell("trap 'echo bye; exit 7' TERM; echo ready; sleep 100 & wait"));
        QVERIFY(child.ok());
        std::string out;
        while (out.find("ready\n") == std::string::npos &&
               child->readAvailable(ChildPipe::Output, out) != PipeRead::Closed) {
            child->waitReadable(deadlineIn(1));
        }
        QElapsedTimer timer;
        timer.start();
        const ExitStatus status = child->kill(5);
        QCOMPARE(status.code, 7);
        QVERIFY2(timer.elapsed() < 4000, std::to_string(timer.elapsed()).c_str());
        child->readAvailable(ChildPipe::Output, out);
        QCOMPARE(out, std::string("ready\nbye\n"));
    }

    void tenMegabytesOnEachPipeAreDrainedWithoutDeadlock() {
        QElapsedTimer timer;
        timer.start();
        auto ran = runChild(shell("head -c 10000000 /dev/zero; head -c 10000000 /dev/zero >&2; echo done >&2"), 60);
        QVERIFY(ran.ok());
        QVERIFY(!ran->timedOut);
        QVERIFY(ran->status.succeeded());
        QCOMPARE(ran->out.size(), std::size_t(10000000));
        QCOMPARE(ran->err.size(), std::size_t(10000005));
        QVERIFY2(timer.elapsed() < 30000, std::to_string(timer.elapsed()).c_str());
    }

    void environmentChangesAndTheWorkingDirectoryAreHonoured() {
        ::setenv("MKB_CHILD_TEST_GONE", "still here", 1);
        ::setenv("MKB_CHILD_TEST_REPLACED", "old", 1);
        ChildSpec spec = shell("echo \"${MKB_CHILD_TEST_ADDED}|${MKB_CHILD_TEST_REPLACED}|${MKB_CHILD_TEST_GONE-unset}|"
                               "$(pwd -P)\"");
        spec.setEnvironment = {{"MKB_CHILD_TEST_ADDED", "added"}, {"MKB_CHILD_TEST_REPLACED", "new"}};
        spec.unsetEnvironment = {"MKB_CHILD_TEST_GONE"};
        spec.workingDirectory = temp.path().toStdString();
        auto ran = runChild(spec, 10);
        ::unsetenv("MKB_CHILD_TEST_GONE");
        ::unsetenv("MKB_CHILD_TEST_REPLACED");
        QVERIFY(ran.ok());
        const std::string here = QDir(temp.path()).canonicalPath().toStdString();
        QCOMPARE(ran->out, "added|new|unset|" + here + "\n");
    }

    void streamsGoToFilesAndDevNull() {
        const QString input = temp.filePath("input.txt");
        const QString log = temp.filePath("log.txt");
        {
            std::ofstream(input.toStdString()) << "from a file\n";
            std::ofstream(log.toStdString()) << "an old log that must be truncated\n";
        }
        ChildSpec spec = shell("cat; echo on-stderr >&2");
        spec.input = ChildStream::toFile(input.toStdString());
        spec.output = ChildStream::toFile(log.toStdString());
        spec.error = ChildStream::sameAsOutput();
        auto ran = runChild(spec, 10);
        QVERIFY(ran.ok());
        QVERIFY(ran->status.succeeded());
        QCOMPARE(ran->out, std::string()); // no pipe: nothing captured
        QCOMPARE(readText(log), std::string("from a file\non-stderr\n"));

        ChildSpec quiet = shell("cat; echo quiet >&2");
        quiet.error = ChildStream::null(); // stdin is /dev/null by default: cat ends at once
        auto silent = runChild(quiet, 10);
        QVERIFY(silent.ok());
        QCOMPARE(silent->out, std::string());
        QCOMPARE(silent->err, std::string());
    }

    void inputIsWrittenAndAClosedStdinNeverRaisesSigpipe() {
        ChildSpec spec = shell("read line; echo \"got $line\"");
        spec.input = ChildStream::pipe();
        auto child = ChildProcess::spawn(spec);
        QVERIFY(child.ok());
        QCOMPARE(child->writeInput("hello\n", deadlineIn(5)).kind, InputWrite::Kind::Written);
        const ChildOutput output = child->capture(deadlineIn(10));
        QCOMPARE(output.out, std::string("got hello\n"));

        ChildSpec gone = shell("exit 0");
        gone.input = ChildStream::pipe();
        auto ended = ChildProcess::spawn(gone);
        QVERIFY(ended.ok());
        QVERIFY(ended->waitUntil(deadlineIn(10)).has_value());
        struct sigaction before {};
        ::sigaction(SIGPIPE, nullptr, &before);
        ::signal(SIGPIPE, SIG_DFL); // a SIGPIPE that got through would end this test
        const InputWrite write = ended->writeInput("nobody reads this\n", deadlineIn(5));
        ::sigaction(SIGPIPE, &before, nullptr);
        QCOMPARE(write.kind, InputWrite::Kind::Closed);
        QVERIFY2(!write.reason.empty(), write.reason.c_str());
    }

    void aMissingProgramIsNamedWithWhatToDo() {
        ChildSpec spec;
        spec.argv = {"mkb-no-such-program", "--flag"};
        spec.whatToDo = "install mkb-no-such-program, or put it on PATH";
        auto missing = ChildProcess::spawn(spec);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().message, std::string("cannot start 'mkb-no-such-program': not found on PATH; install "
                                                      "mkb-no-such-program, or put it on PATH"));

        spec.argv = {"/nonexistent/python3"};
        spec.role = "the grader with '/nonexistent/python3'";
        spec.whatToDo = "";
        auto absent = runChild(spec, 5);
        QVERIFY(!absent.ok());
        QCOMPARE(absent.error().message,
                 std::string("cannot start the grader with '/nonexistent/python3': ") + std::strerror(ENOENT));

        ChildSpec lost = shell("true");
        lost.workingDirectory = "/nonexistent/workspace";
        auto wrongPlace = ChildProcess::spawn(lost);
        QVERIFY(!wrongPlace.ok());
        QVERIFY2(wrongPlace.error().message.find("cannot start 'sh': cannot enter its working directory "
                                                 "/nonexistent/workspace") == 0,
                 wrongPlace.error().message.c_str());

        ChildSpec unwritable = shell("true");
        unwritable.output = ChildStream::toFile("/nonexistent/dir/log.txt");
        auto noLog = ChildProcess::spawn(unwritable);
        QVERIFY(!noLog.ok());
        QVERIFY2(noLog.error().message.find("cannot open /nonexistent/dir/log.txt for its stdout") != std::string::npos,
                 noLog.error().message.c_str());
    }

    void destroyingARunningChildKillsAndReapsItsGroup() {
        pid_t leader = -1;
        pid_t background = -1;
        {
            auto child = ChildProcess::spawn(shell("sleep 100 & echo $!; sleep 100"));
            QVERIFY(child.ok());
            leader = child->pid();
            background = firstLinePid(*child, 10);
            QVERIFY(background > 1);
            QCOMPARE(::getpgid(background), leader); // its own process group, which the child leads
            QVERIFY(::getpgid(leader) != ::getpgrp());
        }
        int raw = 0;
        QCOMPARE(::waitpid(leader, &raw, WNOHANG), pid_t(-1)); // reaped by the destructor
        QVERIFY(processGone(leader));
        QVERIFY2(waitUntilGone(background, 3000), "the group's background sleep outlived the destructor");
    }

    void aChildThatEndedLeavesNoGroupMemberBehind() {
        // The child exits at once; what it left in its group dies with the handle (as an agent's background jobs do).
        pid_t background = -1;
        {
            ChildSpec spec = shell("sleep 100 & echo $!");
            auto child = ChildProcess::spawn(spec);
            QVERIFY(child.ok());
            background = firstLinePid(*child, 10);
            QVERIFY(child->waitUntil(deadlineIn(10)).has_value());
            QVERIFY(background > 1 && !processGone(background));
        }
        QVERIFY2(waitUntilGone(background, 3000), "a member of the ended child's group outlived the handle");
    }

    void aMovedHandleOwnsTheChild() {
        auto spawned = ChildProcess::spawn(shell("sleep 100"));
        QVERIFY(spawned.ok());
        ChildProcess moved = std::move(spawned).value();
        const pid_t pid = moved.pid();
        QVERIFY(!processGone(pid));
        ChildProcess other = std::move(moved);
        QCOMPARE(moved.pid(), pid_t(-1));
        QCOMPARE(other.pid(), pid);
        other.kill();
        QVERIFY(processGone(pid));
    }
};

QTEST_GUILESS_MAIN(ChildProcessTest)
#include "tst_child_process.moc"
