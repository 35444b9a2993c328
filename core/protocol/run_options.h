// `mkb run`'s options, declared once: the CLI parses and prints its help from this table, and the workbench's run
// form takes its defaults from it and turns a request into arguments (and back) through it.
#pragma once

#include "core/util/option_table.h"

#include <string>
#include <vector>

namespace mkb {

/// One `mkb run` as plain data, field for field as its options; the defaults are the table's (runOptionDefaults),
/// the grading ones GradeSettings'.
struct RunOptions {
    std::string model;        // --model
    std::string driver;       // --driver: reference, command or chat
    std::string driverConfig; // --driver-config FILE
    std::string problems;     // --problems GLOB
    std::string dsls;         // --dsls A,B[,C...]
    int replicates = 0;
    std::vector<std::string> suites;  // --suite (repeatable)
    std::vector<std::string> dslDirs; // --dsl-dir (repeatable)
    std::string device;               // "" = not given (cuda:0)
    std::string devices;              // --devices: "all" or a comma list; "" = the one device
    std::string python;               // "" = $MKB_PYTHON, else python3
    std::string store;                // "" = $MKB_STORE, else the user's data folder
    std::string workspaces;           // "" = beside the store
    double wallClockSeconds = 0;
    int submissions = 0;
    int maxKernelBytes = 0;
    double gradeTimeoutSeconds = 0;
    int timingDraws = 0;
    std::string boundary;
    int concurrency = 0;
    bool rerunStale = false;
    bool noRetime = false;
    bool dryRun = false;
    std::string progress;
    std::vector<std::string> only; // --only COORD (repeatable)
    std::string executor;
    std::string shared;
    std::string partition;
    std::string slurmArgs;
    std::string slurmGpu;
    int slurmTimeMinutes = 0; // 0 = wall clock + grade timeout + 10 min
    double slurmPollSeconds = 0;

    bool operator==(const RunOptions&) const = default;
};

/// The declaration of every `mkb run` option, each bound to its RunOptions field.
const BoundOptionTable<RunOptions>& runOptionTable();

/// The table's declarations alone (for the parser and the help).
const OptionTable& runOptionDeclarations();

/// Every option at its declared default.
const RunOptions& runOptionDefaults();

/// `mkb run`'s arguments (after the verb) parsed and checked against the table; the error names the option and the
/// bad value. Required options are not checked here (requireOptions), so a form may read a partial line.
Result<RunOptions> parseRunOptions(const std::vector<std::string>& args);

/// The arguments after `mkb run` that parse back into `options` (parseRunOptions(runArguments(o)) == o).
std::vector<std::string> runArguments(const RunOptions& options);

/// The options only the Slurm executor reads; with --executor local each is refused.
const std::vector<std::string>& slurmOnlyRunOptions();

} // namespace mkb
