// What `mkb run` settles around runProtocol: the store a run plans against (with each device's latest peaks), where
// attempt workspaces go by default, the test devices' shorter re-timing, and how a run's end is told as its
// run_finished event.
#pragma once

#include "core/protocol/progress.h"
#include "core/protocol/runner.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <filesystem>
#include <memory>

namespace mkb {

/// On cpu and the cpu:N test devices a cell's re-timing stops at 20..200 rounds or 10 s instead of the GPU's
/// 100..2000 rounds or 60 s; other devices keep the settings as they are.
void useTestDeviceRetiming(RunSettings& settings);

/// Where attempt workspaces go when none is named: beside the store, <store's stem>.attempts/ (absolute).
std::filesystem::path defaultWorkspaceRoot(const std::filesystem::path& storePath);

/// Opens the store a run plans against: created when missing, except for a dry run, which only reads an existing
/// one (and has none, nullptr, where there is no file). Fills settings.peaksJson (one device) or
/// settings.peaksByDevice (settings.devices) from the store's latest probes on this host.
Result<std::unique_ptr<Store>> openRunStore(const std::filesystem::path& storePath, RunSettings& settings);

/// How a run ended, each with its own exit code in the CLI.
enum class RunEnd {
    Complete,    // every planned trial finished or was skipped
    Planned,     // a dry run
    Interrupted, // cancelled: run again to resume
    Incomplete,  // some trials failed: run again to redo them
    Failed,      // the run itself failed (the grader could not start, the store failed)
};

struct RunFinish {
    RunEnd end = RunEnd::Complete;
    ProgressEvent event; // kind RunFinished: status, message and counts (the caller sets exitCode)
};

/// The run_finished event for what runProtocol returned.
RunFinish runFinished(const Result<RunSummary>& summary, const RunSettings& settings);

} // namespace mkb
