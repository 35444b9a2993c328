// One `mkb calibrate` run (DESIGN §5.5): for every solution of a selection, the paired re-timing of the solution, its
// copy and its slowed copy, and the unpaired gradings of the solution twice and of its slowed copy once; the rates
// come from analysis/calibration and the result is the CalibrationRecord the store keeps.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/records/calibration.h"
#include "core/records/problem.h"
#include "core/util/result.h"
#include "core/wire/retime_request.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

struct CalibrationJob {
    std::vector<Problem> problems; // calibrated in this order
    std::vector<std::string> dsls;
    std::map<std::string, std::string> dslDescriptors; // DSL id → descriptor JSON, one for every DSL of dsls
    /// Take the solutions from DIR/NN_slug.<dsl>.py instead of each family's _solutions/ (solutionPath).
    std::optional<std::filesystem::path> solutionsDir;
    std::string device = "cuda:0";
    std::string peaksJson; // the device's probed peaks for the unpaired gradings' roofline, "" when never probed
    int replicates = 1;
    double slowdown = 0.10; // the A/B copy's added delay, a fraction of the kernel's own warm-up median
    double delta = 0.05;    // the outcome band the rates are judged at
    RetimeSettings retime;
    GradeSettings grade;
    std::filesystem::path tempRoot; // where the private kernel folder goes; "" = the system's temporary folder
    std::string selection;          // the command line as recorded with the calibration
};

struct CalibrationRun {
    /// Device, device name, grader fingerprint, selection, slowdown, both methods' rates and the per-solution detail.
    CalibrationRecord record;
    int infrastructure = 0; // re-timings or gradings the grader could not complete (their controls are left out)
    bool cancelled = false; // interrupted: the record is incomplete and must not be stored
    /// Whether any control was measured (else there is nothing to store).
    bool anyControl() const;
};

/// Runs the controls through a started grader, one solution and replicate at a time, and judges them with
/// analysis::calibratePaired / calibrateUnpaired at job.delta. Paired: one re-timing with kernels a, a_copy and a_slow
/// (slowed by job.slowdown); A/A is time(a)/time(a_copy), A/B time(a)/time(a_slow). Unpaired: gradings of a, of a
/// again, and of a_slow with the grade request's slowdown (the grader really times the slowed copy, DeviceDelay
/// sized from its own warm-up median); A/A compares the two gradings of a, A/B the first with the slowed one.
/// progress gets one line per solution and replicate, and one per solution without a file. The error says which
/// folder or kernel file could not be written.
Result<CalibrationRun> runCalibration(const CalibrationJob& job, GraderProcess& grader,
                                      const std::function<void(const std::string&)>& progress,
                                      std::atomic<bool>* cancel = nullptr);

/// The lines mkb calibrate prints after the run: a heading naming the device, grader, δ and slowdown, then one line
/// per method with the A/A false outcomes, the A/B detections and the smallest safe δ.
std::vector<std::string> calibrationSummaryLines(const CalibrationRecord& record, double delta);

} // namespace mkb
