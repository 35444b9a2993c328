// `mkb calibrate`: parses the selection and settings, runs the A/A and A/B controls through core's runCalibration
// (core/protocol/calibration_run.h) on one device, prints the rates and stores the record per device and grader.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/run_selection.h"

#include "core/catalog/catalog.h"
#include "core/wire/grade_request.h"
#include "core/grader_client/grader_process.h"
#include "core/wire/retime_request.h"
#include "core/analysis/calibration_ladder.h"
#include "core/protocol/calibration_run.h"
#include "core/protocol/calibration_job.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kCalibrateHelp =
    R"(usage: mkb calibrate [--problems GLOB] [--dsls a,b] [--device DEV] [--replicates N] [options]

Measures how often each timing method calls a change where there is none, and how often it sees a real one, on
this device (docs/metrics.md, "Calibration"). For every shipped solution of the selection
(<suite>/<family>/_solutions/NN_slug.<dsl>.py):
  A/A  the solution against itself;
  A/B  the solution against a copy slowed by --slowdown (default 0.10: after each call the grader adds a device-side
       delay of that fraction of the kernel's own median, inside the timed region).
Paired method: one re-timing per solution and replicate with kernels a, a copy of a, and the slowed copy, timed
together in one child (mkb retime's protocol). Unpaired method: three separate gradings (as mkb run grades its
arms): a, a again, and the slowed copy, which the grader really slows (the same delay, sized from the copy's own
warm-up median, inside the timed region; its verdict records the slowdown). A/A compares the two gradings of a, A/B
the first with the slowed copy. Outcomes follow docs/metrics.md at --delta.

It prints, for both methods, the false helped/harmed rate on A/A, the detection rate of the slowdown as harmed on
A/B, and the smallest delta that keeps the A/A false rate at or below 1%, and stores them in the project store for
this device and grader fingerprint (a newer calibration of the same device and grader archives the older one).
Then the A/B ladder: the paired re-timing also times eager, so A's and B's speedups over eager come from one
session; R@t and S of A and of B, the lift B - A with its 95% bootstrap interval, ties per t, how many controls
crossed a threshold (and how many the wrong way), how many speedup changes B/A lie below 1 beyond noise, and one
line per control (docs/metrics.md, "Calibration ladder"). mkb report shows the stored ladder too.

options:
  --problems GLOB       problems to include (default "*"; repeatable: the union, e.g. 'p0[1-9]' and 'p1[0-2]')
  --suite DIR           a suite root (repeatable; default: the shipped problems/)
  --dsls A,B            the DSLs whose solutions are calibrated (default triton,cuda; one DSL is fine)
  --solutions DIR       take the solutions from DIR/NN_slug.<dsl>.py instead of each family's _solutions/
  --dsl-dir DIR         an extra folder of DSL descriptors, searched first (repeatable)
  --device DEV          cuda:N (default cuda:0) or cpu
  --replicates N        controls per solution and method (default 1)
  --slowdown F          the A/B copy's added delay as a fraction of its median (default 0.10)
  --delta F             the outcome band the rates are judged at (default 0.05)
  --store PATH          the project store (default: $MKB_STORE, else the user's data folder)
  --python PATH         the grader's interpreter (default: $MKB_PYTHON, else python3)
  --min-rounds N, --max-rounds N, --max-seconds S, --ci-halfwidth F   the paired re-timing's stop (as mkb retime)
  --timing-draws N      timing draws per unpaired grading (default 50, at least 3: three are re-checked);
                        three gradings per solution and replicate
  --grade-timeout S     bound of one grading (default 600)

exit codes: 0 calibrated, 1 no solution of the selection could be calibrated, 2 bad command line, 3 missing suite or
            problem, 4 store error, 5 the grader failed, 130 interrupted (nothing is stored)
)";

int runCalibrate(const std::vector<std::string>& rawArgs) {
    ArgSpec spec;
    spec.options = {"problems",   "suite",       "dsls",         "solutions",    "dsl-dir",      "device",
                    "replicates", "slowdown",    "delta",        "store",        "python",       "min-rounds",
                    "max-rounds", "max-seconds", "ci-halfwidth", "timing-draws", "grade-timeout"};
    spec.repeatable = {"suite", "dsl-dir", "problems"};
    auto parsed = parseArgs(rawArgs, spec);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb calibrate --help)");
    }
    const ParsedArgs& args = *parsed;
    if (args.wantsHelp()) {
        std::cout << kCalibrateHelp;
        return kExitOk;
    }
    if (!args.positionals.empty()) {
        return fail(kExitUsage,
                    "calibrate: unexpected argument '" + args.positionals.front() + "' (mkb calibrate --help)");
    }
    const std::string device = args.optionOr("device", "cuda:0");
    if (Status valid = validateDevice(device); !valid) {
        return fail(kExitUsage, valid.error().message);
    }
    std::vector<std::string> dsls;
    for (const std::string& item : splitString(args.optionOr("dsls", "triton,cuda"), ',')) {
        const std::string id(trimmed(item));
        if (!id.empty()) {
            dsls.push_back(id);
        }
    }
    if (dsls.empty()) {
        return fail(kExitUsage, "calibrate: --dsls names no DSL (give e.g. triton,cuda)");
    }
    auto replicates = args.intOption("replicates", 1, 1, 1000);
    // Each grading re-checks GradeSettings::recheckDraws of its timing draws, so fewer draws than that cannot grade.
    auto timingDraws = args.intOption("timing-draws", 50, GradeSettings{}.recheckDraws, 100000);
    RetimeSettings retimeSettings;
    auto minRounds = args.intOption("min-rounds", retimeSettings.minRounds, 2, 1000000);
    auto maxRounds = args.intOption("max-rounds", retimeSettings.maxRounds, 2, 1000000);
    for (const Result<int>* value : {&replicates, &timingDraws, &minRounds, &maxRounds}) {
        if (!*value) {
            return fail(kExitUsage, value->error().message);
        }
    }
    auto slowdown = args.doubleOption("slowdown", 0.10);
    auto delta = args.doubleOption("delta", 0.05);
    auto maxSeconds = args.doubleOption("max-seconds", retimeSettings.maxSeconds);
    auto halfwidth = args.doubleOption("ci-halfwidth", retimeSettings.ciHalfwidth);
    auto gradeTimeout = args.doubleOption("grade-timeout", 600);
    for (const Result<double>* value : {&slowdown, &delta, &maxSeconds, &halfwidth, &gradeTimeout}) {
        if (!*value || **value <= 0) {
            return fail(kExitUsage, *value ? "calibrate: --slowdown, --delta, --max-seconds, --ci-halfwidth and "
                                             "--grade-timeout take a positive number"
                                           : value->error().message);
        }
    }
    if (*maxRounds < *minRounds) {
        return fail(kExitUsage, "calibrate: --max-rounds is below --min-rounds");
    }
    retimeSettings = {*minRounds, *maxRounds, *maxSeconds, *halfwidth};

    std::vector<fs::path> suites;
    for (const std::string& suite : args.all("suite")) {
        suites.emplace_back(suite);
    }
    std::vector<Problem> problems; // the union of every --problems glob, each problem once, in number order
    std::vector<std::string> globs = args.all("problems");
    if (globs.empty()) {
        globs.push_back("*");
    }
    for (const std::string& glob : globs) {
        SelectionError selectionError;
        std::vector<Problem> selected = selectProblems(suites, glob, "calibrate", &selectionError);
        if (selected.empty()) {
            return fail(selectionError.exitCode, selectionError.message);
        }
        addProblemsOnce(problems, std::move(selected));
    }
    std::vector<fs::path> dslDirs;
    for (const std::string& dir : args.all("dsl-dir")) {
        dslDirs.emplace_back(dir);
    }
    std::map<std::string, std::string> descriptors;
    for (const std::string& id : dsls) {
        auto dsl = loadRunDsl(id, dslDirs);
        if (!dsl) {
            return fail(kExitUsage, "calibrate: DSL '" + id + "': " + dsl.error().message);
        }
        descriptors[id] = dsl->descriptorJson;
    }

    const fs::path storePath = args.option("store") ? fs::path(*args.option("store")) : defaultStorePath();
    GraderLaunch launch;
    launch.python = graderPythonFrom(args.option("python"));
    CalibrationJob job;
    job.problems = std::move(problems);
    job.dsls = dsls;
    job.dslDescriptors = std::move(descriptors);
    if (args.option("solutions")) {
        job.solutionsDir = fs::path(*args.option("solutions"));
    }
    job.device = device;
    job.replicates = *replicates;
    job.slowdown = *slowdown;
    job.delta = *delta;
    job.retime = retimeSettings;
    job.grade.timingDraws = *timingDraws;
    job.grade.timeoutS = *gradeTimeout;
    job.selection = recordedCommandLine("calibrate", rawArgs);
    const auto printLine = [](const std::string& line) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    };
    CalibrationCallbacks callbacks;
    callbacks.graderStarted = [] { installInterruptHandler(); };
    callbacks.progress = printLine;
    const CalibrationStoreRun outcome =
        calibrateStore(storePath, launch, std::move(job), callbacks, &interruptRequested());
    if (outcome.failedAt && *outcome.failedAt != CalibrationStage::Storing) {
        switch (*outcome.failedAt) {
        case CalibrationStage::OpeningStore:
            return fail(kExitStore, outcome.error);
        case CalibrationStage::StartingGrader:
            return fail(kExitInfrastructure, outcome.error);
        case CalibrationStage::Calibrating:
        case CalibrationStage::Storing:
            break;
        }
        return fail(kExitBadInput, outcome.error);
    }
    const CalibrationRun& run = *outcome.run;
    if (run.cancelled) {
        return fail(kExitInterrupted, "calibrate: interrupted; nothing was stored");
    }
    if (!run.anyControl()) {
        return fail(run.infrastructure > 0 ? kExitInfrastructure : kExitFailed,
                    "calibrate: no solution of the selection could be calibrated (see above)");
    }
    std::printf("\n");
    for (const std::string& line : calibrationSummaryLines(run.record, *delta)) {
        printLine(line);
    }
    // The ladder is read back from the record's detail, as mkb report reads the stored one.
    const analysis::AnalysisSettings ladderSettings;
    for (const std::string& line :
         slowdownLadderLines(analysis::slowdownLadder(slowdownSessions(run.record), ladderSettings), *slowdown,
                             ladderSettings.thresholds)) {
        printLine(line);
    }
    if (!outcome.storedId) {
        return fail(kExitStore, outcome.error);
    }
    std::printf("stored as calibration #%lld in %s\n", static_cast<long long>(*outcome.storedId),
                storePath.string().c_str());
    return run.infrastructure > 0 ? kExitInfrastructure : kExitOk;
}

const bool registered =
    registerCommand({"calibrate", "A/A and A/B controls of the paired and unpaired outcome rules on a device",
                     kCalibrateHelp, runCalibrate});

} // namespace
} // namespace mkb::cli
