// `mkb regrade`: our grader's verdicts on the stored submissions of existing trials (an imported KernelBench-X
// corpus's rounds), filed beside the verdicts they came with; convergent.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"

#include "core/grader_client/grader_pool.h"
#include "core/protocol/regrade.h"
#include "core/protocol/run_selection.h"
#include "core/util/paths.h"
#include "core/vocabulary/boundary.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kRegradeIntro =
    R"(usage: mkb regrade [--store S] [--model NAME] [--boundary mkb|strict] [--device DEV | --devices LIST]
                   [--workers N] [--problems GLOB] [--time-limit SECONDS] [options]

Grades every stored submission of the selected live trials again with our grader, under one boundary, through the warm
grader pool that mkb run uses (one server per device), and files each verdict beside the submission's own: an imported
KernelBench-X corpus keeps its "kbx" verdicts, ours are stored under mkb or strict with the grader's and the problem's
fingerprints. A round of a corpus trial is first made a kernel.py of our contract (its code without KernelBench-X's
test harness, then a solve() making the call the problem's reference() makes; docs/guide/kernelbenchx.md); any other
submission is graded as it is. The problem file is the one the store holds for the trial.

Convergent: a submission already regraded under the boundary with the same grader and problem is skipped, so the same
command again grades nothing; an interrupted or time-limited run keeps what it graded and the next one continues.

)";

const char* const kRegradeRest =
    R"(output: one line per round: "<task> <round>  <status>  ours (<boundary>): <verdict>  theirs (<boundary>): <verdict>",
        then a summary with the seconds per kernel graded.
exit codes: 0 every selected round is graded, current or skipped with its reason (a time limit also exits 0 and says
            how many are left), 2 bad command line, 3 a DSL descriptor is missing, 4 store error, 5 the grader failed
            for some rounds (run again), 130 interrupted (run again to continue)
)";

const OptionTable& regradeOptions() {
    static const OptionTable table = {
        pathOption("store", "PATH", "the project store").defaultSaid("$MKB_STORE, else the user's data folder"),
        textOption("model", "NAME", "only this model's trials, e.g. kbx-geak").defaultSaid("every model"),
        textOption("boundary", "B", "mkb or strict").withDefault(GradeSettings{}.boundary),
        textOption("problems", "GLOB",
                   "only trials whose problem matches: NNN, NNN_slug, family/NNN_slug or the corpus task "
                   "(Activation/gelu_bf16)")
            .withDefault("*"),
        textOption("device", "DEV", "cuda:N or cpu").withDefault("cuda:0"),
        textOption("devices", "LIST", "several devices, one grader server each (e.g. all, or cuda:0,cuda:1)"),
        integerOption("workers", "N", "gradings in flight at once").within(1, 64).defaultSaid("one per device"),
        numberOption("time-limit", "S", "start no grading after S seconds; run again to continue").above(0),
        textOption("dsl", "ID", "grade as this DSL instead of each trial's (a corpus written in another DSL)"),
        pathOption("dsl-dir", "DIR", "an extra folder of DSL descriptors, searched first").isRepeatable(),
        pathOption("python", "PATH", "the grader's interpreter").defaultSaid("$MKB_PYTHON, else python3"),
        numberOption("grade-timeout", "S", "bound of one evaluation, in seconds")
            .withDefault(GradeSettings{}.timeoutS)
            .above(0),
        integerOption("warmup-draws", "N", "warm-up draws before timing")
            .withDefault(GradeSettings{}.warmupDraws)
            .within(0, 1000),
        integerOption("timing-draws", "N", "timed draws")
            .withDefault(GradeSettings{}.timingDraws)
            .within(GradeSettings{}.recheckDraws, 10000),
        pathOption("kernels", "DIR", "keep each round's kernel.py under DIR")
            .defaultSaid("a temporary folder, removed at the end"),
        flagOption("dry-run",
                   "list what would be graded and write the kernels (with --kernels); grade and store nothing"),
    };
    return table;
}

std::string regradeHelp() {
    return verbHelp(kRegradeIntro, regradeOptions(), kRegradeRest);
}

void printRound(const RegradeRound& round, const std::string& boundary) {
    std::string line = round.task + " " + round.round + "  " + toString(round.status);
    if (round.ours) {
        line += "  ours (" + boundary + "): " + verdictInWords(*round.ours);
    } else if (!round.reason.empty()) {
        line += ": " + round.reason;
    }
    line += "  theirs (" + round.theirs.boundary + "): " + verdictInWords(round.theirs);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

/// The regrading the options describe: boundary, devices, workers, grading numbers, scope and flags, each checked;
/// the error is a bad command line (exit 2).
Result<RegradeJob> regradeJobFrom(const ParsedOptions& args) {
    RegradeJob job;
    auto boundary = parseBoundary(args.text("boundary"));
    if (!boundary) {
        return makeError("regrade: " + boundary.error().message);
    }
    job.grade.boundary = *boundary;
    if (args.value("device") && args.value("devices")) {
        return makeError("regrade: give --device or --devices, not both");
    }
    if (auto devices = args.value("devices")) {
        auto list = parseDeviceList(*devices, visibleCudaDeviceCount());
        if (!list) {
            return makeError("regrade: --devices: " + list.error().message);
        }
        job.devices = *list;
    } else {
        job.devices = {args.text("device")};
        if (Status valid = validateDevice(job.devices.front()); !valid) {
            return valid.error();
        }
    }
    job.workers = args.given("workers") ? args.integer("workers") : 0;
    job.grade.warmupDraws = args.integer("warmup-draws");
    job.grade.timingDraws = args.integer("timing-draws");
    job.grade.timeoutS = args.number("grade-timeout");
    if (args.given("time-limit")) {
        job.timeLimitS = args.number("time-limit");
    }
    if (auto model = args.value("model")) {
        job.model = *model;
    }
    job.problems = args.text("problems");
    if (auto dsl = args.value("dsl")) {
        job.dsl = *dsl;
    }
    std::vector<fs::path> dslDirs;
    for (const std::string& dir : args.all("dsl-dir")) {
        dslDirs.emplace_back(dir);
    }
    job.dslDescriptor = cachedDescriptorLookup(std::move(dslDirs));
    if (auto kernels = args.value("kernels")) {
        job.kernelsOut = fs::absolute(*kernels);
    }
    job.dryRun = args.flag("dry-run");
    return job;
}

int runRegrade(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(regradeOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb regrade --help)");
    }
    const ParsedOptions& args = *parsed;
    if (args.help) {
        std::cout << regradeHelp();
        return kExitOk;
    }
    if (!args.positionals.empty()) {
        return fail(kExitUsage, "regrade: unexpected argument '" + args.positionals.front() + "' (mkb regrade --help)");
    }
    auto described = regradeJobFrom(args);
    if (!described) {
        return fail(kExitUsage, described.error().message);
    }
    RegradeJob job = std::move(described).value();

    const fs::path storePath = args.value("store") ? fs::path(*args.value("store")) : defaultStorePath();
    GraderLaunch launch;
    launch.python = graderPythonFrom(args.value("python"));
    std::atomic<bool>& cancel = interruptRequested();
    RegradeCallbacks callbacks;
    callbacks.graderStarted = [] { installInterruptHandler(); };
    callbacks.roundDone = [&](const RegradeRound& round) { printRound(round, job.grade.boundary); };
    const RegradeRun run = regradeStore(storePath, launch, job, callbacks, &cancel);
    if (!run.summary) {
        switch (run.failedAt) {
        case RegradeStage::OpeningStore:
        case RegradeStage::Filing:
            return fail(kExitStore, run.error);
        case RegradeStage::Selecting:
            return fail(kExitBadInput, run.error);
        case RegradeStage::StartingGrader:
            return fail(kExitInfrastructure, "regrade: " + run.error);
        }
    }
    const RegradeSummary& summary = *run.summary;
    const int graded = summary.count(RegradeStatus::Graded);
    const int left = summary.count(RegradeStatus::Left);
    std::printf("\n%zu rounds (%s): ", summary.rounds.size(), job.grade.boundary.c_str());
    if (job.dryRun) {
        std::printf("%d to grade, %d current, %d without a problem file, %d not adapted; dry run: nothing graded or "
                    "written\n",
                    summary.count(RegradeStatus::WouldGrade), summary.count(RegradeStatus::Current),
                    summary.count(RegradeStatus::NoProblem), summary.count(RegradeStatus::NotAdapted));
        return kExitOk;
    }
    std::printf("%d graded, %d current, %d without a problem file, %d not adapted, %d grader failures, %d left in "
                "%.1f s (%.2f s per kernel graded)%s\n",
                graded, summary.count(RegradeStatus::Current), summary.count(RegradeStatus::NoProblem),
                summary.count(RegradeStatus::NotAdapted), summary.count(RegradeStatus::Infrastructure), left,
                summary.seconds, graded > 0 ? summary.seconds / graded : 0.0,
                summary.cancelled          ? "; interrupted: run the same command again to continue"
                : summary.timeLimitReached ? "; time limit reached: run the same command again to continue"
                                           : "");
    std::fflush(stdout);
    if (summary.cancelled) {
        return kExitInterrupted;
    }
    if (summary.count(RegradeStatus::Infrastructure) > 0) {
        const std::size_t failures = summary.count(RegradeStatus::Infrastructure);
        return fail(kExitInfrastructure, "regrade: the grader failed for " + std::to_string(failures) +
                                             (failures == 1 ? " round" : " rounds") +
                                             " (see above); run the same command again");
    }
    return kExitOk;
}

const bool registered = registerCommand({"regrade",
                                         "grade stored submissions again under a boundary, beside their own verdicts "
                                         "(an imported KernelBench-X corpus; convergent)",
                                         regradeHelp(), runRegrade});

} // namespace
} // namespace mkb::cli
