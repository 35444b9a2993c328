// `mkb device probe`: measures a GPU's copy bandwidth and dense matmul rates through the grader and stores them.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/grader_client/device_probe.h"
#include "core/grader_client/device_probe_run.h"
#include "core/grader_client/grader_process.h"
#include "core/util/paths.h"
#include "core/wire/grade_request.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace mkb::cli {
namespace {

const char* const kDeviceIntro = R"(usage: mkb device probe [--device cuda:N] [--store PATH] [--python PATH] [--json]

Measures the device's peaks with the Python grader: device-to-device copy bandwidth and dense matmul rates
(float32, tf32, float16, bfloat16, and float8 where supported), prints them and saves them in the project store
(per device UUID, replacing that device's earlier probe). Grading on this machine then reports roofline IOU and
MFU against these measured peaks.

)";

const char* const kDeviceExitCodes =
    R"(exit codes: 0 success, 2 bad command line, 4 store error, 5 the probe failed (no GPU, grader or driver error)
)";

const OptionTable& deviceOptions() {
    static const OptionTable table = {
        textOption("device", "DEV", "the GPU to probe").withDefault("cuda:0"),
        pathOption("store", "PATH", "the project store; created when missing")
            .defaultSaid("$MKB_STORE, else ~/.local/share/mkb/default.mkb.sqlite"),
        pathOption("python", "PATH", "the interpreter that runs the grader").defaultSaid("$MKB_PYTHON, else python3"),
        flagOption("json", "print the probe's JSON instead of text"),
    };
    return table;
}

std::string deviceHelp() {
    return verbHelp(kDeviceIntro, deviceOptions(), kDeviceExitCodes);
}

int runProbe(const ParsedOptions& args) {
    const std::string device = args.text("device");
    if (!cudaDeviceIndex(device)) {
        return fail(kExitUsage, "mkb device probe needs a CUDA device such as cuda:0, not '" + device + "'");
    }
    std::filesystem::path storePath =
        args.value("store") ? std::filesystem::path(*args.value("store")) : defaultStorePath();
    GraderLaunch launch;
    launch.python = graderPythonFrom(args.value("python"));
    const DeviceProbeRun run = probeDeviceIntoStore(storePath, launch, device);
    if (run.failedAt) {
        return fail(*run.failedAt == ProbeStage::Probing ? kExitInfrastructure : kExitStore, run.error);
    }
    const std::optional<DeviceProbe>& probe = run.probe;

    if (args.flag("json")) {
        std::cout << probe->json << '\n';
        return kExitOk;
    }
    std::printf("%s: %s (uuid %s, compute capability %s)\n", device.c_str(), probe->name.c_str(),
                probe->uuid.empty() ? "?" : probe->uuid.c_str(),
                probe->computeCapability.empty() ? "?" : probe->computeCapability.c_str());
    std::printf("  copy bandwidth   %8.0f GB/s\n", probe->copyGBps);
    for (const auto& [dtype, rate] : probe->tflops) {
        std::printf("  %-16s %8.1f TFLOP/s dense matmul\n", dtype.c_str(), rate);
    }
    std::printf("saved in %s\n", storePath.string().c_str());
    return kExitOk;
}

int runDevice(const std::vector<std::string>& rawArgs) {
    auto parsed = parseOptions(deviceOptions(), rawArgs);
    if (!parsed) {
        return fail(kExitUsage, parsed.error().message + " (mkb device --help)");
    }
    if (parsed->help) {
        std::cout << deviceHelp();
        return kExitOk;
    }
    if (parsed->positionals.size() != 1 || parsed->positionals[0] != "probe") {
        return fail(kExitUsage, "mkb device takes one action: probe (mkb device --help)");
    }
    return runProbe(*parsed);
}

const bool registered =
    registerCommand({"device", "measure a GPU's peaks (mkb device probe) and store them", deviceHelp(), runDevice});

} // namespace
} // namespace mkb::cli
