// `mkb calibrate`: parses the selection and settings, runs the A/A and A/B controls through core's runCalibration
// (core/protocol/calibration_run.h) on one device, prints the rates and stores the record per device and grader.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/retime_stop_options.h"
#include "app/cli/run_selection.h"

#include "core/analysis/calibration_ladder.h"
#include "core/catalog/catalog.h"
#include "core/grader_client/grader_process.h"
#include "core/protocol/calibration_job.h"
#include "core/protocol/calibration_run.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/wire/grade_request.h"
#include "core/wire/retime_request.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kCalibrateIntro =
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

)";

const char* const kCalibrateRest =
    R"(exit codes: 0 calibrated, 1 no solution of the selection could be calibrated, 2 bad command line, 3 missing suite or
            problem, 4 store error, 5 the grader failed, 130 interrupted (nothing is stored)
)";

/// The table with the re-timing's stop options inserted before --timing-draws.
OptionTable withRetimeStop(OptionTable table) {
    const OptionTable stop = retimeStopOptions();
    auto at =
        std::find_if(table.begin(), table.end(), [](const OptionDeclaration& o) { return o.name == "timing-draws"; });
    table.insert(at, stop.begin(), stop.end());
    return table;
}

const OptionTable& calibrateOptions() {
    static const OptionTable table = withRetimeStop({
        textOption("problems", "GLOB", "problems to include; several: the union, e.g. 'p0[1-9]' and 'p1[0-2]'")
            .withDefault("*")
            .isRepeatable(),
        pathOption("suite", "DIR", "a suite root").defaultSaid("the shipped problems/").isRepeatable(),
        textOption("dsls", "A,B", "the DSLs whose solutions are calibrated (one DSL is fine)")
            .withDefault("triton,cuda"),
        pathOption("solutions", "DIR",
                   "take the solutions from DIR/NN_slug.<dsl>.py instead of each family's _solutions/"),
        pathOption("dsl-dir", "DIR", "an extra folder of DSL descriptors, searched first").isRepeatable(),
        textOption("device", "DEV", "cuda:N or cpu").withDefault(CalibrationJob{}.device),
        integerOption("replicates", "N", "controls per solution and method")
            .withDefault(CalibrationJob{}.replicates)
            .within(1, 1000),
        numberOption("slowdown", "F", "the A/B copy's added delay as a fraction of its median")
            .withDefault(CalibrationJob{}.slowdown)
            .above(0),
        numberOption("delta", "F", "the outcome band the rates are judged at")
            .withDefault(CalibrationJob{}.delta)
            .above(0),
        pathOption("store", "PATH", "the project store").defaultSaid("$MKB_STORE, else the user's data folder"),
        pathOption("python", "PATH", "the grader's interpreter").defaultSaid("$MKB_PYTHON, else python3"),
        integerOption("timing-draws", "N",
                      "timing draws per unpaired grading (at least the " +
                          std::to_string(GradeSettings{}.recheckDraws) +
                          " that are re-checked); three gradings per solution and replicate")
            .withDefault(GradeSettings{}.timingDraws)
            .within(GradeSettings{}.recheckDraws, 100000),
        numberOption("grade-timeout", "S", "bound of one grading, in seconds")
            .withDefault(GradeSettings{}.timeoutS)
            .above(0),
    });
    return table;
}

std::string calibrateHelp() {
    return verbHelp(kCalibrateIntro, calibrateOptions(), kCalibrateRest);
}

/// The calibration the options describe, every check that needs no file done (device, DSLs, the re-timing's stop,
/// numbers); the problems and the DSL descriptors are read afterwards. The error is a bad command line (exit 2).
Result<CalibrationJob> calibrationJobFrom(const ParsedOptions& args, const std::vector<std::string>& rawArgs) {
    CalibrationJob job;
    job.device = args.text("device");
    if (Status valid = validateDevice(job.device); !valid) {
        return valid.error();
    }
    for (const std::string& item : splitString(args.text("dsls"), ',')) {
        const std::string id(trimmed(item));
        if (!id.empty()) {
            job.dsls.push_back(id);
        }
    }
    if (job.dsls.empty()) {
        return makeError("calibrate: --dsls names no DSL (give e.g. triton,cuda)");
    }
    auto stop = retimeStopFrom(args);
    if (!stop) {
        return makeError("calibrate: " + stop.error().message);
    }
    job.retime = *stop;
    if (args.value("solutions")) {
        job.solutionsDir = fs::path(*args.value("solutions"));
    }
    job.replicates = args.integer("replicates");
    job.slowdown = args.number("slowdown");
    job.delta = args.number("delta");
    job.grade.timingDraws = args.integer("timing-draws");
    job.grade.timeoutS = args.number("grade-timeout");
    job.selection = recordedCommandLine("calibrate", rawArgs);
    return job;
}

int runCalibrate(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(calibrateOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb calibrate --help)");
    }
    const ParsedOptions& args = *parsed;
    if (args.help) {
        std::cout << calibrateHelp();
        return kExitOk;
    }
    if (!args.positionals.empty()) {
        return fail(kExitUsage,
                    "calibrate: unexpected argument '" + args.positionals.front() + "' (mkb calibrate --help)");
    }
    auto described = calibrationJobFrom(args, rawArgs);
    if (!described) {
        return fail(kExitUsage, described.error().message);
    }
    CalibrationJob job = std::move(described).value();
    std::vector<fs::path> suites;
    for (const std::string& suite : args.all("suite")) {
        suites.emplace_back(suite);
    }
    // The union of every --problems glob, each problem once, in number order.
    std::vector<Problem>& problems = job.problems;
    std::vector<std::string> globs = args.all("problems");
    if (globs.empty()) {
        globs.push_back(args.text("problems"));
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
    for (const std::string& id : job.dsls) {
        auto dsl = loadRunDsl(id, dslDirs);
        if (!dsl) {
            return fail(kExitUsage, "calibrate: DSL '" + id + "': " + dsl.error().message);
        }
        job.dslDescriptors[id] = dsl->descriptorJson;
    }

    const fs::path storePath = args.value("store") ? fs::path(*args.value("store")) : defaultStorePath();
    GraderLaunch launch;
    launch.python = graderPythonFrom(args.value("python"));
    const double slowdown = job.slowdown;
    const double delta = job.delta;
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
    for (const std::string& line : calibrationSummaryLines(run.record, delta)) {
        printLine(line);
    }
    // The ladder is read back from the record's detail, as mkb report reads the stored one.
    const analysis::AnalysisSettings ladderSettings;
    for (const std::string& line :
         slowdownLadderLines(analysis::slowdownLadder(slowdownSessions(run.record), ladderSettings), slowdown,
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
                     calibrateHelp(), runCalibrate});

} // namespace
} // namespace mkb::cli
