// From `mkb run`'s options (core/protocol/run_options.h) to the RunSettings the runner takes: every check that needs
// no file, so a bad command line is one clear line before anything is read or started.
#pragma once

#include "core/protocol/run_options.h"
#include "core/protocol/runner.h"
#include "core/util/result.h"

namespace mkb {

/// The settings `options` stand for, without what needs files (driver, DSLs, problems, store, workspaces): the
/// devices checked (one, or --devices' list), the budget, grading numbers and boundary, the flags, and re-timing
/// (off with --no-retime or the Slurm executor; shorter on test devices). The error names the option and the value,
/// and is a bad command line (exit 2).
Result<RunSettings> runSettingsFrom(const RunOptions& options);

} // namespace mkb
