// The human grading report: what a model (or a person) reads after one evaluation of a kernel.py.
#pragma once

#include "core/records/verdict.h"

#include <string>

namespace mkb {

/// Who was graded, for the report's heading; any field may be empty.
struct ReportHeading {
    std::string problem; // "attention/07_paged_gqa_decode"
    std::string dsl;
    std::string kernel; // the kernel file
    std::string device;
};

/// Multi-line plain text: outcome, stage, import, correctness n/N, first mismatch, kernel and eager medians,
/// speedup, compliance, outliers, quantization, roofline and throttling. Lines for missing data are left out.
std::string verdictReport(const Verdict& verdict, const ReportHeading& heading = {});

} // namespace mkb
