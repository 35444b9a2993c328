// The grader's verdict on one evaluation of a kernel.py, as plain data (DESIGN §5.1-5.3).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mkb {

struct QuantMetrics {
    double cosine = 0;
    double relativeL1 = 0;
    double rmse = 0;
    bool passed = false;
};

struct Roofline {
    double bytes = 0;                   // compulsory traffic: all inputs and outputs
    double flops = 0;                   // from the FLOP counter on reference, or MKB_META
    std::optional<double> achievedGBps; // over the kernel's median time
    std::optional<double> achievedTflops;
    std::optional<double> iou;  // achieved bandwidth / measured peak bandwidth
    std::optional<double> mfu;  // achieved FLOP/s / measured peak for the dominant dtype
    std::string timeBasis = ""; // the time the rates are over: "gpu" (CUDA activity records), "end_to_end", "" unknown
};

struct Verdict {
    // The four MetaKernelBench rewards; all 0 on failure.
    bool imported = false;
    bool correct = false;
    bool passed = false;
    double speedupVsEager = 0;

    std::string stage;                // the stage evaluation ended in: "done", "load", "import", "correctness", ...
    bool infrastructureError = false; // true when the grader itself failed (not the candidate's fault)
    bool timedOut = false;            // the evaluation bound was hit
    std::string error;                // one-line failure reason, empty on success

    int correctDraws = 0;
    int totalDraws = 0;
    std::vector<int> failedDraws; // 0-based correctness draws that failed or never reported
    std::string mismatch;         // the first mismatch in words

    bool compliant = false;
    std::string complianceRule; // the rule that failed, empty when compliant
    // The implementation boundary it was graded under (DESIGN §5.2): "mkb", "strict", or "legacy" for verdicts
    // graded before boundaries existed, and for any verdict nobody told its boundary (core/vocabulary/boundary.h).
    std::string boundary = "legacy";

    std::optional<double> kernelMedianMs;
    std::optional<double> eagerMedianMs;
    std::optional<double> kernelIqrMs;
    bool throttled = false; // some timing samples were taken while the SM clock was throttled
    // The speedup's 95% percentile-bootstrap interval over the paired timing draws; unset on failure or in older
    // verdicts. Filled by verdictFromJson; the store keeps it inside Verdict::json.
    std::optional<double> speedupCiLow;
    std::optional<double> speedupCiHigh;
    // Median GPU time of a call (summed device activity from CUDA's records) on the re-checked timing draws; unset on
    // CPU or when the profiler was unavailable. gpuTimeSource is "torch.profiler" or "none".
    std::optional<double> gpuMedianMs;
    std::string gpuTimeSource;
    int gpuSamples = 0;
    // mkb calibrate's slowed copy (GradeRequest::slowdown): the fraction asked for and the delay it added to every
    // timed call (slowdown × the kernel's own warm-up median); 0 and unset for every other grading.
    double slowdown = 0;
    std::optional<double> slowdownDelayMs;

    std::optional<bool> outliersCorrect; // outlier draws, reported separately
    std::optional<QuantMetrics> quant;
    std::optional<Roofline> roofline;

    double evalSeconds = 0;
    std::string outlierMismatch;        // the first outlier-draw mismatch in words, empty when none
    std::optional<bool> recheckCorrect; // timing-draw re-checks; unset when timing did not run
    std::string log;                    // the tail of the candidate's own stdout/stderr, as the grader kept it
    std::string deviceName;             // the GPU the evaluation ran on, as the grader named it; "" when unknown
    std::string device;                 // the device it was graded on ("cuda:1", "cpu"); "" in older verdicts
    std::string json;                   // the full verdict JSON exactly as the grader wrote it
};

} // namespace mkb
