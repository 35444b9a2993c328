// The re-timing loop (DESIGN §5.5): collects the cells of a selection from the store, plans them, writes each cell's
// kernels to a private temporary folder, asks the grader for a paired re-timing and stores the result.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/protocol/retime_plan.h"
#include "core/records/problem.h"
#include "core/store/store.h"
#include "core/wire/retime_request.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// Which cells a re-timing looks at. Cells are matched to problems by number (and slug when the trial has one), so
/// imported results filed under another suite name find the shipped problem of the same number.
struct RetimeScope {
    std::optional<std::string> model;  // unset: every model in the store
    std::vector<Problem> problems;     // the selected problems (with path and meta); other cells are ignored
    std::vector<Direction> directions; // empty: every direction found in the store
    std::vector<int> replicates;       // empty: every replicate
};

struct RetimeJob {
    RetimeScope scope;
    std::string device = "cuda:0";
    std::string deviceName;               // "" when unknown (staleness then compares the device string only)
    std::vector<std::string> sameDevices; // mkb run --devices: a re-timing on any device of the run is current
    RetimeSettings retime;
    GradeSettings grade;
    /// The grader descriptor JSON of a DSL id; an error leaves that DSL's cells out with the message as the reason.
    std::function<Result<std::string>(const std::string& dsl)> dslDescriptor;
    bool redoCurrent = false;
    bool dryRun = false;              // plan only: nothing is timed or written
    std::filesystem::path tempRoot;   // where the private kernel folders go; "" = the system's temporary folder
    std::mutex* storeMutex = nullptr; // held around every store call when others share the store (mkb run)
    /// Stop starting re-timings after this many seconds (0: no limit); what is left stays for the next run.
    double timeLimitS = 0;
    /// Before/after pairs only (mkb retime --transitions): the transition kinds a pair's after submission must name
    /// one of ("speedup_increase"; "regression_*" matches by prefix); empty: every pair.
    std::vector<std::string> transitionKinds;
};

/// What happened to one cell that was to be re-timed.
struct RetimeOutcome {
    const RetimePlanEntry* entry = nullptr;
    std::optional<RetimingResult> result; // set when the grader answered (ok or not); stored when set
    std::string error;                    // one line when no result came (infrastructure, store, cancel)
};

struct RetimeSummary {
    RetimePlan plan;
    int retimed = 0;      // stored results with ok = true
    int kernelFailed = 0; // stored results with ok = false (a kernel failed its correctness draw in the child)
    int errors = 0;       // no result (grader or store failure); the cell stays missing or stale for the next run
    bool cancelled = false;
    bool timeLimited = false; // stopped at job.timeLimitS; the cells not started are left for the next run
    double seconds = 0;
};

/// The cells of the scope found among the store's live trials, with each arm's final kernel (submission index 0)
/// read for arms that passed. A cell exists where a skill arm or both solos of a direction exist.
Result<std::vector<RetimeCell>> retimeCellsFromStore(Store& store, const RetimeScope& scope);

/// Plans the scope against the store's live re-timings for this device and grader.
Result<RetimePlan> planRetimes(Store& store, const RetimeJob& job, const std::string& graderFingerprint);

/// Plans, then re-times each cell the plan marks (one request per cell, kernels in the order source, base, skill),
/// storing each result as it comes (each in its own transaction, archiving the cell's previous record). onPlan sees
/// the plan before anything is timed; onOutcome sees each cell when it is done. On cancel, the cell in flight is
/// dropped (nothing half-written) and the rest are left for the next run. The grader must be started.
Result<RetimeSummary> runRetimes(Store& store, GraderProcess& grader, const RetimeJob& job,
                                 const std::function<void(const RetimePlan&)>& onPlan,
                                 const std::function<void(const RetimeOutcome&)>& onOutcome,
                                 const std::atomic<bool>* cancel);

/// One line for a cell's result: "ratio 1.003 [0.998, 1.008] n=140 converged" (base→skill ratio; the error when
/// the re-timing failed).
std::string retimeResultLine(const RetimingResult& result);
/// The same line for any pair of labels: "<label> R [lo, hi] n=N <stop>" of pair (a, b), "no a/b pair, ..." when the
/// result lacks it, "failed (<label>): <error>" when it failed.
std::string retimingResultLine(const RetimingResult& result, const char* a, const char* b, const char* label);
/// The planner's request of a job: its device, the devices it counts as the same, the grader and --redo-current.
RetimePlanRequest planRequestOf(const RetimeJob& job, const std::string& graderFingerprint);

} // namespace mkb
