// Formatting of verdicts as the report a model reads; numbers with sensible precision, one fact per line.
#include "core/grader_client/report_text.h"

#include <cstdio>

namespace mkb {
namespace {

std::string number(double value, const char* format = "%.3g") {
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

std::string milliseconds(double ms) {
    if (ms < 1) {
        return number(ms * 1000, "%.1f") + " us";
    }
    return number(ms, ms < 100 ? "%.3f" : "%.1f") + " ms";
}

std::string bytesText(double bytes) {
    if (bytes >= 1e9) {
        return number(bytes / 1e9, "%.2f") + " GB";
    }
    if (bytes >= 1e6) {
        return number(bytes / 1e6, "%.1f") + " MB";
    }
    return number(bytes / 1e3, "%.1f") + " kB";
}

std::string yesNo(bool value) {
    return value ? "yes" : "no";
}

} // namespace

std::string verdictReport(const Verdict& v, const ReportHeading& heading) {
    std::string out;
    auto line = [&](const std::string& label, const std::string& value) {
        char padded[32];
        std::snprintf(padded, sizeof padded, "%-14s", (label + ":").c_str());
        out += padded + value + "\n";
    };

    std::string outcome;
    if (v.infrastructureError) {
        outcome = "INFRASTRUCTURE ERROR (not the kernel's fault; grade again)";
    } else if (v.passed) {
        outcome = "PASSED";
    } else if (v.correct) {
        outcome = "FAILED (correct, but timing did not complete)";
    } else {
        outcome = "FAILED";
    }
    std::string title = "Grading report";
    if (!heading.problem.empty()) {
        title += ": " + heading.problem;
    }
    if (!heading.dsl.empty()) {
        title += " [" + heading.dsl + "]";
    }
    out += title + "\n";
    if (!heading.kernel.empty()) {
        line("kernel", heading.kernel);
    }
    if (!heading.device.empty()) {
        line("device", heading.device);
    }
    line("result", outcome);
    line("stage", v.stage.empty() ? "?" : v.stage + (v.timedOut ? " (timed out)" : ""));
    if (!v.error.empty()) {
        line("error", v.error);
    }
    line("imported", yesNo(v.imported));
    if (v.totalDraws > 0 || v.correct) {
        line("correctness", std::to_string(v.correctDraws) + "/" + std::to_string(v.totalDraws) + " draws correct");
    }
    if (!v.mismatch.empty()) {
        line("mismatch", v.mismatch);
    }
    if (v.imported) {
        line("compliance", v.compliant ? "ok" : "VIOLATED" + (v.complianceRule.empty() ? "" : ": " + v.complianceRule));
    }
    if (v.kernelMedianMs) {
        std::string text = milliseconds(*v.kernelMedianMs) + " median";
        if (v.kernelIqrMs) {
            text += ", IQR " + milliseconds(*v.kernelIqrMs);
        }
        line("kernel time", text);
    }
    if (v.eagerMedianMs) {
        line("eager time", milliseconds(*v.eagerMedianMs) + " median (PyTorch reference)");
    }
    if (v.passed || v.speedupVsEager > 0) {
        std::string verdictWord = v.speedupVsEager >= 1 ? "faster than eager" : "slower than eager";
        std::string interval;
        if (v.speedupCiLow && v.speedupCiHigh) {
            interval = "; 95% CI " + number(*v.speedupCiLow, "%.2f") + "-" + number(*v.speedupCiHigh, "%.2f") + "x";
            if (*v.speedupCiLow <= 1 && *v.speedupCiHigh >= 1) {
                interval += ", within noise of eager";
            }
        }
        line("speedup", number(v.speedupVsEager, "%.2f") + "x (" + verdictWord + interval + ")");
    }
    if (v.gpuMedianMs) {
        line("gpu time", milliseconds(*v.gpuMedianMs) + " median over " + std::to_string(v.gpuSamples) +
                             " re-checked draw(s): the call's summed kernel time from CUDA's activity records (" +
                             (v.gpuTimeSource.empty() ? "torch.profiler" : v.gpuTimeSource) + ")");
    }
    if (v.outliersCorrect) {
        line("outliers", *v.outliersCorrect ? "correct on outlier inputs"
                                            : "WRONG on outlier inputs (reported separately; the rewards ignore it)");
    }
    if (!v.outlierMismatch.empty()) {
        line("outlier miss", v.outlierMismatch);
    }
    if (v.recheckCorrect && !*v.recheckCorrect) {
        line("recheck", "WRONG on a re-checked timing draw");
    }
    if (v.quant) {
        line("quantization", std::string(v.quant->passed ? "within" : "OUTSIDE") + " thresholds: cosine " +
                                 number(v.quant->cosine, "%.4f") + ", relative L1 " +
                                 number(v.quant->relativeL1, "%.4f") + ", RMSE " + number(v.quant->rmse, "%.4g"));
    }
    if (v.roofline) {
        const Roofline& r = *v.roofline;
        std::string text = bytesText(r.bytes) + " moved";
        if (r.flops > 0) {
            text += ", " + number(r.flops / 1e9, "%.3g") + " GFLOP";
        }
        if (r.achievedGBps) {
            text += "; " + number(*r.achievedGBps, *r.achievedGBps < 10 ? "%.2f" : "%.0f") + " GB/s";
            if (r.iou) {
                text += " (" + number(*r.iou * 100, "%.0f") + "% of measured peak)";
            }
        }
        if (r.achievedTflops) {
            text += "; " + number(*r.achievedTflops, "%.2f") + " TFLOP/s";
            if (r.mfu) {
                text += " (MFU " + number(*r.mfu * 100, "%.0f") + "%)";
            }
        }
        if (!r.iou && !r.mfu) {
            text += "; no measured peaks (run mkb device probe)";
        }
        if (r.timeBasis == "gpu") {
            text += "; over GPU time";
        } else if (r.timeBasis == "end_to_end") {
            text += "; over end-to-end time (no GPU time measured)";
        }
        line("roofline", text);
    }
    if (v.throttled) {
        line("throttling", "some timing samples ran while the SM clock was throttled; timings may be pessimistic");
    }
    if (v.evalSeconds > 0) {
        line("evaluation", number(v.evalSeconds, "%.1f") + " s");
    }
    if (!v.log.empty()) {
        // Candidate output is untrusted text: indent it so it cannot pass for report lines.
        out += "kernel output (tail):\n";
        std::string::size_type start = 0;
        while (start < v.log.size()) {
            auto end = v.log.find('\n', start);
            std::string piece = v.log.substr(start, end == std::string::npos ? std::string::npos : end - start);
            out += "  | " + piece + "\n";
            if (end == std::string::npos) {
                break;
            }
            start = end + 1;
        }
    }
    return out;
}

} // namespace mkb
