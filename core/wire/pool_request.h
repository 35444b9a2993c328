// The pooled correctness draws (docs/grader-protocol.md "Pooled correctness draws"): what one pool request carries,
// its request line, and the reply parsed into a PoolResult.
#pragma once

#include "core/records/problem.h"
#include "core/records/verdict.h"
#include "core/util/result.h"
#include "core/vocabulary/grade_settings.h"
#include "core/wire/retime_request.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// 1 to 8 kernels of one problem, checked on the same correctness draws in one child: each draw's reference and
/// float64 anchor are computed once for all of them. Only the settings' correctness draws and timeout matter.
struct PoolRequest {
    std::filesystem::path problemPath; // absolute
    std::string problemMetaJson;       // as in GradeRequest
    std::string device = "cuda:0";
    std::vector<RetimeKernel> kernels; // labels unique; no slowdown
    GradeSettings settings;
};

/// One kernel's outcome. `complete`: all of its draws were reported, or it failed on its own, and `verdict` (a
/// correctness-only verdict: correctDraws, failedDraws, the first mismatch or its error) says how. Not complete: the
/// pool stopped before it was done (a timeout, a crash, another kernel's broken CUDA context), and no verdict.
struct PooledKernel {
    std::string label;
    std::string dsl;
    std::string sha256;
    bool complete = false;
    std::optional<Verdict> verdict;
};

struct PoolResult {
    bool ok = false;   // every kernel complete
    std::string error; // why the pool stopped early ("" when it did not)
    int draws = 0;
    double seconds = 0;
    std::vector<PooledKernel> kernels; // in the request's order
};

/// The one way to start a pool request (kernels still to add): the problem's file and its MKB_META from `problem`.
PoolRequest makePoolRequest(const Problem& problem, const std::string& device, const GradeSettings& settings);

/// The request line (no trailing newline): {"type":"pool", ...}.
std::string poolRequestJson(const PoolRequest& request, const std::string& id);

/// Parses the "pool" object of the grader's reply; the error names the field that is missing or mistyped.
Result<PoolResult> poolResultFromJson(const std::string& json);

} // namespace mkb
