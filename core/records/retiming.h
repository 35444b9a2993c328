// Paired re-timing of a cell (DESIGN §5.5) as plain data: what the grader returns, the store keeps and analysis reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// One kernel timed in a paired re-timing. label is "source", "base", "skill" (or "a"/"b" in calibration).
struct RetimedKernel {
    std::string label;
    std::string dsl;
    std::string sha256;               // of the kernel.py bytes that were timed
    double medianS = 0;               // median end-to-end time of its calls over the rounds
    std::optional<double> gpuMedianS; // median summed kernel duration per call (CUDA activity records), if measured
};

/// A pairwise result: ratio = median over rounds of time(a) / time(b), i.e. b's speedup over a
/// (pair a = "base", b = "skill" gives the paired ratio r of DESIGN §8). CI is the 95% bootstrap interval.
struct RetimedPair {
    std::string a;
    std::string b;
    double ratio = 1;
    double ciLow = 1;
    double ciHigh = 1;
    int n = 0; // rounds that entered the ratio
};

/// The grader's answer to one retime request.
struct RetimingResult {
    bool ok = false;
    std::string error;       // one line when !ok
    std::string failedLabel; // the kernel that failed its correctness draw, "" when none did
    bool infrastructureError = false;
    std::string device;     // "cuda:0"
    std::string deviceName; // "NVIDIA H200"
    std::string graderFingerprint;
    int rounds = 0;
    std::string stop; // "converged", "round_limit" or "time_limit"
    double eagerMedianS = 0;
    std::vector<RetimedKernel> kernels;
    std::vector<RetimedPair> pairs; // every pair i < j in request order, plus each kernel against "eager"
    double seconds = 0;             // wall time of the re-timing
    std::string json;               // the result JSON exactly as the grader wrote it

    /// The pair (a, b) in either orientation, oriented as asked (ratio and CI inverted when stored as (b, a)).
    std::optional<RetimedPair> pair(const std::string& a, const std::string& b) const {
        for (const RetimedPair& p : pairs) {
            if (p.a == a && p.b == b) {
                return p;
            }
            if (p.a == b && p.b == a && p.ratio > 0 && p.ciLow > 0 && p.ciHigh > 0) {
                return RetimedPair{a, b, 1 / p.ratio, 1 / p.ciHigh, 1 / p.ciLow, p.n};
            }
        }
        return std::nullopt;
    }
};

/// A stored re-timing of one cell (model, problem, direction, replicate). Goes stale when the device, the grader
/// fingerprint or any kernel's SHA-256 changes; older results are archived, never overwritten.
struct RetimingRecord {
    std::int64_t id = 0;
    std::string model;
    std::string suite;
    int problemNumber = 0;
    int replicate = 1;
    std::string sourceDsl; // the direction source2target
    std::string targetDsl;
    std::optional<std::int64_t> sourceTrialId;
    std::optional<std::int64_t> baseTrialId;
    std::optional<std::int64_t> skillTrialId;
    RetimingResult result;
    bool archived = false;
    std::string createdAt; // ISO 8601 UTC
};

/// A stored paired re-timing of two consecutive submissions of one trial (before -> after), timed together with
/// eager under the labels "before" and "after": pair("before", "after") is the after kernel's speedup over the before
/// kernel. Keyed by the trial's identity (model, suite, problem, replicate, arm) and the two submission indices, so a
/// re-imported trial finds its pairs; stale like a cell's re-timing. A pair the grader could not time (a kernel
/// failed its correctness draw) is stored with ok = false and the reason.
struct TransitionRetimingRecord {
    std::int64_t id = 0;
    std::optional<std::int64_t> trialId; // the trial timed (informative: a replaced trial keeps its pairs by key)
    std::string model;
    std::string suite;
    int problemNumber = 0;
    int replicate = 1;
    std::string arm;
    int beforeIndex = 0; // submission indices (1-based)
    int afterIndex = 0;
    RetimingResult result;
    bool archived = false;
    std::string createdAt; // ISO 8601 UTC
};

} // namespace mkb
