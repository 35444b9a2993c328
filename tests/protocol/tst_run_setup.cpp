// Tests of what `mkb run` settles around runProtocol (core/protocol/run_setup.h), of the history `mkb plan` reads
// (core/protocol/plan_history.h) and of the union of --problems globs (core/protocol/run_selection.h): the run's end
// as its run_finished event, the default workspace folder, the test devices' re-timing, stores that a dry run or a
// plan must not create, each problem once, and each DSL descriptor loaded once.
#include "core/protocol/plan_history.h"
#include "core/protocol/run_selection.h"
#include "core/protocol/run_setup.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace mkb;
namespace fs = std::filesystem;

namespace {

RunSummary summaryOf(int attempted, int finished, int passed, int skipped, int failed) {
    RunSummary summary;
    summary.attempted = attempted;
    summary.finished = finished;
    summary.passed = passed;
    summary.skipped = skipped;
    summary.failed = failed;
    summary.seconds = 12.5;
    return summary;
}

} // namespace

class RunSetupTest : public QObject {
    Q_OBJECT
private slots:
    void aCompleteRunCountsWhatItDidAndTheCellsItRetimed() {
        RunSettings settings;
        RunSummary summary = summaryOf(3, 3, 2, 1, 0);
        summary.retimed = 1;
        const RunFinish finish = runFinished(summary, settings);
        QCOMPARE(finish.end, RunEnd::Complete);
        QCOMPARE(finish.event.kind, ProgressEventKind::RunFinished);
        QCOMPARE(finish.event.status, std::string("complete"));
        QCOMPARE(finish.event.message, std::string("3 attempted, 3 finished (2 passed), 1 skipped, 0 reused, 1 cells "
                                                   "re-timed"));
        QCOMPARE(finish.event.counts.total, 4);
        QCOMPARE(finish.event.counts.done, 4);
        QCOMPARE(finish.event.counts.passed, 2);
        QCOMPARE(finish.event.counts.elapsedSeconds, 12.5);
    }

    void cellsThatCouldNotBeRetimedAreNamedAndNoRetimingIsNotMentioned() {
        RunSettings settings;
        RunSummary summary = summaryOf(1, 1, 1, 0, 0);
        summary.retimeErrors = 2;
        QCOMPARE(runFinished(summary, settings).event.message,
                 std::string("1 attempted, 1 finished (1 passed), 0 skipped, 0 reused, 0 cells re-timed (2 could not "
                             "be: run again, or mkb retime)"));
        settings.retime = false;
        QCOMPARE(runFinished(summary, settings).event.message,
                 std::string("1 attempted, 1 finished (1 passed), 0 skipped, 0 reused"));
    }

    void failedTrialsLeaveTheRunIncompleteWithWhatToDo() {
        RunSettings settings;
        const RunFinish finish = runFinished(summaryOf(4, 2, 2, 0, 2), settings);
        QCOMPARE(finish.end, RunEnd::Incomplete);
        QCOMPARE(finish.event.status, std::string("incomplete"));
        QCOMPARE(finish.event.message, std::string("2 trials failed; run the same command again to redo them"));
        QCOMPARE(finish.event.counts.failed, 2);
    }

    void aCancelledRunIsInterruptedAndADryRunIsPlannedWithoutAMessage() {
        RunSettings settings;
        RunSummary cancelled = summaryOf(1, 0, 0, 0, 0);
        cancelled.cancelled = true;
        cancelled.interrupted = 1;
        const RunFinish interrupted = runFinished(cancelled, settings);
        QCOMPARE(interrupted.end, RunEnd::Interrupted);
        QCOMPARE(interrupted.event.message, std::string("run the same command again to resume"));
        QCOMPARE(interrupted.event.counts.interrupted, 1);
        settings.dryRun = true;
        const RunFinish planned = runFinished(cancelled, settings);
        QCOMPARE(planned.end, RunEnd::Planned);
        QCOMPARE(planned.event.status, std::string("planned"));
        QCOMPARE(planned.event.message, std::string());
    }

    void aRunThatFailedCarriesItsErrorAndNoCounts() {
        const RunFinish finish = runFinished(Result<RunSummary>(makeError("the grader did not start")), RunSettings{});
        QCOMPARE(finish.end, RunEnd::Failed);
        QCOMPARE(finish.event.status, std::string("failed"));
        QCOMPARE(finish.event.message, std::string("the grader did not start"));
        QCOMPARE(finish.event.counts.total, 0);
    }

    void workspacesGoBesideTheStoreUnderItsStem() {
        QCOMPARE(defaultWorkspaceRoot("/data/projects/h200.mkb.sqlite"), fs::path("/data/projects/h200.mkb.attempts"));
        QVERIFY(defaultWorkspaceRoot("store.sqlite").is_absolute());
        QCOMPARE(defaultWorkspaceRoot("store.sqlite").filename(), fs::path("store.attempts"));
    }

    void onlyTheCpuTestDevicesRetimeShorter() {
        for (const char* device : {"cpu", "cpu:1"}) {
            RunSettings settings;
            settings.device = device;
            settings.retimeSettings.ciHalfwidth = 0.02;
            useTestDeviceRetiming(settings);
            QCOMPARE(settings.retimeSettings.minRounds, 20);
            QCOMPARE(settings.retimeSettings.maxRounds, 200);
            QCOMPARE(settings.retimeSettings.maxSeconds, 10.0);
            QCOMPARE(settings.retimeSettings.ciHalfwidth, 0.02);
        }
        RunSettings gpu;
        gpu.device = "cuda:0";
        useTestDeviceRetiming(gpu);
        QCOMPARE(gpu.retimeSettings.minRounds, RetimeSettings{}.minRounds);
        QCOMPARE(gpu.retimeSettings.maxSeconds, RetimeSettings{}.maxSeconds);
    }

    void aDryRunWithoutAStoreCreatesNoneAndARealRunCreatesIt() {
        QTemporaryDir dir;
        const fs::path path = fs::path(dir.path().toStdString()) / "project.sqlite";
        RunSettings settings;
        settings.device = "cpu";
        settings.dryRun = true;
        auto none = openRunStore(path, settings);
        QVERIFY2(none.ok(), none.ok() ? "" : none.error().message.c_str());
        QVERIFY(*none == nullptr);
        QVERIFY(!fs::exists(path));
        settings.dryRun = false;
        auto created = openRunStore(path, settings);
        QVERIFY2(created.ok(), created.ok() ? "" : created.error().message.c_str());
        QVERIFY(*created != nullptr);
        QVERIFY(fs::exists(path));
        QCOMPARE(settings.peaksJson, std::string()); // never probed
    }

    void severalGlobsSelectEachProblemOnceInNumberOrder() {
        const auto problem = [](int number, const std::string& slug) {
            Problem made;
            made.number = number;
            made.slug = slug;
            return made;
        };
        std::vector<Problem> problems;
        addProblemsOnce(problems, {problem(7, "paged"), problem(2, "gemm")});
        addProblemsOnce(problems, {problem(2, "gemm again"), problem(1, "softmax")});
        QCOMPARE(problems.size(), std::size_t(3));
        QCOMPARE(problems[0].number, 1);
        QCOMPARE(problems[1].number, 2);
        QCOMPARE(problems[1].slug, std::string("gemm")); // the first glob's copy stays
        QCOMPARE(problems[2].number, 7);
    }

    void aDescriptorIsLoadedOnceAndItsErrorKept() {
        QTemporaryDir dir;
        const fs::path folder(dir.path().toStdString());
        const fs::path file = folder / "toydsl.json";
        {
            QFile out(QString::fromStdString(file.string()));
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(R"({"id": "toydsl", "display_name": "Toy DSL"})");
        }
        const auto lookup = cachedDescriptorLookup({folder});
        auto first = lookup("toydsl");
        QVERIFY2(first.ok(), first.ok() ? "" : first.error().message.c_str());
        QVERIFY(first->find("Toy DSL") != std::string::npos);
        fs::remove(file); // a second look does not read the folder again
        auto second = lookup("toydsl");
        QVERIFY(second.ok());
        QCOMPARE(*second, *first);
        auto unknown = lookup("nodsl");
        QVERIFY(!unknown.ok());
        QVERIFY2(unknown.error().message.find("nodsl") != std::string::npos, unknown.error().message.c_str());
        // A fresh lookup reads the folder again and finds the file gone.
        QVERIFY(!cachedDescriptorLookup({folder})("toydsl").ok());
    }

    void aPlanWithoutAStoreHasNoHistoryAndCreatesNoFile() {
        QTemporaryDir dir;
        const fs::path path = fs::path(dir.path().toStdString()) / "missing.sqlite";
        auto history = loadPlanHistory(path, "reference");
        QVERIFY2(history.ok(), history.ok() ? "" : history.error().message.c_str());
        QVERIFY(!history->storeExists);
        QVERIFY(history->trials.empty());
        QVERIFY(!fs::exists(path));
    }

    void aPlanNamesAFileThatIsNotAStore() {
        QTemporaryDir dir;
        const fs::path path = fs::path(dir.path().toStdString()) / "notes.txt";
        QFile file(QString::fromStdString(path.string()));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("these are notes, not a store\n");
        file.close();
        auto history = loadPlanHistory(path, "reference");
        QVERIFY(!history.ok());
        QVERIFY2(history.error().message.find(path.string()) != std::string::npos, history.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(RunSetupTest)
#include "tst_run_setup.moc"
