// The checks and copies from mkb run's options to the runner's settings.
#include "core/protocol/run_hand_over.h"

#include "core/grader_client/grader_pool.h"
#include "core/grader_client/grader_process.h"
#include "core/protocol/run_setup.h"
#include "core/wire/grade_request.h"

namespace mkb {
namespace {

/// A Slurm-only option set away from its default while the executor is local.
Status slurmOptionsFitExecutor(const RunOptions& options) {
    if (options.executor == "slurm") {
        return Ok{};
    }
    const RunOptions& defaults = runOptionDefaults();
    const BoundOptionTable<RunOptions>& table = runOptionTable();
    for (const std::string& name : slurmOnlyRunOptions()) {
        for (const BoundOption<RunOptions>& option : table) {
            if (option.declaration.name != name) {
                continue;
            }
            const bool changed =
                std::visit([&](auto field) { return !(options.*field == defaults.*field); }, option.field);
            if (changed) {
                return makeError("run: --" + name + " applies to --executor slurm only");
            }
        }
    }
    return Ok{};
}

} // namespace

Result<RunSettings> runSettingsFrom(const RunOptions& options) {
    if (Status fits = slurmOptionsFitExecutor(options); !fits) {
        return fits.error();
    }
    RunSettings settings;
    settings.model = options.model;
    settings.driverKind = options.driver;
    settings.device = options.device.empty() ? settings.device : options.device;
    if (Status valid = validateDevice(settings.device); !valid) {
        return valid.error();
    }
    if (!options.devices.empty()) {
        if (!options.device.empty()) {
            return makeError("run: --devices and --device cannot be given together; use --devices for several "
                             "devices or --device for one (mkb run --help)");
        }
        if (options.executor != "local") {
            return makeError("run: --devices applies to --executor local only (each Slurm job holds one GPU)");
        }
        auto listed = parseDeviceList(options.devices, visibleCudaDeviceCount());
        if (!listed) {
            return makeError("run: " + listed.error().message);
        }
        settings.devices = std::move(listed).value();
        settings.device = settings.devices.front(); // recorded with the invocation beside the whole list
    }
    settings.replicates = options.replicates;
    settings.budget.maxSubmissions = options.submissions;
    settings.budget.maxKernelBytes = options.maxKernelBytes;
    settings.budget.wallSeconds = options.wallClockSeconds;
    settings.concurrency = options.concurrency;
    settings.grade.timingDraws = options.timingDraws;
    settings.grade.timeoutS = options.gradeTimeoutSeconds;
    auto boundary = parseBoundary(options.boundary);
    if (!boundary) {
        return makeError("run: " + boundary.error().message + " (mkb run --help)");
    }
    settings.grade.boundary = *boundary;
    settings.rerunStale = options.rerunStale;
    settings.dryRun = options.dryRun;
    settings.retime = !options.noRetime && options.executor == "local";
    settings.onlyCoordinates.insert(options.only.begin(), options.only.end());
    useTestDeviceRetiming(settings);
    settings.grader.python =
        graderPythonFrom(options.python.empty() ? std::nullopt : std::optional<std::string>(options.python));
    return settings;
}

} // namespace mkb
