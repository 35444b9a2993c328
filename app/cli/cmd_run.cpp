// `mkb run`: executes the transfer protocol for a model over problems × a DSL pair × replicates, convergently.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/run_on_slurm.h"
#include "app/cli/run_selection.h"

#include "core/vocabulary/boundary.h"
#include "core/wire/grade_request.h"
#include "core/grader_client/grader_pool.h"
#include "core/protocol/planner.h"
#include "core/protocol/run_setup.h"
#include "core/protocol/runner.h"
#include "core/util/json_input.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kRunHelp = R"(usage: mkb run --model NAME --driver KIND --problems GLOB --dsls A,B[,C...] [options]

Runs the transfer protocol (docs/guide/runs.md) for one model: for every selected problem and replicate, a solo
attempt in each DSL, then each skill arm (A2B_skill, B2A_skill) given the skill its source solo wrote, with a header saying it
was distilled in the other DSL. Planning is convergent, exactly like `mkb plan`: finished trials are reused,
crashed, interrupted or broken ones rerun, stale ones kept unless --rerun-stale archives and redoes them. Running
the same command again after a crash, kill -9 or Ctrl+C completes the run without losing or duplicating a trial.

Each attempt gets the same budget: the wall clock (grading waits included), the feedback submissions (one that
never entered evaluation or is over the size limit is not counted) and the kernel size. After the driver ends,
its last kernel.py is graded afresh: that is the trial's final verdict.

drivers:
  reference  submits the shipped solution <suite>/<family>/_solutions/NN_slug.<dsl>.py (smoke tests, demos);
             config keys: solutions_dir, solution_dsl {dsl: other}, no_skill_for [dsl...]
  command    starts a terminal agent in the attempt's workspace; config: {"command": "agent {instruction}"}
             with placeholders {workspace}, {instruction}, {submit}; the agent grades with ./submit (mkb submit)
  chat       an OpenAI-compatible chat endpoint (see the chat driver's settings)

options:
  --model NAME            the model's name in the store (required)
  --driver KIND           reference, command or chat (required)
  --driver-config FILE    the driver's settings, a JSON object (never put secrets in it)
  --problems GLOB         problems to include, e.g. "*", "p0[1-3]", "attention/*" (required)
  --dsls A,B[,C...]       the DSL pair, or more DSLs: every pair of them is run, pair after pair, each DSL's
                          solos shared (e.g. triton,cuda,numba,pallas: 12 directions) (required)
  --replicates N          replicates per cell, 1..100 (default 1)
  --suite DIR             a suite root (repeatable; default: the shipped problems/)
  --dsl-dir DIR           an extra folder of DSL descriptors, searched first (repeatable)
  --device DEV            cuda:N (default cuda:0) or cpu
  --devices LIST          grade on several devices at once instead: "all" (every visible GPU) or a comma list such
                          as cuda:0,cuda:2 (cpu:0,cpu:1 are test devices that grade on the CPU); one grader server
                          per device, each under its own lock, gradings to the least-loaded, a cell's re-timing whole
                          on one device, and each verdict records its device; a device whose server dies or whose
                          device fails leaves the rotation (one note line) and its gradings run on the others; when
                          every device is lost the run stops (exit 5) keeping what finished; not with --device
  --python PATH           the grader's interpreter (default: $MKB_PYTHON, else python3)
  --store PATH            the project store (default: $MKB_STORE, else the user's data folder)
  --workspaces DIR        where attempt workspaces go (default: beside the store, <store>.attempts/)
  --wall-clock S          wall-clock seconds per attempt (default 2400)
  --submissions N         feedback submissions per attempt (default 10)
  --max-kernel-bytes N    kernel.py size limit (default 300000)
  --grade-timeout S       bound of one evaluation (default 600)
  --timing-draws N        timing draws per evaluation (default 50, at least 3: three are re-checked)
  --boundary B            the implementation boundary graded and stated in the prompt: mkb (default;
                          MetaKernelBench's rule, eager PyTorch may finish what a DSL kernel began) or strict (all
                          arithmetic in the DSL); a trial graded under another boundary (legacy included) is stale
                          (docs/guide/boundaries.md)
  --concurrency N         attempts in flight at once (default 2); grading is serialised per GPU
  --rerun-stale           archive stale trials and run them again
  --no-retime             skip the paired re-timing of cells (on by default: as soon as a cell's three arms are
                          final, while other attempts still run, a cell whose base and skill passed has its kernels
                          timed together on --device under its GPU lock, docs/metrics.md;
                          cells already re-timed of the same kernels, device and grader are kept; mkb retime
                          does the same for existing stores); on --device cpu (a test device) it stops at
                          20..200 rounds or 10 s instead of 100..2000 rounds or 60 s
  --dry-run               print the plan (with the grader's fingerprint) and stop; nothing is written
  --progress MODE         text (default: lines on stderr) or json (one JSON object per event on stdout:
                          plan, trial_started, submission, trial_finished, retimed, run_finished)
  --only COORD            run only this trial of the plan, e.g. p01_r1_solo_triton (repeatable; mkb run-shard
                          runs one trial per Slurm job this way)
  --executor KIND         local (default) or slurm: submit the runnable trials as Slurm job arrays, one GPU
                          each, and merge what the jobs write into --store (docs/guide/cluster.md); no re-timing
  --shared DIR            slurm: a folder this host and every node see at the same path (batches, shards, logs)
  --partition P           slurm: the partition the jobs go to (default: the cluster's default)
  --slurm-args "..."      slurm: more sbatch options, as shell words (e.g. "--account=lab --qos=high")
  --slurm-gpu OPTION      slurm: how a job asks for its GPU (default --gres=gpu:1; none where there is no GRES)
  --slurm-time MIN        slurm: a job's time limit in minutes (default: wall clock + grade timeout + 10 min)
  --slurm-poll S          slurm: seconds between looks at the queue and the shard folder (default 5)

exit codes: 0 every planned trial finished or was skipped, 2 bad command line, unknown DSL or driver setting,
            3 missing suite, problem or config file, 4 store error, 5 the grader could not start or some trials
            ended with an infrastructure error (run again to redo them), 130 interrupted (run again to resume)
)";

std::atomic<bool>& stopRequested = interruptRequested();

void printDryRun(const RunSummary& summary) {
    std::size_t width = 0;
    for (const PlanEntry& entry : summary.plan.entries) {
        width = std::max(width, entry.coordinateText.size());
    }
    for (const PlanEntry& entry : summary.plan.entries) {
        std::printf("%-*s  %-5s  %s\n", static_cast<int>(width), entry.coordinateText.c_str(), toString(entry.status),
                    entry.reason.c_str());
    }
    std::string counts;
    for (PlanStatus status : kAllPlanStatuses) {
        counts += (counts.empty() ? "" : ", ") + std::string(toString(status)) + " " +
                  std::to_string(summary.plan.count(status));
    }
    std::printf("\ncounts: %s (total %zu)\ndry run: nothing was run or written\n", counts.c_str(),
                summary.plan.entries.size());
    std::fflush(stdout);
}

int runRun(const std::vector<std::string>& rawArgs) {
    ArgSpec spec;
    spec.flags = {"rerun-stale", "dry-run", "no-retime"};
    spec.options = {"model",        "driver",      "driver-config",    "problems",    "dsls",     "replicates",
                    "suite",        "dsl-dir",     "device",           "python",      "store",    "workspaces",
                    "wall-clock",   "submissions", "max-kernel-bytes", "concurrency", "progress", "grade-timeout",
                    "timing-draws", "only",        "boundary"};
    spec.options.insert(slurmRunOptions().begin(), slurmRunOptions().end());
    spec.options.insert("devices");
    spec.repeatable = {"suite", "dsl-dir", "only"};
    auto parsed = parseArgs(rawArgs, spec);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb run --help)");
    }
    const ParsedArgs& args = *parsed;
    if (args.wantsHelp()) {
        std::cout << kRunHelp;
        return kExitOk;
    }
    if (!args.positionals.empty()) {
        return fail(kExitUsage, "run: unexpected argument '" + args.positionals.front() + "' (mkb run --help)");
    }
    for (const char* required : {"model", "driver", "problems", "dsls"}) {
        if (!args.option(required) || trimmed(*args.option(required)).empty()) {
            return fail(kExitUsage, std::string("run: --") + required + " is required (mkb run --help)");
        }
    }
    auto dslList = parseDslList(*args.option("dsls"), "run");
    if (!dslList) {
        return fail(kExitUsage, dslList.error().message);
    }
    const std::string progressMode = args.optionOr("progress", "text");
    if (progressMode != "text" && progressMode != "json") {
        return fail(kExitUsage, "run: --progress takes text or json, got '" + progressMode + "'");
    }

    const std::string executor = args.optionOr("executor", "local");
    if (executor != "local" && executor != "slurm") {
        return fail(kExitUsage, "run: --executor takes local or slurm, got '" + executor + "'");
    }
    for (const std::string& option : slurmRunOptions()) {
        if (executor == "local" && option != "executor" && args.option(option)) {
            return fail(kExitUsage, "run: --" + option + " applies to --executor slurm only");
        }
    }

    RunSettings settings;
    settings.model = *args.option("model");
    settings.driverKind = *args.option("driver");
    settings.commandLine = recordedCommandLine("run", rawArgs);
    settings.device = args.optionOr("device", "cuda:0");
    if (Status valid = validateDevice(settings.device); !valid) {
        return fail(kExitUsage, valid.error().message);
    }
    if (auto devices = args.option("devices")) {
        if (args.option("device")) {
            return fail(kExitUsage, "run: --devices and --device cannot be given together; use --devices for several "
                                    "devices or --device for one (mkb run --help)");
        }
        if (executor != "local") {
            return fail(kExitUsage, "run: --devices applies to --executor local only (each Slurm job holds one GPU)");
        }
        auto listed = parseDeviceList(*devices, visibleCudaDeviceCount());
        if (!listed) {
            return fail(kExitUsage, "run: " + listed.error().message);
        }
        settings.devices = std::move(listed).value();
        settings.device = settings.devices.front(); // recorded with the invocation beside the whole list
    }
    auto replicates = args.intOption("replicates", 1, 1, 100);
    auto submissions = args.intOption("submissions", 10, 0, 10000);
    auto maxBytes = args.intOption("max-kernel-bytes", GradeSettings{}.maxKernelBytes, 1, 1 << 30);
    auto concurrency = args.intOption("concurrency", 2, 1, 64);
    // Each grading re-checks GradeSettings::recheckDraws of its timing draws, so fewer draws than that cannot grade.
    auto timingDraws =
        args.intOption("timing-draws", GradeSettings{}.timingDraws, GradeSettings{}.recheckDraws, 100000);
    auto wallClock = args.doubleOption("wall-clock", 2400);
    auto gradeTimeout = args.doubleOption("grade-timeout", GradeSettings{}.timeoutS);
    for (const Result<int>* value : {&replicates, &submissions, &maxBytes, &concurrency, &timingDraws}) {
        if (!*value) {
            return fail(kExitUsage, value->error().message);
        }
    }
    for (const Result<double>* value : {&wallClock, &gradeTimeout}) {
        if (!*value || **value <= 0) {
            return fail(kExitUsage, *value ? "run: --wall-clock and --grade-timeout take a positive number of seconds"
                                           : value->error().message);
        }
    }
    settings.replicates = *replicates;
    settings.budget.maxSubmissions = *submissions;
    settings.budget.maxKernelBytes = *maxBytes;
    settings.budget.wallSeconds = *wallClock;
    settings.concurrency = *concurrency;
    settings.grade.timingDraws = *timingDraws;
    settings.grade.timeoutS = *gradeTimeout;
    auto boundary = parseBoundary(args.optionOr("boundary", std::string(kBoundaryMkb)));
    if (!boundary) {
        return fail(kExitUsage, "run: " + boundary.error().message + " (mkb run --help)");
    }
    settings.grade.boundary = *boundary;
    settings.rerunStale = args.has("rerun-stale");
    settings.dryRun = args.has("dry-run");
    settings.retime = !args.has("no-retime") && executor == "local";
    for (const std::string& coordinate : args.all("only")) {
        settings.onlyCoordinates.insert(coordinate);
    }
    useTestDeviceRetiming(settings);
    settings.grader.python = graderPythonFrom(args.option("python"));

    // The driver, checked once here so a bad setting is one clear line before anything starts.
    nlohmann::json driverSettings = nlohmann::json::object();
    if (auto configFile = args.option("driver-config")) {
        auto text = readFile(*configFile);
        if (!text) {
            return fail(kExitBadInput, "run: --driver-config: " + text.error().message);
        }
        auto parsed = parseJsonInput(*text);
        if (!parsed || !parsed->is_object()) {
            return fail(kExitBadInput, "run: --driver-config " + *configFile +
                                           (parsed ? " is not a JSON object" : ": " + parsed.error().message));
        }
        driverSettings = std::move(parsed).value();
    }
    if (auto probe = makeDriver(settings.driverKind, driverSettings); !probe) {
        return fail(kExitUsage, "run: " + probe.error().message);
    }
    settings.driverSettingsJson = driverSettings.dump();
    const DriverFactory driverFactory = [&]() { return makeDriver(settings.driverKind, driverSettings); };

    std::vector<fs::path> dslDirs;
    for (const std::string& dir : args.all("dsl-dir")) {
        dslDirs.emplace_back(dir);
    }
    std::map<std::string, RunDsl> loadedDsls; // every DSL of --dsls, checked before anything runs
    for (const std::string& id : *dslList) {
        auto dsl = loadRunDsl(id, dslDirs);
        if (!dsl) {
            return fail(kExitUsage, "run: DSL '" + id + "': " + dsl.error().message);
        }
        loadedDsls.emplace(id, std::move(dsl).value());
    }

    std::vector<fs::path> suites;
    for (const std::string& suite : args.all("suite")) {
        suites.emplace_back(suite);
    }
    SelectionError selectionError;
    settings.problems = selectProblems(suites, *args.option("problems"), "run", &selectionError);
    if (settings.problems.empty()) {
        return fail(selectionError.exitCode, selectionError.message);
    }

    const fs::path storePath = args.option("store") ? fs::path(*args.option("store")) : defaultStorePath();
    auto opened = openRunStore(storePath, settings);
    if (!opened) {
        return fail(kExitStore, opened.error().message);
    }
    const std::unique_ptr<Store> store = std::move(opened).value();
    std::error_code ec;
    settings.workspaceRoot = args.option("workspaces") ? fs::absolute(fs::path(*args.option("workspaces")), ec)
                                                       : defaultWorkspaceRoot(storePath);

    installInterruptHandler();
    TextProgress textProgress(stderr);
    JsonProgress jsonProgress(stdout);
    ProgressSink& progress = progressMode == "json" ? static_cast<ProgressSink&>(jsonProgress) : textProgress;
    // More than two DSLs run pair after pair (planner.h, dslPairsOf): a later pair reuses the solos an earlier one
    // recorded, so each DSL's solo runs once per problem and replicate, and the run ends with one run_finished line.
    const std::vector<std::pair<std::string, std::string>> pairs = dslPairsOf(*dslList);
    Result<RunSummary> summary = makeError("run: no DSL pair was run");
    RunFinish finish;
    ProgressCounts totals;
    for (std::size_t index = 0; index < pairs.size(); ++index) {
        settings.dslA = loadedDsls.at(pairs[index].first);
        settings.dslB = loadedDsls.at(pairs[index].second);
        if (pairs.size() > 1 && progressMode == "text") {
            std::cerr << "mkb: DSL pair " << index + 1 << "/" << pairs.size() << ": " << pairs[index].first << ","
                      << pairs[index].second << '\n';
        }
        summary = executor == "slurm" && store
                      ? runOnSlurmFromArgs(args, settings, *store, progress, stopRequested)
                      : runProtocol(settings, store.get(), driverFactory, progress, stopRequested);
        finish = runFinished(summary, settings);
        const ProgressCounts& counts = finish.event.counts;
        totals.total += counts.total;
        totals.done += counts.done;
        totals.failed += counts.failed;
        totals.interrupted += counts.interrupted;
        totals.passed += counts.passed;
        totals.elapsedSeconds += counts.elapsedSeconds;
        if (finish.end != RunEnd::Complete && finish.end != RunEnd::Planned) {
            break; // a failed or interrupted pair ends the run; running it again continues where it stopped
        }
        if (finish.end == RunEnd::Planned && progressMode == "text" && index + 1 < pairs.size()) {
            printDryRun(*summary);
        }
    }
    if (pairs.size() > 1) {
        finish.event.counts = totals;
        finish.event.counts.etaSeconds.reset();
    }
    if (finish.end == RunEnd::Planned && progressMode == "text") {
        printDryRun(*summary);
    }
    int exitCode = kExitOk;
    switch (finish.end) {
    case RunEnd::Complete:
    case RunEnd::Planned:
        break;
    case RunEnd::Interrupted:
        exitCode = kExitInterrupted;
        break;
    case RunEnd::Incomplete:
        exitCode = kExitInfrastructure;
        break;
    case RunEnd::Failed:
        exitCode = stopRequested.load() ? kExitInterrupted : kExitInfrastructure;
        break;
    }
    ProgressEvent& finished = finish.event;
    finished.exitCode = exitCode;
    if (summary || progressMode == "json") { // in text mode a failure is the one `mkb:` line below
        progress.onEvent(finished);
    }
    if (!summary && exitCode != kExitInterrupted) {
        return fail(exitCode, "run: " + summary.error().message);
    }
    return exitCode;
}

const bool registered = registerCommand(
    {"run", "run the transfer protocol for a model (convergent; --dry-run plans only)", kRunHelp, runRun});

} // namespace
} // namespace mkb::cli
