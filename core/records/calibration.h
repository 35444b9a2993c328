// A device's calibration of the outcome rules (DESIGN §5.5) as plain data: A/A and A/B controls per timing method.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// What one timing method ("paired" or "unpaired") did on the calibration's controls.
struct CalibrationMethodResult {
    std::string method;  // "paired" (one re-timing of a and its copies) or "unpaired" (separate gradings)
    double delta = 0.05; // the outcome band δ the rates below were judged with
    int aaComparisons = 0;
    int aaHelped = 0; // A/A comparisons judged helped: false outcomes
    int aaHarmed = 0; // A/A comparisons judged harmed: false outcomes
    int abComparisons = 0;
    int abDetected = 0;                  // A/B comparisons (a against its slowed copy) judged harmed
    std::optional<double> smallestDelta; // smallest δ whose A/A false rate is ≤ 1%; unset when none was found

    double falseRate() const { return aaComparisons ? double(aaHelped + aaHarmed) / aaComparisons : 0; }
    double detectionRate() const { return abComparisons ? double(abDetected) / abComparisons : 0; }
};

/// One `mkb calibrate` of a device under one grader. A newer calibration of the same device and grader archives the
/// older one; nothing is overwritten.
struct CalibrationRecord {
    std::int64_t id = 0;
    std::string device;     // "cuda:0"
    std::string deviceName; // "NVIDIA H200"
    std::string graderFingerprint;
    std::string selection;  // the problems and DSLs calibrated, as given ("--problems 1-12 --dsls triton,cuda")
    double slowdown = 0.10; // the A/B copy's added delay, as a fraction of its median
    std::vector<CalibrationMethodResult> methods;
    std::string detailJson; // per-problem ratios and outcomes as a JSON array ("[]" when none)
    bool archived = false;
    std::string createdAt; // ISO 8601 UTC
};

} // namespace mkb
