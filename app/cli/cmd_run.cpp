// `mkb run`: executes the transfer protocol for a model over problems × a DSL pair × replicates, convergently.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/run_on_slurm.h"
#include "app/cli/run_selection.h"

#include "core/protocol/planner.h"
#include "core/protocol/run_hand_over.h"
#include "core/protocol/run_options.h"
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

const char* const kRunIntro = R"(usage: mkb run --model NAME --driver KIND --problems GLOB --dsls A,B[,C...] [options]

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
)";

const char* const kRunExitCodes =
    R"(exit codes: 0 every planned trial finished or was skipped, 2 bad command line, unknown DSL or driver setting,
            3 missing suite, problem or config file, 4 store error, 5 the grader could not start or some trials
            ended with an infrastructure error (run again to redo them), 130 interrupted (run again to resume)
)";

std::atomic<bool>& stopRequested = interruptRequested();

/// The whole --help: the introduction, every option as its declaration says it, the exit codes.
std::string runHelp() {
    return verbHelp(kRunIntro, runOptionDeclarations(), kRunExitCodes);
}

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

/// What a run needs that comes from files: the driver's settings, the DSLs of --dsls, the problems, the store and
/// where workspaces go. Each step fails with its own exit code and one line.
struct RunInputs {
    nlohmann::json driverSettings = nlohmann::json::object();
    std::vector<std::string> dslIds;
    std::map<std::string, RunDsl> dsls; // every DSL of --dsls, loaded before anything runs
    std::unique_ptr<Store> store;
};

int readDriverSettings(const RunOptions& options, RunSettings& settings, RunInputs& inputs) {
    if (!options.driverConfig.empty()) {
        auto text = readFile(options.driverConfig);
        if (!text) {
            return fail(kExitBadInput, "run: --driver-config: " + text.error().message);
        }
        auto parsed = parseJsonInput(*text);
        if (!parsed || !parsed->is_object()) {
            return fail(kExitBadInput, "run: --driver-config " + options.driverConfig +
                                           (parsed ? " is not a JSON object" : ": " + parsed.error().message));
        }
        inputs.driverSettings = std::move(parsed).value();
    }
    // The driver, checked once here so a bad setting is one clear line before anything starts.
    if (auto probe = makeDriver(settings.driverKind, inputs.driverSettings); !probe) {
        return fail(kExitUsage, "run: " + probe.error().message);
    }
    settings.driverSettingsJson = inputs.driverSettings.dump();
    return kExitOk;
}

int loadDsls(const RunOptions& options, RunInputs& inputs) {
    const std::vector<fs::path> dslDirs(options.dslDirs.begin(), options.dslDirs.end());
    for (const std::string& id : inputs.dslIds) {
        auto dsl = loadRunDsl(id, dslDirs);
        if (!dsl) {
            return fail(kExitUsage, "run: DSL '" + id + "': " + dsl.error().message);
        }
        inputs.dsls.emplace(id, std::move(dsl).value());
    }
    return kExitOk;
}

int selectRunProblems(const RunOptions& options, RunSettings& settings) {
    const std::vector<fs::path> suites(options.suites.begin(), options.suites.end());
    SelectionError selectionError;
    settings.problems = selectProblems(suites, options.problems, "run", &selectionError);
    return settings.problems.empty() ? fail(selectionError.exitCode, selectionError.message) : kExitOk;
}

int openStore(const RunOptions& options, RunSettings& settings, RunInputs& inputs) {
    const fs::path storePath = options.store.empty() ? defaultStorePath() : fs::path(options.store);
    auto opened = openRunStore(storePath, settings);
    if (!opened) {
        return fail(kExitStore, opened.error().message);
    }
    inputs.store = std::move(opened).value();
    std::error_code ec;
    settings.workspaceRoot =
        options.workspaces.empty() ? defaultWorkspaceRoot(storePath) : fs::absolute(fs::path(options.workspaces), ec);
    return kExitOk;
}

/// The exit code a run that ended so returns (command.h).
int exitCodeOf(RunEnd end) {
    switch (end) {
    case RunEnd::Complete:
    case RunEnd::Planned:
        return kExitOk;
    case RunEnd::Interrupted:
        return kExitInterrupted;
    case RunEnd::Incomplete:
        return kExitInfrastructure;
    case RunEnd::Failed:
        return stopRequested.load() ? kExitInterrupted : kExitInfrastructure;
    }
    return kExitInfrastructure;
}

/// Runs every DSL pair of the run, one after the other, and returns the exit code.
int executeRun(const RunOptions& options, RunSettings& settings, RunInputs& inputs);

int runRun(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(runOptionDeclarations(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb run --help)");
    }
    if (parsed->help) {
        std::cout << runHelp();
        return kExitOk;
    }
    if (!parsed->positionals.empty()) {
        return fail(kExitUsage, "run: unexpected argument '" + parsed->positionals.front() + "' (mkb run --help)");
    }
    if (Status required = requireOptions(runOptionDeclarations(), *parsed); !required) {
        return fail(kExitUsage, "run: " + required.error().message + " (mkb run --help)");
    }
    const RunOptions options = optionsFrom(runOptionTable(), *parsed);
    for (const std::string& name : slurmOnlyRunOptions()) {
        if (options.executor != "slurm" && parsed->given(name)) {
            return fail(kExitUsage, "run: --" + name + " applies to --executor slurm only");
        }
    }

    RunInputs inputs;
    auto dslList = parseDslList(options.dsls, "run");
    if (!dslList) {
        return fail(kExitUsage, dslList.error().message);
    }
    inputs.dslIds = std::move(dslList).value();
    auto handedOver = runSettingsFrom(options);
    if (!handedOver) {
        return fail(kExitUsage, handedOver.error().message);
    }
    RunSettings settings = std::move(handedOver).value();
    settings.commandLine = recordedCommandLine("run", rawArgs);
    int code = readDriverSettings(options, settings, inputs);
    code = code == kExitOk ? loadDsls(options, inputs) : code;
    code = code == kExitOk ? selectRunProblems(options, settings) : code;
    code = code == kExitOk ? openStore(options, settings, inputs) : code;
    if (code != kExitOk) {
        return code;
    }
    return executeRun(options, settings, inputs);
}

int executeRun(const RunOptions& options, RunSettings& settings, RunInputs& inputs) {
    const DriverFactory driverFactory = [&]() { return makeDriver(settings.driverKind, inputs.driverSettings); };
    const std::string& progressMode = options.progress;
    const std::vector<std::string>& dslIds = inputs.dslIds;
    const std::unique_ptr<Store>& store = inputs.store;
    const std::map<std::string, RunDsl>& loadedDsls = inputs.dsls;
    installInterruptHandler();
    TextProgress textProgress(stderr);
    JsonProgress jsonProgress(stdout);
    ProgressSink& progress = progressMode == "json" ? static_cast<ProgressSink&>(jsonProgress) : textProgress;
    // More than two DSLs run pair after pair (planner.h, dslPairsOf): a later pair reuses the solos an earlier one
    // recorded, so each DSL's solo runs once per problem and replicate, and the run ends with one run_finished line.
    const std::vector<std::pair<std::string, std::string>> pairs = dslPairsOf(dslIds);
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
        summary = options.executor == "slurm" && store
                      ? runOnSlurm(options, settings, *store, progress, stopRequested)
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
    const int exitCode = exitCodeOf(finish.end);
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
    {"run", "run the transfer protocol for a model (convergent; --dry-run plans only)", runHelp(), runRun});

} // namespace
} // namespace mkb::cli
