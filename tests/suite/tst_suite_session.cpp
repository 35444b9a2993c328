// Tests of core's suite check set-up (core/suite/suite_session.h) where it stops before any grader starts: a
// missing suite folder, a glob that selects nothing, no loadable DSL, and a report file that cannot be written; and
// which earlier checks a resumed run reuses (core/suite/suite_resume.h).
#include "core/catalog/catalog.h"
#include "core/suite/suite_resume.h"
#include "core/suite/suite_session.h"
#include "support/testpaths.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

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

    void aCheckMadeOnAnotherModelOfGpuIsNotReused() {
        // "suite check --resume: a check made at the same device index on another model of GPU is checked again,
        // naming both; one made on the same model, or where this run's device has no name (the CPU, a failed probe),
        // is reused"
        const Catalog catalog = loadCatalog({cpuJob().suiteRoot});
        const Problem* problem = catalog.find("01");
        QVERIFY(problem != nullptr);
        const nlohmann::json solution = {
            {"dsl", "cpusim"}, {"present", true}, {"sha256", solutionFileSha256(solutionPath(*problem, "cpusim"))}};
        const nlohmann::json entry = {
            {"name", problem->name()},
            {"device", "cuda:0"},
            {"infrastructure_error", false},
            {"problem_fingerprint", problem->fingerprint},
            {"validation", {{"clean", true}, {"issues", nlohmann::json::array()}, {"device_name", "NVIDIA H200"}}},
            {"solutions", nlohmann::json::array({solution})}};
        EarlierSuiteReport earlier;
        earlier.graderFingerprint = "grader";
        earlier.boundary = "mkb";
        earlier.device = "cuda:0";
        earlier.dsls = {"cpusim"};
        earlier.gradings = 1;
        earlier.entries[problem->name()] = entry.dump();
        SuiteCheckOptions options;
        options.dsls = {"cpusim"};
        options.gradings = 1;
        options.device = "cuda:0";
        options.settings.boundary = "mkb";

        auto unnamed = reusableCheck(earlier, *problem, options, "grader");
        QVERIFY2(unnamed, unnamed ? "" : unnamed.error().message.c_str());
        options.deviceNames["cuda:0"] = "NVIDIA H200";
        QVERIFY(reusableCheck(earlier, *problem, options, "grader"));
        options.deviceNames["cuda:0"] = "NVIDIA A100-SXM4-80GB";
        auto other = reusableCheck(earlier, *problem, options, "grader");
        QVERIFY(!other);
        QCOMPARE(other.error().message, "it was checked on NVIDIA H200, not NVIDIA A100-SXM4-80GB");
    }
};

QTEST_GUILESS_MAIN(SuiteSessionTest)
#include "tst_suite_session.moc"
