// The `mkb suite check` loop: each selected problem checked (or reused from earlier reports), the reports rewritten
// after every problem, and the device's peaks for IOU/MFU found in the store or probed.
#pragma once

#include "core/grading/grader_process.h"
#include "core/grading/suite_check.h"
#include "core/grading/suite_resume.h"
#include "core/records/problem.h"
#include "core/store/store.h"
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
    std::string deviceName; // set when the device was probed for this check
};

/// The store's latest probe of `device` on this host, else a fresh probe through the grader (saved when a store is
/// open); none on the CPU. `say` hears the lines worth printing (that a probe runs, or why it failed).
SuitePeaks suitePeaks(GraderProcess& grader, const std::string& device, Store* store,
                      const std::filesystem::path& storePath, const std::function<void(const std::string&)>& say,
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

} // namespace mkb
