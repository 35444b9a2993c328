// `mkb retime`: paired re-timing of the cells of existing stores (DESIGN §5.5), convergent: only missing or stale
// cells.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/retime_stop_options.h"
#include "app/cli/run_selection.h"

#include "core/protocol/retime_job.h"
#include "core/protocol/stored_problems.h"
#include "core/store/store.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/wire/grade_request.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

std::string formatSeconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", seconds);
    return text;
}

const char* const kRetimeIntro =
    R"(usage: mkb retime [--store S] [--model NAME] [--problems GLOB] [--dsls A,B | --directions a2b,...]
                  [--replicates N] [--device DEV] [options]
       mkb retime --transitions [--store S] [--model NAME] [--problems GLOB] [--kinds LIST] [options]

Times the kernels of each cell (source, base and skill: each trial's final kernel) together in one grader child on
one device, paired and interleaved on the same seeds with the order rotating every round (docs/metrics.md), and stores
the result: the median per-round ratio of each pair with its 95% bootstrap CI and n. A cell is re-timed when its
base and skill arms are both final and both passed (a pass/fail difference is decisive without timing); the
source joins when it passed. Convergent: a repeated command re-times only cells whose re-timing is missing or stale
(made on another device or grader, or of other kernels); the older result is archived, never overwritten. Works on
imported MetaKernelBench results that hold kernel sources. Ctrl+C stops after dropping the cell in flight.

With --transitions it re-times each trial's consecutive submissions instead, as before/after pairs: both kernels
and eager in one session, so the after/before ratio and its 95% CI say whether a step of a refinement really made
the kernel faster (docs/guide/kernelbenchx.md). A pair is timed when both submissions ran at all (each has code
and its own verdict says it loaded); one whose kernel does not run correctly under our grader is stored with the
reason. Submissions imported from KernelBench-X's corpus are turned into kernel.py files with solve() first.

)";

const char* const kRetimeRest =
    R"(Stale re-timings are re-timed without a flag (unlike stale trials in mkb run): a re-timing of other kernels or on
another device says nothing about the current ones, and re-timing them changes no trial.

output: one line per cell: "<cell>  <status>  ratio R [lo, hi] n=N <stop>" (base -> skill: R > 1 means the skill
        kernel is faster), then a summary line. With --transitions, one line per pair: "<model> pNN rK <arm> i->j
        <status>  after/before R [lo, hi] n=N <stop>" (R > 1: the after kernel is faster).
exit codes: 0 every cell is current or not re-timable (or the time limit left some for the next run), 1 a kernel
            failed its correctness draw in the re-timing,
            2 bad command line, 3 missing suite or problem, 4 store error, 5 the grader failed (run again),
            130 interrupted (run again to continue)
)";

const OptionTable& retimeOptions() {
    static const OptionTable table = [] {
        OptionTable options = {
            pathOption("store", "PATH", "the project store").defaultSaid("$MKB_STORE, else the user's data folder"),
            textOption("model", "NAME", "only this model's cells").defaultSaid("every model"),
            textOption("problems", "GLOB", "problems to include; matched by number to the store's trials")
                .withDefault("*"),
            pathOption("suite", "DIR",
                       "a suite root (with --transitions, the problem files the store holds for its trials, as mkb "
                       "regrade reads them)")
                .defaultSaid("the shipped problems/")
                .isRepeatable(),
            textOption("dsls", "A,B", "only the two directions of this DSL pair"),
            textOption("directions", "LIST", "only these directions, e.g. triton2cuda,cuda2triton"),
            integerOption("replicates", "N", "only replicates 1..N").within(1, 100).defaultSaid("every replicate"),
            pathOption("dsl-dir", "DIR", "an extra folder of DSL descriptors, searched first").isRepeatable(),
            textOption("device", "DEV", "cuda:N or cpu").withDefault("cuda:0"),
            pathOption("python", "PATH", "the grader's interpreter").defaultSaid("$MKB_PYTHON, else python3"),
        };
        const OptionTable stop = retimeStopOptions();
        OptionTable tail = {
            numberOption("grade-timeout", "S", "bound of loading, correctness and warm-up in the child, in seconds")
                .withDefault(GradeSettings{}.timeoutS)
                .above(0),
            flagOption("redo-current", "re-time current cells too (their results are archived)"),
            flagOption("dry-run", "print which cells would be re-timed and why; nothing is timed or written"),
            numberOption("time-limit", "S", "start no re-timing after S seconds; the rest is left for the next run")
                .above(0)
                .defaultSaid("none"),
            flagOption("transitions", "re-time before/after pairs of consecutive submissions instead of cells"),
            textOption(
                "kinds", "LIST",
                "with --transitions: only pairs whose after submission names one of these transition kinds, e.g. "
                "speedup_increase,regression_* (a trailing * matches by prefix)"),
        };
        options.insert(options.end(), stop.begin(), stop.end());
        options.insert(options.end(), tail.begin(), tail.end());
        return options;
    }();
    return table;
}

std::string retimeHelp() {
    return verbHelp(kRetimeIntro, retimeOptions(), kRetimeRest);
}

Result<std::vector<Direction>> parseDirections(const std::string& text) {
    std::vector<Direction> directions;
    for (const std::string& item : splitString(text, ',')) {
        const std::string word(trimmed(item));
        if (word.empty()) {
            continue;
        }
        const auto at = word.find('2');
        const std::string source = at == std::string::npos ? "" : word.substr(0, at);
        const std::string target = at == std::string::npos ? "" : word.substr(at + 1);
        if (!isValidDslId(source) || !isValidDslId(target) || source == target) {
            return makeError("retime: --directions: '" + word + "' is not a direction like triton2cuda");
        }
        directions.push_back({source, target});
    }
    if (directions.empty()) {
        return makeError("retime: --directions names no direction (give e.g. triton2cuda,cuda2triton)");
    }
    return directions;
}

std::string statusText(RetimeStatus status, const std::string& reason) {
    std::string text = toString(status);
    if (reason != text) {
        text += " (" + reason + ")";
    }
    return text;
}

std::string timeLimitNote(bool limited, int left) {
    return limited ? "; time limit reached: " + std::to_string(left) + " left, run the same command again to continue"
                   : std::string();
}

/// The planned entries a run will not time (every entry in a dry run), one line each; name(entry) names the cell or
/// the pair.
template <class Plan, class Name>
void printPlanned(const Plan& plan, bool dryRun, const Name& name) {
    for (const auto& entry : plan.entries) {
        if (!entry.retime || dryRun) {
            std::printf("%s  %s%s\n", name(entry).c_str(), statusText(entry.status, entry.reason).c_str(),
                        entry.retime ? ": to re-time" : "");
        }
    }
    std::fflush(stdout);
}

/// One timed entry: its name, status and the result line (or the error), with the seconds it took when it was timed.
template <class Outcome>
void printTimed(const std::string& name, const Outcome& outcome, const std::string& resultLine) {
    std::string what = outcome.result ? resultLine : "error: " + outcome.error;
    if (outcome.result && outcome.result->ok) {
        what += "  (" + formatSeconds(outcome.result->seconds) + ")";
    }
    std::printf("%s  %s  %s\n", name.c_str(), statusText(outcome.entry->status, outcome.entry->reason).c_str(),
                what.c_str());
    std::fflush(stdout);
}

/// The exit of a run that stopped before its summary.
int failedRun(RetimeStage stage, const std::string& error, bool cancelled) {
    switch (stage) {
    case RetimeStage::OpeningStore:
        return fail(kExitStore, error);
    case RetimeStage::StartingGrader:
        return fail(kExitInfrastructure, "retime: " + error);
    case RetimeStage::Retiming:
        break;
    }
    return fail(cancelled ? kExitInterrupted : kExitStore, "retime: " + error);
}

/// A folder under the system's temporary folder, removed with everything in it when this goes out of scope.
class TemporaryFolder {
public:
    TemporaryFolder() = default;
    TemporaryFolder(const TemporaryFolder&) = delete;
    TemporaryFolder& operator=(const TemporaryFolder&) = delete;
    ~TemporaryFolder() {
        if (!path_.empty()) {
            std::error_code ec;
            fs::remove_all(path_, ec);
        }
    }
    Result<fs::path> create(const std::string& prefix) {
        std::error_code ec;
        fs::path path = fs::temp_directory_path(ec) / (prefix + std::to_string(::getpid()));
        fs::create_directories(path, ec);
        if (ec) {
            return makeError("cannot create " + path.string() + ": " + ec.message());
        }
        path_ = path;
        return path;
    }

private:
    fs::path path_;
};

/// The suite roots of the problem files the store at PATH holds (core/protocol/stored_problems.h), written under
/// FOLDER; none when the store holds none (the shipped problems are then the default, as for cells).
Result<std::vector<fs::path>> storeProblemRoots(const fs::path& storePath, TemporaryFolder& folder) {
    std::error_code ec;
    if (!fs::exists(storePath, ec)) {
        return std::vector<fs::path>{};
    }
    auto store = Store::open(storePath, OpenMode::ReadExisting);
    if (!store) {
        return store.error();
    }
    auto root = folder.create("mkb-retime-problems-");
    if (!root) {
        return root.error();
    }
    auto stored = writeStoredProblems(**store, *root);
    if (!stored) {
        return stored.error();
    }
    return stored->roots;
}

/// mkb retime --transitions: the before/after pairs of the job's trials.
int retimeTransitions(const fs::path& storePath, const GraderLaunch& launch, const RetimeJob& job) {
    std::atomic<bool>& cancel = interruptRequested();
    TransitionRetimeCallbacks callbacks;
    callbacks.graderStarted = [] { installInterruptHandler(); };
    callbacks.planned = [&](const TransitionPlan& plan) {
        printPlanned(plan, job.dryRun, [](const TransitionPlanEntry& entry) { return entry.pair.name(); });
    };
    callbacks.timed = [&](const TransitionOutcome& outcome) {
        printTimed(outcome.entry->pair.name(), outcome,
                   outcome.result ? transitionResultLine(*outcome.result) : std::string());
    };
    const TransitionStoreRun run = retimeStoreTransitions(storePath, launch, job, callbacks, &cancel);
    if (!run.summary) {
        return failedRun(run.failedAt, run.error, cancel.load());
    }
    const TransitionRetimeSummary& summary = *run.summary;
    const TransitionPlan& plan = summary.plan;
    std::printf("\n%zu pairs: %d missing, %d stale, %d current, %d not re-timed; ", plan.entries.size(),
                plan.count(RetimeStatus::Missing), plan.count(RetimeStatus::Stale), plan.count(RetimeStatus::Current),
                plan.count(RetimeStatus::NotRetimed));
    if (job.dryRun) {
        std::printf("dry run: %d would be re-timed, nothing was timed or written\n", plan.toRetime());
        return kExitOk;
    }
    std::printf("re-timed %d, kernel failed %d, errors %d in %s%s%s\n", summary.retimed, summary.kernelFailed,
                summary.errors, formatSeconds(summary.seconds).c_str(),
                timeLimitNote(summary.timeLimited, summary.left).c_str(),
                summary.cancelled ? "; interrupted: run the same command again to continue" : "");
    std::fflush(stdout);
    if (summary.cancelled) {
        return kExitInterrupted;
    }
    if (summary.errors > 0) {
        return fail(kExitInfrastructure, "retime: " + std::to_string(summary.errors) +
                                             " pairs could not be re-timed (see above); run the same command again");
    }
    return summary.kernelFailed > 0 ? kExitFailed : kExitOk;
}

/// The re-timing job the options describe, every check that needs no file done: device, scope (model, --dsls or
/// --directions, replicates, transition kinds), the stop, the grading bound, the flags. The error is a bad command
/// line (exit 2).
Result<RetimeJob> retimeJobFrom(const ParsedOptions& args) {
    RetimeJob job;
    job.device = args.text("device");
    if (Status valid = validateDevice(job.device); !valid) {
        return makeError(valid.error().message);
    }
    if (auto model = args.value("model")) {
        job.scope.model = *model;
    }
    if (args.value("dsls") && args.value("directions")) {
        return makeError("retime: give --dsls or --directions, not both");
    }
    const bool transitions = args.flag("transitions");
    if (transitions && (args.value("dsls") || args.value("directions"))) {
        return makeError("retime: --transitions times a trial's own submissions; --dsls and --directions "
                         "select cells and do not apply");
    }
    if (!transitions && args.value("kinds")) {
        return makeError("retime: --kinds selects before/after pairs; give it with --transitions");
    }
    if (auto kinds = args.value("kinds")) {
        for (const std::string& item : splitString(*kinds, ',')) {
            if (std::string word(trimmed(item)); !word.empty()) {
                job.transitionKinds.push_back(word);
            }
        }
        if (job.transitionKinds.empty()) {
            return makeError("retime: --kinds names no kind (give e.g. speedup_increase,regression_*)");
        }
    }
    if (auto dsls = args.value("dsls")) {
        auto pair = parseDslPair(*dsls, "retime");
        if (!pair) {
            return makeError(pair.error().message);
        }
        job.scope.directions = directionsForPair(pair->first, pair->second);
    }
    if (auto directions = args.value("directions")) {
        auto parsedDirections = parseDirections(*directions);
        if (!parsedDirections) {
            return makeError(parsedDirections.error().message);
        }
        job.scope.directions = *parsedDirections;
    }
    if (args.given("replicates")) {
        for (int k = 1; k <= args.integer("replicates"); ++k) {
            job.scope.replicates.push_back(k);
        }
    }
    if (args.given("time-limit")) {
        job.timeLimitS = args.number("time-limit");
    }
    auto stop = retimeStopFrom(args);
    if (!stop) {
        return makeError("retime: " + stop.error().message);
    }
    job.retime = *stop;
    job.grade.timeoutS = args.number("grade-timeout");
    job.redoCurrent = args.flag("redo-current");
    job.dryRun = args.flag("dry-run");

    std::vector<fs::path> dslDirs;
    for (const std::string& dir : args.all("dsl-dir")) {
        dslDirs.emplace_back(dir);
    }
    job.dslDescriptor = cachedDescriptorLookup(std::move(dslDirs));
    return job;
}

/// mkb retime of cells: the plan, each cell's re-timing as it ends, and the summary.
int retimeCells(const fs::path& storePath, const GraderLaunch& launch, const RetimeJob& job) {
    std::atomic<bool>& cancel = interruptRequested();
    RetimeCallbacks callbacks;
    callbacks.graderStarted = [] { installInterruptHandler(); };
    callbacks.planned = [&](const RetimePlan& plan) {
        printPlanned(plan, job.dryRun, [](const RetimePlanEntry& entry) { return entry.cell.name(); });
    };
    callbacks.timed = [&](const RetimeOutcome& outcome) {
        printTimed(outcome.entry->cell.name(), outcome,
                   outcome.result ? retimeResultLine(*outcome.result) : std::string());
    };
    const RetimeStoreRun run = retimeStore(storePath, launch, job, callbacks, &cancel);
    if (!run.summary) {
        return failedRun(run.failedAt, run.error, cancel.load());
    }
    const RetimeSummary* summary = &*run.summary;
    const RetimePlan& plan = summary->plan;
    std::printf("\n%zu cells: %d missing, %d stale, %d current, %d not re-timed; ", plan.entries.size(),
                plan.count(RetimeStatus::Missing), plan.count(RetimeStatus::Stale), plan.count(RetimeStatus::Current),
                plan.count(RetimeStatus::NotRetimed));
    if (job.dryRun) {
        std::printf("dry run: %d would be re-timed, nothing was timed or written\n", plan.toRetime());
        return kExitOk;
    }
    std::printf("re-timed %d, kernel failed %d, errors %d in %s%s%s\n", summary->retimed, summary->kernelFailed,
                summary->errors, formatSeconds(summary->seconds).c_str(),
                timeLimitNote(summary->timeLimited,
                              plan.toRetime() - summary->retimed - summary->kernelFailed - summary->errors)
                    .c_str(),
                summary->cancelled ? "; interrupted: run the same command again to continue" : "");
    std::fflush(stdout);
    if (summary->cancelled) {
        return kExitInterrupted;
    }
    if (summary->errors > 0) {
        return fail(kExitInfrastructure, "retime: " + std::to_string(summary->errors) +
                                             " cells could not be re-timed (see above); run the same command again");
    }
    return summary->kernelFailed > 0 ? kExitFailed : kExitOk;
}

int runRetime(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(retimeOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb retime --help)");
    }
    const ParsedOptions& args = *parsed;
    if (args.help) {
        std::cout << retimeHelp();
        return kExitOk;
    }
    if (!args.positionals.empty()) {
        return fail(kExitUsage, "retime: unexpected argument '" + args.positionals.front() + "' (mkb retime --help)");
    }
    auto described = retimeJobFrom(args);
    if (!described) {
        return fail(kExitUsage, described.error().message);
    }
    RetimeJob job = std::move(described).value();
    const bool transitions = args.flag("transitions");
    std::vector<fs::path> suites;
    for (const std::string& suite : args.all("suite")) {
        suites.emplace_back(suite);
    }
    const fs::path storePath = args.value("store") ? fs::path(*args.value("store")) : defaultStorePath();
    // Before/after pairs are timed against the problem each trial was filed with: without --suite, the problem files
    // the store holds (a corpus import stores them), written to a private folder for the run.
    TemporaryFolder storedProblems;
    if (transitions && suites.empty()) {
        auto written = storeProblemRoots(storePath, storedProblems);
        if (!written) {
            return fail(kExitStore, "retime: " + written.error().message);
        }
        suites = std::move(written).value();
    }
    SelectionError selectionError;
    job.scope.problems = selectProblems(suites, args.text("problems"), "retime", &selectionError);
    if (job.scope.problems.empty()) {
        return fail(selectionError.exitCode, selectionError.message);
    }
    GraderLaunch launch;
    launch.python = graderPythonFrom(args.value("python"));
    return transitions ? retimeTransitions(storePath, launch, job) : retimeCells(storePath, launch, job);
}

const bool registered = registerCommand(
    {"retime", "paired re-timing of cells in a store (convergent; --dry-run plans only)", retimeHelp(), runRetime});

} // namespace
} // namespace mkb::cli
