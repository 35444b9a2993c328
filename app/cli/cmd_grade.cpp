// `mkb grade`: grades one kernel.py against one problem through the Python grader and prints the report.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"

#include "core/catalog/catalog.h"
#include "core/grading/boundary.h"
#include "core/grading/device_probe.h"
#include "core/grading/grade_request.h"
#include "core/grading/grader_process.h"
#include "core/grading/report_text.h"
#include "core/protocol/arms.h"
#include "core/store/store.h"
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
(DESIGN §5): import, correctness draws against the float64 anchor, compliance, timing against eager PyTorch,
outliers, quantization metrics and roofline. Prints the grading report, or the verdict JSON with --json.

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

Status saveManualTrial(Store& store, const Problem& problem, const std::string& dsl, const std::string& kernelSource,
                       const Verdict& verdict, const std::string& graderFingerprint) {
    const std::string model = "manual";
    return store.transaction([&]() -> Status {
        if (auto stored = store.upsertProblem(problem); !stored) {
            return stored.error();
        }
        if (auto ensured = store.ensureModel(model, "manual", "{}"); !ensured) {
            return ensured.error();
        }
        Coordinate coordinate{problem.number, 1, soloArm(dsl)};
        TrialFilter filter;
        filter.model = model;
        filter.suite = problem.suite;
        auto live = store.loadTrials(filter);
        if (!live) {
            return live.error();
        }
        for (const TrialRecord& trial : *live) {
            if (trial.problemNumber == problem.number && trial.replicate == 1 && trial.arm == coordinate.arm.name()) {
                if (Status archived = store.archiveTrial(trial.id); !archived) {
                    return archived;
                }
            }
        }
        TrialRecord trial;
        trial.model = model;
        trial.suite = problem.suite;
        trial.problemNumber = problem.number;
        trial.problemSlug = problem.slug;
        trial.family = problem.family;
        trial.replicate = 1;
        trial.arm = coordinate.arm.name();
        trial.dsl = dsl;
        trial.coordinate = formatCoordinate(coordinate);
        trial.problemFingerprint = problem.fingerprint;
        trial.graderFingerprint = graderFingerprint;
        auto trialId = store.insertTrial(trial);
        if (!trialId) {
            return trialId.error();
        }
        SubmissionRecord submission;
        submission.trialId = *trialId;
        submission.index = 0;
        submission.kernelSource = kernelSource;
        submission.verdict = verdict;
        submission.evalSeconds = verdict.evalSeconds;
        if (auto added = store.addSubmission(submission); !added) {
            return added.error();
        }
        TrialOutcome outcome;
        outcome.status = verdict.infrastructureError ? TrialStatus::InfrastructureError : TrialStatus::Finished;
        outcome.verdict = verdict;
        outcome.error = verdict.error;
        outcome.timedOut = verdict.timedOut;
        return store.finishTrial(*trialId, outcome);
    });
}

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
    auto timeout = args.doubleOption("timeout", 600);
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

    std::unique_ptr<Store> store;
    fs::path storePath = args.option("store") ? fs::path(*args.option("store")) : defaultStorePath();
    bool storeNamed = args.option("store").has_value() || args.has("save");
    if (storeNamed || fs::exists(storePath, ec)) {
        auto opened = Store::open(storePath, args.has("save") ? OpenMode::CreateIfMissing : OpenMode::Inspect);
        if (!opened) {
            return fail(kExitStore, opened.error().message);
        }
        store = std::move(opened).value();
        auto devices = store->devices();
        if (!devices) {
            return fail(kExitStore, devices.error().message);
        }
        request.peaksJson = latestPeaksFor(*devices, device, currentHostName());
    }

    GraderLaunch launch;
    launch.python = graderPythonFrom(args.option("python"));
    GraderProcess grader(launch);
    installInterruptHandler();
    bool showStages = !args.has("json") && ::isatty(STDERR_FILENO);
    StageCallback onStage = [&](const std::string& stage) {
        if (showStages) {
            std::cerr << "mkb grade: " << stage << "...\n";
        }
    };
    Verdict verdict = grader.grade(request, onStage, &interrupted);
    // Recorded with the boundary, so a verdict under one boundary never passes for one under the other.
    std::string graderFingerprint = fingerprintWithBoundary(grader.hello().graderFingerprint, settings.boundary);
    grader.stop();
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
        if (Status saved = saveManualTrial(*store, *problem, *dsl, *kernelSource, verdict, graderFingerprint); !saved) {
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
