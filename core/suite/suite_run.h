// The `mkb suite check` loop: each selected problem checked (or reused from earlier reports), the reports rewritten
// after every problem, and the device's peaks for IOU/MFU found in the store or probed; over several devices, one
// thread per device takes the next problem from one queue.
#pragma once

#include "core/grader_client/grader_pool.h"
#include "core/grader_client/grader_process.h"
#include "core/records/problem.h"
#include "core/store/store.h"
#include "core/suite/suite_check.h"
#include "core/suite/suite_resume.h"
#include "core/util/result.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mkb {

/// The peaks a suite check uses, and where they came from in words.
struct SuitePeaks {
    std::string peaksJson; // "" when there are none
    std::string note;
    std::string deviceName; // the device's name, from the stored probe or the one run for this check
};

/// The store's latest probe of `device` on this host, else a fresh probe through the grader (saved when a store is
/// open); none on the CPU. `say` hears the lines worth printing (that a probe runs, or why it failed).
SuitePeaks suitePeaks(GraderProcess& grader, const std::string& device, Store* store,
                      const std::filesystem::path& storePath, const std::function<void(const std::string&)>& say,
                      const std::atomic<bool>* cancel);

/// suitePeaks for each device of a started pool, each found or probed on its own device (a device lost meanwhile has
/// none), by pool device.
std::map<std::string, SuitePeaks> suitePeaksOnPool(GraderPool& pool, Store* store,
                                                   const std::filesystem::path& storePath,
                                                   const std::function<void(const std::string&)>& say,
                                                   const std::atomic<bool>* cancel);

struct SuiteRunHooks {
    /// A problem's short status words as it is checked ("validate", "grade cuda").
    std::function<void(const Problem&, const std::string&)> onStage;
    /// A problem's check, once done or reused (already in the report).
    std::function<void(const ProblemCheck&)> onProblem;
    /// Writes the report files; called after every problem, so an interrupt costs one problem at most.
    std::function<Status(const SuiteCheckReport&)> writeReports;
};

struct SuiteRunOutcome {
    int reused = 0;
    std::map<std::string, int> recheckReasons; // why an earlier result could not be reused → how many problems
    bool interrupted = false;
    std::optional<Error> writeError; // the reports could not be written: the loop stopped there
};

/// Checks the selected problems in order into `report` (its unchecked list says what is left after every problem).
/// A problem is reused from the first earlier report whose check of it still holds (reusableCheck).
SuiteRunOutcome runSuiteChecks(GraderProcess& grader, const std::vector<const Problem*>& selected,
                               const SuiteCheckOptions& options, const std::vector<EarlierSuiteReport>& earlier,
                               SuiteCheckReport& report, const SuiteRunHooks& hooks, const std::atomic<bool>& cancel);

/// runSuiteChecks over a started pool (`mkb suite check --devices`): one thread per device takes the next problem from
/// one queue and checks it whole on one device (a device lost meanwhile: the problem is checked again whole on
/// another); each check and its verdicts name the pool device. The report keeps the selection's order; the hooks are
/// called one at a time. When no device is left, the problem at hand records the error and the rest stay unchecked.
/// peaksByDevice: each pool device's peaks ("" or absent: none).
SuiteRunOutcome runSuiteChecksOnPool(GraderPool& pool, const std::vector<const Problem*>& selected,
                                     const SuiteCheckOptions& options,
                                     const std::map<std::string, std::string>& peaksByDevice,
                                     const std::vector<EarlierSuiteReport>& earlier, SuiteCheckReport& report,
                                     const SuiteRunHooks& hooks, const std::atomic<bool>& cancel);

} // namespace mkb
