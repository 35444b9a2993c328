// `mkb suite check`: validates every problem of a suite and grades its shipped solutions through one grader session;
// `mkb suite import`: converts another benchmark's tasks into problem files, through the Python importer.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"

#include "core/cluster/command_runner.h"
#include "core/grader_client/grader_pool.h"
#include "core/grader_client/grader_process.h"
#include "core/suite/suite_report.h"
#include "core/suite/suite_report_read.h"
#include "core/suite/suite_session.h"
#include "core/util/output_file.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"
#include "core/wire/grade_request.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kSuiteIntro = R"(usage: mkb suite check [options]
       mkb suite table REPORT [--suite DIR] [--output FILE]
       mkb suite import kernelbenchx CHECKOUT --out DIR [--force] [--json FILE] [--python PATH]

Validates a problem suite and its shipped solutions on one device, through one grader process:
  1. each problem (the grader's validate request; the problem's code runs only in the grader's sandboxed child):
     - determinism: make_inputs and reference, seeded twice with the same seed, must agree bitwise;
     - sensitivity: no floating output may be near zero (an all-zeros answer must fail the grading contract, and
       max|output| must exceed 1e-6 x the largest |floating input|; integer outputs must not be all zero), and
       redrawing any one tensor input alone must change the output by more than the grading allowance (integer
       and boolean outputs: any change); an input listed in MKB_META["insensitive"] may leave it unchanged;
     - eager time: the reference's median over the grading timing procedure must reach --eager-target-ms;
  2. every shipped solution <family>/_solutions/NN_slug.<dsl>.py of the chosen DSLs is graded once, fully;
  3. every solution that passed is graded N-1 more times for correctness only (no warm-up, timing or re-check
     draws) to show the tolerance is not flaky ("20/20" per solution).
With --validate-only, step 1 alone: no solution is graded, a problem without solutions is not an issue, and --table
writes the validation table instead (per problem its category, precision, eager ms, whether it is deterministic,
sensitive and above the eager floor, and the reason where not; totals per category; docs/kernelbenchx.md).
Prints a line per problem as it goes, each issue on its own line, and a summary. Peaks for IOU/MFU come from the
store's latest probe of the device; where there is none, the device is probed first (and the probe saved).

)";

const char* const kSuiteRest =
    R"(mkb suite table REPORT renders the markdown suite table (the validation table, for a --validate-only report) of an
earlier --json report again, without a grader or a GPU (after the table's format changed, say): to stdout, or to
--output FILE. The report's problems are matched to the suite (--suite DIR, default the shipped problems); one whose
problem or solution file changed since is refused (exit 3), as is a report that cannot be read. Paths of the machine
that made the report are left out as in --table.

mkb suite import kernelbenchx CHECKOUT --out DIR converts the tasks of a KernelBench-X checkout
(data/kernelbenchx/<Category>/<task>.py) into problem files DIR/<family>/NNN_slug.py (numbers from 100, in order of
category and name) that mkb problems validate and the grader read. The task files are parsed, never run (the
importer is a Python child, --python as above). Each task prints one line: imported (written, rewritten, unchanged,
or differs: an existing different file is kept unless --force), skipped with its reason, or error with the file and
line; then a summary. --json FILE also writes every task's outcome as JSON. docs/guide/kernelbenchx.md says how a
task's harness becomes make_inputs() and MKB_META. Exit codes: 0 every task imported or skipped with a reason,
1 some file differs and was kept, 2 bad command line, 3 the checkout is missing or a task file is malformed (the
others are still written), 5 the importer could not run.

exit codes: 0 every problem clean and every solution passed, 1 some issue (listed), 2 bad command line,
            3 unknown suite, DSL or empty selection, or --json/--table cannot be written, 4 store error,
            5 an infrastructure error (grader or GPU failed) was among the issues, 130 interrupted
)";

std::string joinedDsls(const std::vector<std::string>& dsls) {
    std::string text;
    for (const std::string& dsl : dsls) {
        text += (text.empty() ? "" : ",") + dsl;
    }
    return text;
}

const OptionTable& suiteOptions() {
    static const OptionTable table = {
        pathOption("suite", "DIR", "the suite root").defaultSaid("the shipped problems"),
        flagOption("validate-only",
                   "validate the problems alone (step 1); not with --dsls, --gradings, --flakiness or --boundary"),
        textOption("problems", "GLOB", "which problems (name, code, stem or family glob)").withDefault("*"),
        textOption("dsls", "A,B", "the DSLs whose solutions are graded")
            .withDefault(joinedDsls(SuiteCheckOptions{}.dsls)),
        integerOption("gradings", "N",
                      "gradings per solution for the flakiness check, the full one included (1 = none extra, 0 = skip "
                      "the check)")
            .withDefault(SuiteCheckOptions{}.gradings)
            .within(0, 1000),
        choiceOption("flakiness", "MODE",
                     "separate: each repeat is its own evaluation in a fresh child; pooled: the N-1 repeats run as one "
                     "correctness-only evaluation of (N-1) x 5 draws, each with a fresh seed, and grading k counts as "
                     "correct when its 5 draws held (same draws, one import and compile; the one evaluation is bounded "
                     "by N-1 x --timeout); single: one evaluation per solution, N x 5 correctness draws and then the "
                     "timing (one child, import and compile per solution; bounded by N x --timeout; a solution that "
                     "fails any draw has no speedup)",
                     {"separate", "pooled", "single"})
            .withDefault("separate"),
        textOption("device", "DEV", "cuda:N or cpu").withDefault(SuiteCheckOptions{}.device),
        textOption("devices", "LIST",
                   "check on several devices at once instead: \"all\" (every visible GPU) or a comma list such as "
                   "cuda:0,cuda:2 (cpu:0,cpu:1 are test devices that grade on the CPU): one grader server and one "
                   "thread per device take the next problem from one queue, each problem checked whole on one device "
                   "(named in the JSON report beside each verdict); a lost device leaves the rotation with one note "
                   "line; not with --device"),
        pathOption("python", "PATH", "the interpreter that runs the grader (and the importer)")
            .defaultSaid("$MKB_PYTHON, else python3"),
        numberOption("timeout", "S", "bound of each validation and grading in seconds")
            .withDefault(GradeSettings{}.timeoutS)
            .above(0),
        numberOption("eager-target-ms", "MS", "the eager median a problem must reach, in ms")
            .withDefault(SuiteCheckOptions{}.eagerTargetMs)
            .within(0, std::numeric_limits<double>::max()),
        textOption("boundary", "B",
                   "the implementation boundary the solutions are graded under: mkb (MetaKernelBench's rule) or strict "
                   "(all arithmetic in the DSL); see docs/guide/boundaries.md")
            .withDefault(GradeSettings{}.boundary),
        pathOption("dsl-dir", "DIR", "an extra folder of DSL descriptors, searched first").isRepeatable(),
        pathOption("json", "FILE",
                   "write everything (validation reports and verdicts included) as JSON to FILE (suite import: every "
                   "task's outcome)"),
        pathOption("table", "FILE",
                   "write the markdown suite table (docs/suite.md) to FILE (--json and --table are rewritten after "
                   "every problem, atomically and through a symbolic link; an interrupted run leaves a partial report "
                   "that says which problems are left; a directory, FIFO, device or the store itself is refused before "
                   "any problem is checked, exit 3)"),
        pathOption("resume", "FILE",
                   "reuse the results of an earlier --json report for every problem whose problem file, solution "
                   "files, grader, boundary, DSLs and flakiness settings are unchanged, that was checked on this run's "
                   "device (with --devices, on one of them) and that had no infrastructure error; check the rest "
                   "(typically --resume R --json R). Solution files are looked up in this checkout, and an interrupted "
                   "check keeps what the reports hold. Several reports of a suite split across GPUs (--problems) "
                   "merge into one (the first that holds a problem is used)")
            .isRepeatable(),
        pathOption("store", "PATH", "the project store for device peaks").defaultSaid("$MKB_STORE or the user's store"),
        pathOption("output", "FILE", "suite table: write the table to FILE instead of standard output"),
        pathOption("out", "DIR", "suite import: the suite folder the problem files go to (required there)"),
        flagOption("force", "suite import: rewrite an existing problem file that differs"),
    };
    return table;
}

std::string suiteHelp() {
    return verbHelp(kSuiteIntro, suiteOptions(), kSuiteRest);
}

std::atomic<bool>& interrupted = interruptRequested();

/// The suite check the options describe, every check that needs no file done (devices, DSLs, flakiness, boundary,
/// numbers); the error is a bad command line (exit 2).
Result<SuiteCheckJob> suiteCheckJobFrom(const ParsedOptions& args, const std::vector<std::string>& rawArgs) {
    SuiteCheckJob job;
    SuiteCheckOptions& options = job.options;
    options.validateOnly = args.flag("validate-only");
    if (options.validateOnly) {
        for (const char* solutionOption : {"dsls", "gradings", "flakiness", "boundary"}) {
            if (args.value(solutionOption)) {
                return makeError(std::string("suite check: --validate-only grades no solution, so --") +
                                 solutionOption + " has nothing to do; leave one of them out");
            }
        }
    }
    options.device = args.text("device");
    if (Status valid = validateDevice(options.device); !valid) {
        return makeError(valid.error().message);
    }
    if (auto listed = args.value("devices")) { // one grader server per device
        if (args.value("device")) {
            return makeError("suite check: --devices and --device cannot be given together; use --devices for "
                             "several devices or --device for one (mkb suite --help)");
        }
        auto parsedDevices = parseDeviceList(*listed, visibleCudaDeviceCount());
        if (!parsedDevices) {
            return makeError("suite check: " + parsedDevices.error().message);
        }
        job.devices = std::move(parsedDevices).value();
        options.device.clear(); // the report names them all, "cuda:0,cuda:1"
        for (const std::string& each : job.devices) {
            options.device += (options.device.empty() ? "" : ",") + each;
        }
    }
    const int gradings = args.integer("gradings");
    const std::string flakinessMode = args.text("flakiness");
    options.dsls.clear();
    for (const std::string& part :
         options.validateOnly ? std::vector<std::string>{} : splitString(args.text("dsls"), ',')) {
        std::string id(trimmed(part));
        if (id.empty()) {
            return makeError("--dsls takes DSL ids separated by commas, e.g. triton,cuda");
        }
        if (std::find(options.dsls.begin(), options.dsls.end(), id) == options.dsls.end()) {
            options.dsls.push_back(id);
        }
    }
    auto boundary = parseBoundary(args.text("boundary"), "suite check: --boundary");
    if (!boundary) {
        return makeError(boundary.error().message + " (mkb suite check --help)");
    }
    options.gradings = options.validateOnly ? 0 : gradings;
    options.flakiness = flakinessModeFromName(flakinessMode);
    options.eagerTargetMs = args.number("eager-target-ms");
    options.settings.timeoutS = args.number("timeout");
    options.settings.boundary = *boundary;

    job.suiteRoot = args.value("suite") ? fs::path(*args.value("suite")) : shippedProblemsDir();
    job.problemsGlob = args.text("problems");
    for (const auto& dir : args.all("dsl-dir")) {
        job.dslDirs.push_back(dir);
    }
    job.storeNamed = args.value("store").has_value();
    job.storePath = job.storeNamed ? fs::path(*args.value("store")) : defaultStorePath();
    if (auto path = args.value("json")) {
        job.jsonPath = *path;
    }
    if (auto path = args.value("table")) {
        job.tablePath = *path;
    }
    for (const std::string& resumePath : args.all("resume")) {
        job.resumeFrom.emplace_back(resumePath);
    }
    job.launch.python = graderPythonFrom(args.value("python"));
    job.command = recordedCommandLine("suite", rawArgs);
    job.commandWords = {"mkb", "suite"};
    job.commandWords.insert(job.commandWords.end(), rawArgs.begin(), rawArgs.end());

    return job;
}

int runCheck(const ParsedOptions& args, const std::vector<std::string>& rawArgs) {
    auto described = suiteCheckJobFrom(args, rawArgs);
    if (!described) {
        return fail(kExitUsage, described.error().message);
    }
    const SuiteCheckJob job = std::move(described).value();
    const SuiteCheckOptions& options = job.options;
    SuiteCheckCallbacks callbacks;
    callbacks.graderStarting = [] { installInterruptHandler(); };
    callbacks.say = [](const std::string& line) { std::cout << line << "\n" << std::flush; };
    callbacks.deviceLost = [](const std::string&, const std::string& message) {
        std::cout << "note: " << message << "\n" << std::flush;
    };
    callbacks.started = [](const SuiteCheckReport& report, const SuiteCheckOptions& used, std::size_t selected) {
        for (const std::string& issue : report.catalogIssues) {
            std::cout << "ISSUE malformed problem file " << issue << "\n";
        }
        for (const auto& [dsl, why] : used.descriptorErrors) {
            std::cout << "ISSUE [" << dsl << "]: " << why << "\n";
        }
        if (used.validateOnly) {
            std::cout << "validating " << selected << " problems on " << used.device
                      << " (validation only: determinism, sensitivity to each input, eager median against "
                      << formatFigure("%g", used.eagerTargetMs) << " ms)\n"
                      << std::flush;
            return;
        }
        std::cout << "checking " << selected << " problems on " << used.device << " under boundary "
                  << used.settings.boundary << " (DSLs";
        for (const std::string& dsl : used.dsls) {
            std::cout << " " << dsl;
        }
        std::cout << "; " << used.gradings << " gradings each"
                  << (used.flakiness == FlakinessMode::Pooled   ? ", repeats pooled"
                      : used.flakiness == FlakinessMode::Single ? ", one evaluation each"
                                                                : "")
                  << ")\n"
                  << std::flush;
    };
    const bool showStages = ::isatty(STDERR_FILENO);
    callbacks.onStage = [showStages](const Problem& problem, const std::string& what) {
        if (showStages) {
            std::cerr << "mkb suite: " << problem.name() << ": " << what << "...\n";
        }
    };
    callbacks.onProblem = [gradings = options.gradings](const ProblemCheck& check) {
        std::cout << problemLine(check, gradings) << "\n";
        for (const std::string& issue : check.problems) {
            std::cout << "  ! " << issue << "\n";
        }
        std::cout << std::flush;
    };

    const SuiteCheckRun run = runSuiteCheck(job, callbacks, interrupted);
    if (run.failedAt) {
        switch (*run.failedAt) {
        case SuiteCheckStage::OpeningStore:
            return fail(kExitStore, run.error);
        case SuiteCheckStage::StartingGrader:
            return fail(kExitInfrastructure, run.error);
        case SuiteCheckStage::Selecting:
        case SuiteCheckStage::Descriptors:
        case SuiteCheckStage::Outputs:
        case SuiteCheckStage::Resuming:
            break;
        }
        return fail(kExitBadInput, run.error);
    }
    if (run.outcome.writeError) {
        return fail(kExitBadInput, run.outcome.writeError->message);
    }
    if (!run.resumedFrom.empty()) {
        std::cout << "resumed from " << run.resumedFrom << ": " << run.outcome.reused << " problems reused";
        for (const auto& [why, count] : run.outcome.recheckReasons) {
            std::cout << "; " << count << " checked again (" << why << ")";
        }
        std::cout << "\n";
    }
    if (interrupted.load()) {
        std::string where = args.value("json") ? "; the partial report is in " + *args.value("json") +
                                                     " (continue with --resume " + *args.value("json") + ")"
                                               : "; nothing was written (no --json)";
        return fail(kExitInterrupted, "suite check interrupted after " + std::to_string(run.report.problems.size()) +
                                          " of " + std::to_string(run.selected) + " problems" +
                                          (run.finalWrite ? where : "; " + run.finalWrite.error().message));
    }
    std::cout << suiteSummary(run.report) << "\n";
    if (!run.finalWrite) {
        return fail(kExitBadInput, run.finalWrite.error().message);
    }
    if (run.report.clean()) {
        return kExitOk;
    }
    return run.report.anyInfrastructureError() ? kExitInfrastructure : kExitFailed;
}

int runTable(const ParsedOptions& args) {
    if (args.positionals.size() != 2) {
        return fail(kExitUsage, "mkb suite table takes one report: mkb suite table REPORT [--output FILE] (mkb suite "
                                "--help)");
    }
    const fs::path suiteRoot = args.value("suite") ? fs::path(*args.value("suite")) : shippedProblemsDir();
    auto report = readSuiteReport(args.positionals[1], suiteRoot);
    if (!report) {
        return fail(kExitBadInput, "suite table: " + report.error().message);
    }
    const std::string table = report->validateOnly ? validationTableMarkdown(*report) : suiteTableMarkdown(*report);
    if (auto output = args.value("output")) {
        if (Status written = writeOutputFile(*output, table, OutputRules{"--output", {fs::path(args.positionals[1])}});
            !written) {
            return fail(kExitBadInput, "suite table: " + written.error().message);
        }
        return kExitOk;
    }
    std::cout << table;
    return kExitOk;
}

int runImport(const ParsedOptions& args) {
    if (args.positionals.size() != 3) {
        return fail(kExitUsage, "mkb suite import takes a benchmark and its checkout: mkb suite import kernelbenchx "
                                "CHECKOUT --out DIR (mkb suite --help)");
    }
    if (args.positionals[1] != "kernelbenchx") {
        return fail(kExitUsage, "suite import: unknown benchmark '" + args.positionals[1] +
                                    "'; the importer reads kernelbenchx (mkb suite --help)");
    }
    const std::optional<std::string> out = args.value("out");
    if (!out || out->empty()) {
        return fail(kExitUsage, "suite import: --out DIR is required: the suite folder the problem files go to");
    }
    std::vector<std::string> argv = {
        graderPythonFrom(args.value("python")), "-m", "mkbimport", "kernelbenchx", args.positionals[2], "--out", *out};
    if (args.flag("force")) {
        argv.push_back("--force");
    }
    if (auto json = args.value("json")) {
        argv.insert(argv.end(), {"--json", *json});
    }
    std::string pythonPath = graderPackageDir().string(); // mkbimport lives beside mkbgrader
    if (const char* inherited = std::getenv("PYTHONPATH"); inherited && *inherited) {
        pythonPath += ":" + std::string(inherited);
    }
    constexpr double kImportBoundS = 300;
    auto ran = cluster::runCommand(argv, kImportBoundS, {{"PYTHONPATH", pythonPath}, {"PYTHONDONTWRITEBYTECODE", "1"}});
    if (!ran) {
        return fail(kExitInfrastructure, "suite import: cannot start the importer's Python '" + argv[0] +
                                             "' (give --python PATH or set MKB_PYTHON)");
    }
    std::cout << ran->out << std::flush;
    std::cerr << ran->err << std::flush;
    if (ran->timedOut) {
        return fail(kExitInfrastructure, "suite import: the importer did not finish within 300 s and was stopped");
    }
    if (ran->exitCode == kExitOk || ran->exitCode == kExitFailed || ran->exitCode == kExitUsage ||
        ran->exitCode == kExitBadInput || ran->exitCode == kExitInfrastructure) {
        return ran->exitCode;
    }
    return fail(kExitInfrastructure, "suite import: the importer ended with exit status " +
                                         std::to_string(ran->exitCode) + " (is '" + argv[0] +
                                         "' Python 3.9 or newer? give --python PATH)");
}

int runSuite(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(suiteOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb suite --help)");
    }
    if (parsed->help) {
        std::cout << suiteHelp();
        return kExitOk;
    }
    if (!parsed->positionals.empty() && parsed->positionals[0] == "table") {
        return runTable(*parsed);
    }
    if (!parsed->positionals.empty() && parsed->positionals[0] == "import") {
        return runImport(*parsed);
    }
    if (parsed->positionals.size() != 1 || parsed->positionals[0] != "check") {
        return fail(kExitUsage, "mkb suite takes one action: check, table or import (mkb suite --help)");
    }
    return runCheck(*parsed, rawArgs);
}

const bool registered = registerCommand(
    {"suite",
     "validate every problem and grade its shipped solutions (mkb suite check), render a report's table, or import "
     "KernelBench-X's tasks as problem files",
     suiteHelp(), runSuite});

} // namespace
} // namespace mkb::cli
