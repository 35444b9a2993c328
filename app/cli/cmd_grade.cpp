// `mkb grade`: grades one kernel.py against one problem through the Python grader and prints the report.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"

#include "core/catalog/catalog.h"
#include "core/grader_client/grader_process.h"
#include "core/grader_client/kernel_grading.h"
#include "core/grader_client/report_text.h"
#include "core/io/manual_trial.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"
#include "core/wire/grade_request.h"

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kGradeIntro = R"(usage: mkb grade KERNEL --problem P --dsl D [options]

Grades one kernel file (a kernel.py defining solve(*inputs)) against one problem with the Python grader
(docs/guide/grading.md): import, correctness draws against the float64 anchor, compliance, timing against eager
PyTorch, outliers, quantization metrics and roofline. Prints the grading report, or the verdict JSON with --json.
)";

/// mkb grade's options, declared once: the parser and the help's options come from here.
const OptionTable& gradeOptions() {
    static const OptionTable table = {
        textOption("problem", "P",
                   "the problem: number (\"7\", \"p07\"), name (\"attention/07_slug\") or path to its file")
            .isRequired(),
        textOption("dsl", "D", "the kernel's DSL id (resources/dsls/D.json, or a --dsl-dir)").isRequired(),
        pathOption("suite", "DIR", "a suite root to find P in").defaultSaid("the shipped problems").isRepeatable(),
        textOption("device", "DEV", "cuda:N or cpu").withDefault("cuda:0"),
        pathOption("python", "PATH", "the interpreter that runs the grader; it needs torch")
            .defaultSaid("$MKB_PYTHON, else python3"),
        numberOption("timeout", "S", "the evaluation bound in seconds; mkb allows the grader S + 30 s in all")
            .withDefault(GradeSettings{}.timeoutS)
            .above(0),
        textOption("boundary", "B",
                   "the implementation boundary: mkb (MetaKernelBench's rule, eager PyTorch may finish what a DSL "
                   "kernel started) or strict (all arithmetic in the DSL); the verdict records it")
            .withDefault(GradeSettings{}.boundary),
        pathOption("dsl-dir", "DIR", "an extra folder of DSL descriptors, searched first").isRepeatable(),
        flagOption("json", "print the verdict JSON instead of the report (with the speedup's 95% CI, speedup_ci_low "
                           "and speedup_ci_high, and the GPU time, gpu_median_ms; fields: docs/grader-protocol.md)"),
        pathOption("store", "PATH", "the project store: peaks for roofline come from its latest probe of the device")
            .defaultSaid("$MKB_STORE or the user's store, when it exists"),
        flagOption("save", "record the verdict in the store as a trial of model \"manual\" (arm solo_D, replicate 1); "
                           "an earlier manual trial of the same problem and DSL is archived, never deleted"),
    };
    return table;
}

const char* const kGradeExitCodes =
    R"(exit codes: 0 passed, 1 graded and failed, 2 bad command line, 3 missing kernel, unknown problem or DSL,
            4 store error, 5 infrastructure error (grader or GPU failed; grade again), 130 interrupted
)";

std::atomic<bool>& interrupted = interruptRequested();

std::string gradeHelp() {
    return verbHelp(kGradeIntro, gradeOptions(), kGradeExitCodes);
}

int runGrade(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(gradeOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb grade --help)");
    }
    const ParsedOptions& args = *parsed;
    if (args.help) {
        std::cout << gradeHelp();
        return kExitOk;
    }
    if (args.positionals.size() != 1) {
        return fail(kExitUsage, "mkb grade takes exactly one KERNEL file (mkb grade --help)");
    }
    if (Status required = requireOptions(gradeOptions(), args); !required) {
        return fail(kExitUsage, "mkb grade: " + required.error().message + " (mkb grade --help)");
    }
    auto problemName = args.value("problem");
    auto dsl = args.value("dsl");
    const std::string device = args.text("device");
    if (Status valid = validateDevice(device); !valid) {
        return fail(kExitUsage, valid.error().message);
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
    settings.timeoutS = args.number("timeout");
    auto boundary = parseBoundary(args.text("boundary"));
    if (!boundary) {
        return fail(kExitUsage, boundary.error().message + " (mkb grade --help)");
    }
    settings.boundary = *boundary;
    GradeRequest request = makeGradeRequest(*problem, kernelPath, *dsl, *descriptor, device, settings);

    const fs::path storePath = args.value("store") ? fs::path(*args.value("store")) : defaultStorePath();
    auto opened =
        openGradingStore(storePath, args.value("store").has_value() || args.flag("save"), args.flag("save"), request);
    if (!opened) {
        return fail(kExitStore, opened.error().message);
    }
    const std::unique_ptr<Store> store = std::move(opened).value();

    installInterruptHandler();
    bool showStages = !args.flag("json") && ::isatty(STDERR_FILENO);
    StageCallback onStage = [&](const std::string& stage) {
        if (showStages) {
            std::cerr << "mkb grade: " << stage << "...\n";
        }
    };
    GraderLaunch launch;
    launch.python = graderPythonFrom(args.value("python"));
    const KernelGrading graded = gradeKernelFile(request, launch, onStage, &interrupted);
    const Verdict& verdict = graded.verdict;
    if (interrupted.load()) {
        return fail(kExitInterrupted, "grading interrupted; nothing was saved");
    }

    if (args.flag("json")) {
        std::cout << verdict.json << '\n';
    } else {
        ReportHeading heading{problem->name(), *dsl, kernelPath.string(), device};
        std::cout << verdictReport(verdict, heading);
        if (request.peaksJson.empty() && device != "cpu" && verdict.roofline) {
            std::cout << "(no probe of " << device << " in the store: run `mkb device probe` for IOU and MFU)\n";
        }
    }

    if (args.flag("save")) {
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
    registerCommand({"grade", "grade one kernel.py against a problem and print the report", gradeHelp(), runGrade});

} // namespace
} // namespace mkb::cli
