// Tests of core's suite check set-up (core/grading/suite_session.h) where it stops before any grader starts: a
// missing suite folder, a glob that selects nothing, no loadable DSL, and a report file that cannot be written.
#include "core/grading/suite_session.h"
#include "support/testpaths.h"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <filesystem>

namespace fs = std::filesystem;
using namespace mkb;

class SuiteSessionTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int graderStarts_ = 0;

    SuiteCheckJob cpuJob() const {
        SuiteCheckJob job;
        job.suiteRoot = mkbtest::sourceDir() / "tests" / "suite" / "fixtures" / "suite";
        job.options.dsls = {"cpusim"};
        job.options.device = "cpu";
        job.dslDirs = {mkbtest::sourceDir() / "tests" / "fixtures" / "dsls"};
        job.storePath = fs::path(dir_.path().toStdString()) / "store.sqlite";
        return job;
    }

    SuiteCheckRun check(const SuiteCheckJob& job) {
        SuiteCheckCallbacks callbacks;
        callbacks.graderStarting = [this] { ++graderStarts_; };
        std::atomic<bool> cancel{false};
        return runSuiteCheck(job, callbacks, cancel);
    }

private slots:
    void init() { graderStarts_ = 0; }

    void aMissingSuiteFolderStopsAtSelectionNamingIt() {
        SuiteCheckJob job = cpuJob();
        job.suiteRoot = fs::path(dir_.path().toStdString()) / "no-such-suite";
        const SuiteCheckRun run = check(job);
        QVERIFY(run.failedAt == SuiteCheckStage::Selecting);
        QCOMPARE(run.error, "suite folder " + job.suiteRoot.string() + " does not exist or is not a folder");
        QCOMPARE(graderStarts_, 0);
    }

    void aGlobThatSelectsNothingSaysHowManyProblemsThereAre() {
        SuiteCheckJob job = cpuJob();
        job.problemsGlob = "nothing-like-this";
        const SuiteCheckRun run = check(job);
        QVERIFY(run.failedAt == SuiteCheckStage::Selecting);
        QVERIFY2(run.error.find("no problem matched --problems 'nothing-like-this' in ") == 0, run.error.c_str());
        QVERIFY2(run.error.find("; mkb problems list)") != std::string::npos, run.error.c_str());
        QCOMPARE(graderStarts_, 0);
    }

    void noLoadableDslStopsWithItsReason() {
        SuiteCheckJob job = cpuJob();
        job.options.dsls = {"nodsl"};
        const SuiteCheckRun run = check(job);
        QVERIFY(run.failedAt == SuiteCheckStage::Descriptors);
        QVERIFY2(run.error.find("nodsl") != std::string::npos, run.error.c_str());
        QVERIFY(run.selected > 0); // the selection was made first
        QCOMPARE(graderStarts_, 0);
    }

    void aReportFileThatIsAFolderIsRefusedBeforeTheGraderStarts() {
        SuiteCheckJob job = cpuJob();
        job.options.dsls = {"cpusim", "nodsl"}; // one DSL loads: the other is an issue, not a stop
        const fs::path folder = fs::path(dir_.path().toStdString()) / "out";
        fs::create_directories(folder);
        job.jsonPath = folder;
        const SuiteCheckRun run = check(job);
        QVERIFY(run.failedAt == SuiteCheckStage::Outputs);
        QVERIFY2(run.error.find("--json " + folder.string() + " is a directory") != std::string::npos,
                 run.error.c_str());
        QCOMPARE(run.options.descriptors.count("cpusim"), std::size_t(1));
        QCOMPARE(run.options.descriptorErrors.count("nodsl"), std::size_t(1));
        QCOMPARE(graderStarts_, 0);
        QVERIFY(!fs::exists(job.storePath)); // nor was the store touched
    }
};

QTEST_GUILESS_MAIN(SuiteSessionTest)
#include "tst_suite_session.moc"
