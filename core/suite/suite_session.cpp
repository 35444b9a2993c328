// One `mkb suite check` from its settings to the finished report (suite_session.h).
#include "core/suite/suite_session.h"

#include "core/catalog/catalog.h"
#include "core/grader_client/grader_process.h"
#include "core/store/store.h"
#include "core/suite/suite_report.h"
#include "core/util/output_file.h"
#include "core/util/utc_time.h"
#include "core/wire/grade_request.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <utility>

namespace mkb {
namespace {

namespace fs = std::filesystem;

SuiteCheckRun stopped(SuiteCheckRun run, SuiteCheckStage stage, std::string error) {
    run.failedAt = stage;
    run.error = std::move(error);
    return run;
}

} // namespace

SuiteCheckRun runSuiteCheck(const SuiteCheckJob& job, const SuiteCheckCallbacks& callbacks,
                            const std::atomic<bool>& cancel) {
    SuiteCheckRun run;
    SuiteCheckOptions& options = run.options;
    options = job.options;

    std::error_code ec;
    fs::path root = job.suiteRoot;
    if (!fs::is_directory(root, ec)) {
        return stopped(std::move(run), SuiteCheckStage::Selecting,
                       "suite folder " + root.string() + " does not exist or is not a folder");
    }
    root = fs::absolute(root, ec);
    const Catalog catalog = loadCatalog({root});
    const std::vector<const Problem*> selected = catalog.select(job.problemsGlob);
    if (selected.empty()) {
        return stopped(std::move(run), SuiteCheckStage::Selecting,
                       "no problem matched --problems '" + job.problemsGlob + "' in " + root.string() + " (" +
                           std::to_string(catalog.problems.size()) + " problems; mkb problems list)");
    }
    run.selected = selected.size();

    for (const std::string& dsl : options.dsls) {
        auto descriptor = loadDslDescriptor(dsl, job.dslDirs);
        if (descriptor) {
            options.descriptors[dsl] = *descriptor;
        } else {
            options.descriptorErrors[dsl] = descriptor.error().message;
        }
    }
    if (options.descriptors.empty() && !options.validateOnly) {
        return stopped(std::move(run), SuiteCheckStage::Descriptors, options.descriptorErrors.begin()->second);
    }

    // The report files are checked now, not after the first problem's gradings: a directory, a device or the store
    // named as --json or --table fails at once.
    const OutputRules jsonRules{"--json", storeFiles(job.storePath)};
    const OutputRules tableRules{"--table", storeFiles(job.storePath)};
    for (const auto& [path, rules] : {std::pair{&job.jsonPath, &jsonRules}, std::pair{&job.tablePath, &tableRules}}) {
        if (*path) {
            if (Status writable = checkOutputPath(**path, *rules); !writable) {
                return stopped(std::move(run), SuiteCheckStage::Outputs, writable.error().message);
            }
        }
    }
    const bool onCpuOnly = job.devices.empty()
                               ? options.device == "cpu"
                               : std::all_of(job.devices.begin(), job.devices.end(),
                                             [](const std::string& each) { return graderDeviceFor(each) == "cpu"; });
    std::unique_ptr<Store> store;
    // Peaks serve the solutions' IOU and MFU only, so a validation alone neither reads nor probes them.
    if (!onCpuOnly && !options.validateOnly && (job.storeNamed || fs::exists(job.storePath, ec))) {
        auto opened = Store::open(job.storePath, OpenMode::CreateIfMissing);
        if (!opened) {
            return stopped(std::move(run), SuiteCheckStage::OpeningStore, opened.error().message);
        }
        store = std::move(opened).value();
    }

    SuiteCheckReport& report = run.report;
    report.dsls = options.dsls;
    report.gradings = options.gradings;
    report.flakiness = options.flakiness;
    report.drawsPerGrading = options.settings.correctnessDraws;
    report.device = options.device;
    report.boundary = options.settings.boundary;
    report.date = utcNowIso();
    report.command = job.command;
    report.commandWords = job.commandWords;
    report.suiteRoot = root;
    report.storePath = job.storePath;
    report.eagerTargetMs = options.eagerTargetMs;
    report.validateOnly = options.validateOnly;
    for (const CatalogIssue& issue : catalog.issues) {
        report.catalogIssues.push_back(issue.path.string() + ": " + issue.message);
    }

    const auto say = [&](const std::string& line) {
        if (callbacks.say) {
            callbacks.say(line);
        }
    };
    GraderProcess grader(job.launch);
    if (callbacks.graderStarting) {
        callbacks.graderStarting();
    }
    std::unique_ptr<GraderPool> pool;
    std::map<std::string, std::string> peaksByDevice;
    SuitePeaks peaks;
    if (job.devices.empty()) {
        if (Status started = grader.start(); !started) {
            return stopped(std::move(run), SuiteCheckStage::StartingGrader,
                           "the grader did not start: " + started.error().message);
        }
        report.graderFingerprint = grader.hello().graderFingerprint;
        peaks = options.validateOnly ? SuitePeaks{"", "none (validation only)", ""}
                                     : suitePeaks(grader, options.device, store.get(), job.storePath, say, &cancel);
        if (!peaks.deviceName.empty()) {
            options.deviceNames[options.device] = peaks.deviceName;
        }
    } else {
        pool = std::make_unique<GraderPool>(job.devices, job.launch, callbacks.deviceLost);
        if (Status started = pool->start(); !started) {
            return stopped(std::move(run), SuiteCheckStage::StartingGrader,
                           "the grader did not start: " + started.error().message);
        }
        report.graderFingerprint = pool->hello().graderFingerprint;
        const std::map<std::string, SuitePeaks> each =
            options.validateOnly ? std::map<std::string, SuitePeaks>{}
                                 : suitePeaksOnPool(*pool, store.get(), job.storePath, say, &cancel);
        for (const auto& [name, found] : each) {
            peaksByDevice[name] = found.peaksJson;
            if (!found.deviceName.empty()) {
                options.deviceNames[name] = found.deviceName;
            }
        }
        const std::string& first = job.devices.front();
        peaks = each.count(first) ? each.at(first) : SuitePeaks{};
        peaks.note = first + ": " + peaks.note + (job.devices.size() > 1 ? " (each device its own)" : "");
    }
    options.peaksJson = peaks.peaksJson;
    report.peaksNote = peaks.note;
    if (!peaks.deviceName.empty()) {
        report.deviceName = peaks.deviceName;
    }
    report.peaksJson = options.peaksJson;
    if (callbacks.started) {
        callbacks.started(report, options, selected.size());
    }

    std::vector<EarlierSuiteReport> earlier;
    for (const fs::path& resumePath : job.resumeFrom) {
        auto loaded = loadEarlierSuiteReport(resumePath);
        if (!loaded) {
            return stopped(std::move(run), SuiteCheckStage::Resuming, loaded.error().message);
        }
        run.resumedFrom += (earlier.empty() ? "" : ", ") + resumePath.string();
        earlier.push_back(std::move(loaded).value());
    }

    // The files are rewritten after every problem, so an interrupt, a kill or a lost machine costs one problem at
    // most; a partial report says so and lists what is left (continue with --resume).
    const auto writeReports = [&]() -> Status {
        if (job.jsonPath) {
            if (Status written = writeOutputFile(*job.jsonPath, suiteReportJson(report), jsonRules); !written) {
                return written;
            }
        }
        if (job.tablePath) {
            const std::string table =
                report.validateOnly ? validationTableMarkdown(report) : suiteTableMarkdown(report);
            if (Status written = writeOutputFile(*job.tablePath, table, tableRules); !written) {
                return written;
            }
        }
        return Ok{};
    };
    SuiteRunHooks hooks;
    hooks.onStage = callbacks.onStage;
    hooks.onProblem = callbacks.onProblem;
    hooks.writeReports = [&](const SuiteCheckReport&) { return writeReports(); };
    run.outcome = pool ? runSuiteChecksOnPool(*pool, selected, options, peaksByDevice, earlier, report, hooks, cancel)
                       : runSuiteChecks(grader, selected, options, earlier, report, hooks, cancel);
    grader.stop();
    if (pool) {
        pool->stop();
    }
    if (!run.outcome.writeError) {
        run.finalWrite = writeReports();
    }
    return run;
}

} // namespace mkb
