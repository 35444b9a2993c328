// `mkb calibrate`: A/A and A/B controls of the outcome rules on one device (DESIGN §5.5), paired and unpaired, stored
// per device and grader fingerprint.
#include "app/cli/args.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/run_selection.h"

#include "core/analysis/calibration.h"
#include "core/catalog/catalog.h"
#include "core/grading/device_probe.h"
#include "core/grading/grade_request.h"
#include "core/grading/grader_process.h"
#include "core/grading/retime_request.h"
#include "core/store/store.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace mkb::cli {
namespace {

namespace fs = std::filesystem;

const char* const kCalibrateHelp =
    R"(usage: mkb calibrate [--problems GLOB] [--dsls a,b] [--device DEV] [--replicates N] [options]

Measures how often each timing method calls a change where there is none, and how often it sees a real one, on
this device (DESIGN §5.5). For every shipped solution of the selection (<suite>/<family>/_solutions/NN_slug.<dsl>.py):
  A/A  the solution against itself;
  A/B  the solution against a copy slowed by --slowdown (default 0.10: after each call the grader adds a device-side
       delay of that fraction of the kernel's own median, inside the timed region).
Paired method: one re-timing per solution and replicate with kernels a, a copy of a, and the slowed copy, timed
together in one child (mkb retime's protocol). Unpaired method: two separate gradings of a (as mkb run grades its
arms); A/A compares them, A/B compares the first with the second's speedup divided by (1 + slowdown) (grading has no
delay option; the slowed copy's expected speedup). Outcomes follow DESIGN §8 at --delta.

It prints, for both methods, the false helped/harmed rate on A/A, the detection rate of the slowdown as harmed on
A/B, and the smallest delta that keeps the A/A false rate at or below 1%, and stores them in the project store for
this device and grader fingerprint (a newer calibration of the same device and grader archives the older one).

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
  --timing-draws N      timing draws per unpaired grading (default 50)
  --grade-timeout S     bound of one grading (default 600)

exit codes: 0 calibrated, 1 no solution of the selection could be calibrated, 2 bad command line, 3 missing suite or
            problem, 4 store error, 5 the grader failed, 130 interrupted (nothing is stored)
)";

struct Temp {
    fs::path path;
    ~Temp() {
        if (!path.empty()) {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    }
};

bool copyText(const std::string& text, const fs::path& to) {
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    std::ofstream out(to, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    return static_cast<bool>(out);
}

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
    auto timingDraws = args.intOption("timing-draws", 50, 1, 100000);
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
    std::vector<Problem> problems; // the union of every --problems glob, each problem once, in catalog order
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
        for (Problem& problem : selected) {
            bool known = false;
            for (const Problem& other : problems) {
                known = known || other.number == problem.number;
            }
            if (!known) {
                problems.push_back(std::move(problem));
            }
        }
    }
    std::sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) { return a.number < b.number; });
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
    auto opened = Store::open(storePath, OpenMode::CreateIfMissing);
    if (!opened) {
        return fail(kExitStore, opened.error().message);
    }
    Store& store = **opened;
    std::string peaks;
    if (auto devices = store.devices(); devices) {
        peaks = latestPeaksFor(*devices, device, currentHostName());
    }

    GraderLaunch launch;
    launch.python = graderPythonFrom(args.option("python"));
    GraderProcess grader(launch);
    if (Status started = grader.start(); !started) {
        return fail(kExitInfrastructure, "calibrate: the grader could not start: " + started.error().message);
    }
    installInterruptHandler();
    std::atomic<bool>& cancel = interruptRequested();
    Temp temp;
    {
        std::error_code ec;
        std::string pattern = (fs::temp_directory_path(ec) / "mkb-calibrate-XXXXXX").string();
        if (ec || !mkdtemp(pattern.data())) {
            return fail(kExitBadInput, "calibrate: cannot create a private temporary folder; set TMPDIR");
        }
        temp.path = pattern;
    }

    std::vector<analysis::PairedTiming> pairedAa;
    std::vector<analysis::PairedTiming> pairedAb;
    std::vector<analysis::UnpairedControl> unpairedAa;
    std::vector<analysis::UnpairedControl> unpairedAb;
    nlohmann::json detail = nlohmann::json::array();
    std::string deviceName;
    int infrastructure = 0;
    GradeSettings grade;
    grade.timingDraws = *timingDraws;
    grade.timeoutS = *gradeTimeout;
    for (const Problem& problem : problems) {
        for (const std::string& dsl : dsls) {
            char prefix[16];
            std::snprintf(prefix, sizeof prefix, "%02d_", problem.number);
            const fs::path solution = args.option("solutions") ? fs::path(*args.option("solutions")) /
                                                                     (prefix + problem.slug + "." + dsl + ".py")
                                                               : solutionPath(problem, dsl);
            auto source = readFile(solution.string());
            if (!source) {
                std::printf("%s %s  no shipped solution (%s), left out\n", problem.name().c_str(), dsl.c_str(),
                            solution.string().c_str());
                continue;
            }
            const fs::path folder = temp.path / (problem.code() + "_" + dsl);
            const fs::path a = folder / "a" / "kernel.py";
            const fs::path copy = folder / "a_copy" / "kernel.py";
            const fs::path slow = folder / "a_slow" / "kernel.py";
            if (!copyText(*source, a) || !copyText(*source, copy) || !copyText(*source, slow)) {
                return fail(kExitBadInput, "calibrate: cannot write kernels under " + folder.string());
            }
            for (int replicate = 1; replicate <= *replicates; ++replicate) {
                if (cancel.load()) {
                    grader.stop();
                    return fail(kExitInterrupted, "calibrate: interrupted; nothing was stored");
                }
                nlohmann::json row = {{"problem", problem.number}, {"dsl", dsl}, {"replicate", replicate}};
                // Paired: a, its copy and its slowed copy in one re-timing.
                RetimeRequest request = makeRetimeRequest(problem, device, grade, retimeSettings);
                request.kernels = {{"a", a, dsl, descriptors[dsl], 0},
                                   {"a_copy", copy, dsl, descriptors[dsl], 0},
                                   {"a_slow", slow, dsl, descriptors[dsl], *slowdown}};
                auto retimed = grader.retime(request, {}, &cancel);
                std::string pairedText;
                if (retimed && retimed->ok) {
                    deviceName = retimed->deviceName;
                    auto aa = retimed->pair("a", "a_copy");
                    auto ab = retimed->pair("a", "a_slow");
                    if (aa && ab) {
                        pairedAa.push_back({aa->ratio, aa->ciLow, aa->ciHigh, aa->n});
                        pairedAb.push_back({ab->ratio, ab->ciLow, ab->ciHigh, ab->n});
                        row["paired_aa"] = {aa->ratio, aa->ciLow, aa->ciHigh};
                        row["paired_ab"] = {ab->ratio, ab->ciLow, ab->ciHigh};
                        row["rounds"] = retimed->rounds;
                        char text[160];
                        std::snprintf(text, sizeof text, "paired A/A %.4f [%.4f, %.4f] A/B %.4f [%.4f, %.4f] n=%d",
                                      aa->ratio, aa->ciLow, aa->ciHigh, ab->ratio, ab->ciLow, ab->ciHigh,
                                      retimed->rounds);
                        pairedText = text;
                    }
                } else {
                    ++infrastructure;
                    pairedText = "paired: " + (retimed ? retimed->error : retimed.error().message);
                }
                // Unpaired: two separate gradings of a.
                const GradeRequest gradeRequest =
                    makeGradeRequest(problem, a, dsl, descriptors[dsl], device, grade, peaks);
                const Verdict first = grader.grade(gradeRequest, {}, &cancel);
                const Verdict second = grader.grade(gradeRequest, {}, &cancel);
                std::string unpairedText;
                if (first.infrastructureError || second.infrastructureError) {
                    ++infrastructure;
                    unpairedText = "unpaired: " + (first.infrastructureError ? first.error : second.error);
                } else {
                    const analysis::Grading g1{first.passed, first.speedupVsEager};
                    const analysis::Grading g2{second.passed, second.speedupVsEager};
                    unpairedAa.push_back({g1, g2});
                    unpairedAb.push_back({g1, {g2.passed, g2.speedup / (1 + *slowdown)}});
                    row["unpaired"] = {first.speedupVsEager, second.speedupVsEager};
                    char text[96];
                    std::snprintf(text, sizeof text, "unpaired %.3fx / %.3fx", first.speedupVsEager,
                                  second.speedupVsEager);
                    unpairedText = text;
                }
                detail.push_back(row);
                std::printf("%s %s r%d  %s  %s\n", problem.name().c_str(), dsl.c_str(), replicate, pairedText.c_str(),
                            unpairedText.c_str());
                std::fflush(stdout);
            }
        }
    }
    grader.stop();
    if (cancel.load()) {
        return fail(kExitInterrupted, "calibrate: interrupted; nothing was stored");
    }
    if (pairedAa.empty() && unpairedAa.empty()) {
        return fail(infrastructure > 0 ? kExitInfrastructure : kExitFailed,
                    "calibrate: no solution of the selection could be calibrated (see above)");
    }
    analysis::AnalysisSettings settings;
    settings.delta = *delta;
    CalibrationRecord record;
    record.device = device;
    record.deviceName = deviceName;
    record.graderFingerprint = grader.hello().graderFingerprint;
    record.selection = recordedCommandLine("calibrate", rawArgs);
    record.slowdown = *slowdown;
    record.methods = {analysis::calibratePaired(pairedAa, pairedAb, settings),
                      analysis::calibrateUnpaired(unpairedAa, unpairedAb, settings)};
    record.detailJson = detail.dump();
    std::printf("\ncalibration of %s (%s), grader %s, delta %.3f, slowdown %.3f:\n", device.c_str(),
                deviceName.empty() ? "name unknown" : deviceName.c_str(),
                record.graderFingerprint.substr(0, 12).c_str(), *delta, *slowdown);
    for (const CalibrationMethodResult& method : record.methods) {
        char smallest[32] = "none <= 0.5";
        if (method.smallestDelta) {
            std::snprintf(smallest, sizeof smallest, "%.3f", *method.smallestDelta);
        }
        std::printf("  %-8s  A/A false %d/%d (%.1f%%: %d helped, %d harmed)  A/B detected %d/%d (%.1f%%)  "
                    "smallest delta with false <= 1%%: %s\n",
                    method.method.c_str(), method.aaHelped + method.aaHarmed, method.aaComparisons,
                    100 * method.falseRate(), method.aaHelped, method.aaHarmed, method.abDetected, method.abComparisons,
                    100 * method.detectionRate(), smallest);
    }
    auto stored = store.insertCalibration(record);
    if (!stored) {
        return fail(kExitStore, "calibrate: " + stored.error().message);
    }
    std::printf("stored as calibration #%lld in %s\n", static_cast<long long>(*stored), storePath.string().c_str());
    return infrastructure > 0 ? kExitInfrastructure : kExitOk;
}

const bool registered =
    registerCommand({"calibrate", "A/A and A/B controls of the paired and unpaired outcome rules on a device",
                     kCalibrateHelp, runCalibrate});

} // namespace
} // namespace mkb::cli
