// The run engine (DESIGN §6): executes a convergent plan with a model driver, the grader and the store.
#pragma once

#include "core/agents/driver.h"
#include "core/grader_client/grader_process.h"
#include "core/protocol/planner.h"
#include "core/protocol/progress.h"
#include "core/store/store.h"
#include "core/wire/grade_request.h"
#include "core/wire/retime_request.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace mkb {

/// A DSL of the pair: its descriptor as data and as the JSON the grader reads.
struct RunDsl {
    DslDescriptor descriptor;
    std::string descriptorJson;
};

struct RunSettings {
    std::string model;
    std::string driverKind;         // "reference", "command", "chat"
    std::string driverSettingsJson; // stored with the model; never holds secrets
    std::vector<Problem> problems;
    RunDsl dslA;
    RunDsl dslB;
    int replicates = 1;
    std::string device = "cuda:0";
    // --devices (DESIGN §11): one grader server per device, gradings to the least-loaded, a cell's re-timing whole on
    // one device; empty: every grading on `device` alone. Each device's measured peaks, "" (or absent) when never
    // probed.
    std::vector<std::string> devices;
    std::map<std::string, std::string> peaksByDevice;
    GraderLaunch grader;
    GradeSettings grade;   // grade.maxKernelBytes follows budget.maxKernelBytes
    std::string peaksJson; // the device's measured peaks, "" when never probed
    AttemptBudget budget;
    int concurrency = 2; // attempts (model calls) in flight at once; grading is serialised per GPU by the lock
    bool rerunStale = false;
    bool dryRun = false;                   // plan (with the grader's fingerprint) and stop
    bool retime = true;                    // paired re-timing of each cell as soon as its arms are final
    RetimeSettings retimeSettings;         // its adaptive stop
    std::filesystem::path workspaceRoot;   // attempt workspaces go to <root>/<model>/<coordinate>-t<trial id>
    std::string commandLine;               // recorded with the invocation
    std::set<std::string> onlyCoordinates; // when not empty, only these plan entries run (one per Slurm job)
};

/// Makes one driver per concurrent attempt slot.
using DriverFactory = std::function<Result<std::unique_ptr<AgentDriver>>()>;

struct RunSummary {
    Plan plan;
    std::string graderFingerprint;
    int attempted = 0;    // attempts started
    int finished = 0;     // attempts that ended with a final verdict
    int passed = 0;       // of those, passed
    int skipped = 0;      // skill arms recorded as skipped
    int failed = 0;       // infrastructure errors, and skill arms whose source failed (left for the next run)
    int interrupted = 0;  // attempts stopped by cancel
    int retimed = 0;      // cells whose paired re-timing was stored (DESIGN §5.5)
    int retimeErrors = 0; // cells whose re-timing got no result (left missing or stale for the next run)
    bool cancelled = false;
    double seconds = 0;
};

/// Plans against the store's live trials of the model and executes the plan: solos first, each skill arm after its
/// source; every multi-row write in one transaction; a trial is inserted as running before its attempt starts.
/// store may be null only for a dry run (no history). Errors: the grader cannot start, or the store fails while
/// planning. Failures of single trials are recorded on those trials and never stop the others.
Result<RunSummary> runProtocol(const RunSettings& settings, Store* store, const DriverFactory& makeDriver,
                               ProgressSink& progress, const std::atomic<bool>& cancel);

} // namespace mkb
