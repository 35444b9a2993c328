// `mkb grade`: grades one kernel.py against one problem through the Python grader and prints the report.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"

#include "core/catalog/catalog.h"
#include "core/vocabulary/boundary.h"
#include "core/wire/grade_request.h"
#include "core/grader_client/grader_process.h"
#include "core/grader_client/kernel_grading.h"
#include "core/grader_client/report_text.h"
#include "core/io/manual_trial.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kGradeHelp = R"(usage: mkb grade KERNEL --problem P --dsl D [options]

Grades one kernel file (a kernel.py defining solve(*inputs)) against one problem with the Python grader
(docs/guide/grading.md): import, correctness draws against the float64 anchor, compliance, timing against eager
PyTorch, outliers, quantization metrics and roofline. Prints the grading report, or the verdict JSON with --json.

options:
  --problem P     the problem: number ("7", "p07"), name ("attention/07_slug") or path to its file
  --dsl D         the kernel's DSL id (resources/dsls/D.json, or a --dsl-dir)
  --suite DIR     a suite root to find P in (repeatable; default: the shipped problems)
  --device DEV    cuda:N (default cuda:0) or cpu
  --python PATH   the interpreter that runs the grader (default: $MKB_PYTHON, else python3); it needs torch
  --timeout S     the evaluation bound in seconds (default 600); mkb allows the grader S + 30 s in all
  --boundary B    the implementation boundary: mkb (default; MetaKernelBench's rule, eager PyTorch may finish what
                  a DSL kernel started) or strict (all arithmetic in the DSL); the verdict records it
  --dsl-dir DIR   an extra folder of DSL descriptors, searched first (repeatable)
  --json          print the verdict JSON instead of the report (with the speedup's 95% CI, speedup_ci_low and
                  speedup_ci_high, and the GPU time, gpu_median_ms; fields: docs/grader-protocol.md)
  --store PATH    the project store: peaks for roofline come from its latest probe of the device
                  (default: $MKB_STORE or the user's store, when it exists)
  --save          record the verdict in the store as a trial of model "manual" (arm solo_D, replicate 1);
                  an earlier manual trial of the same problem and DSL is archived, never deleted

exit codes: 0 passed, 1 graded and failed, 2 bad command line, 3 missing kernel, unknown problem or DSL,
            4 store error, 5 infrastructure error (grader or GPU failed; grade again), 130 interrupted
)";

std::atomic<bool>& interrupted = interruptRequested();

int runGrade(const std::vector<std::string>& rawArgs) {
    ArgSpec spec;
    spec.flags = {"json", "save"};
    spec.options = {"problem", "dsl", "suite", "device", "python", "timeout", "dsl-dir", "store", "boundary"};
    spec.repeatable = {"suite", "dsl-dir"};
    auto parsed = parseArgs(rawArgs, spec);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb grade --help)");
    }
    const ParsedArgs& args = *parsed;
    if (args.wantsHelp()) {
        std::cout << kGradeHelp;
        return kExitOk;
    }
    if (args.positionals.size() != 1) {
        return fail(kExitUsage, "mkb grade takes exactly one KERNEL file (mkb grade --help)");
    }
    auto problemName = args.option("problem");
    auto dsl = args.option("dsl");
    if (!problemName || !dsl) {
        return fail(kExitUsage,
                    std::string("mkb grade needs --") + (problemName ? "dsl" : "problem") + " (mkb grade --help)");
    }
    const std::string device = args.optionOr("device", "cuda:0");
    if (Status valid = validateDevice(device); !valid) {
        return fail(kExitUsage, valid.error().message);
    }
    auto timeout = args.doubleOption("timeout", GradeSettings{}.timeoutS);
    if (!timeout || *timeout <= 0) {
        return fail(kExitUsage, timeout ? "--timeout takes a positive number of seconds" : timeout.error().message);
    }
    std::error_code ec;
    fs::path kernelPath = fs::absolute(args.positionals[0], ec);
    if (!fs::is_regular_file(kernelPath, ec)) {
        return fail(kExitBadInput, "kernel file " + args.positionals[0] + " does not exist or is not a file");
    }
    auto kernelSource = readFile(kernelPath);
    if (!kernelSource) {
        return fail(kExitBadInput, kernelSource.error().message);
    }

    std::vector<fs::path> roots;
    for (const auto& suite : args.all("suite")) {
        if (!fs::is_directory(suite, ec)) {
            return fail(kExitBadInput, "suite folder " + suite + " does not exist");
        }
        roots.push_back(fs::absolute(suite, ec));
    }
    if (roots.empty()) {
        roots.push_back(shippedProblemsDir());
    }
    Catalog catalog = loadCatalog(roots);
    const Problem* problem = catalog.find(*problemName);
    if (!problem) {
        std::string where;
        for (const auto& root : roots) {
            where += (where.empty() ? "" : ", ") + root.string();
        }
        return fail(kExitBadInput, "unknown problem '" + *problemName + "' in " + where +
                                       " (mkb problems list shows the problems; mkb problems validate explains "
                                       "malformed files)");
    }

    std::vector<fs::path> dslDirs;
    for (const auto& dir : args.all("dsl-dir")) {
        dslDirs.push_back(dir);
    }
    auto descriptor = loadDslDescriptor(*dsl, dslDirs);
    if (!descriptor) {
        return fail(kExitBadInput, descriptor.error().message);
    }

    GradeSettings settings;
    settings.timeoutS = *timeout;
    auto boundary = parseBoundary(args.optionOr("boundary", std::string(kBoundaryMkb)));
    if (!boundary) {
        return fail(kExitUsage, boundary.error().message + " (mkb grade --help)");
    }
    settings.boundary = *boundary;
    GradeRequest request = makeGradeRequest(*problem, kernelPath, *dsl, *descriptor, device, settings);

    const fs::path storePath = args.option("store") ? fs::path(*args.option("store")) : defaultStorePath();
    auto opened =
        openGradingStore(storePath, args.option("store").has_value() || args.has("save"), args.has("save"), request);
    if (!opened) {
        return fail(kExitStore, opened.error().message);
    }
    const std::unique_ptr<Store> store = std::move(opened).value();

    installInterruptHandler();
    bool showStages = !args.has("json") && ::isatty(STDERR_FILENO);
    StageCallback onStage = [&](const std::string& stage) {
        if (showStages) {
            std::cerr << "mkb grade: " << stage << "...\n";
        }
    };
    GraderLaunch launch;
    launch.python = graderPythonFrom(args.option("python"));
    const KernelGrading graded = gradeKernelFile(request, launch, onStage, &interrupted);
    const Verdict& verdict = graded.verdict;
    if (interrupted.load()) {
        return fail(kExitInterrupted, "grading interrupted; nothing was saved");
    }

    if (args.has("json")) {
        std::cout << verdict.json << '\n';
    } else {
        ReportHeading heading{problem->name(), *dsl, kernelPath.string(), device};
        std::cout << verdictReport(verdict, heading);
        if (request.peaksJson.empty() && device != "cpu" && verdict.roofline) {
            std::cout << "(no probe of " << device << " in the store: run `mkb device probe` for IOU and MFU)\n";
        }
    }

    if (args.has("save")) {
        if (Status saved = saveManualTrial(*store, *problem, *dsl, *kernelSource, verdict, graded.graderFingerprint);
            !saved) {
            return fail(kExitStore,
                        "the verdict could not be saved in " + storePath.string() + ": " + saved.error().message);
        }
    }
    if (verdict.infrastructureError) {
        return kExitInfrastructure;
    }
    return verdict.passed ? kExitOk : kExitFailed;
}

const bool registered =
    registerCommand({"grade", "grade one kernel.py against a problem and print the report", kGradeHelp, runGrade});

} // namespace
} // namespace mkb::cli
