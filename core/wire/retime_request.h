// What one paired re-timing request carries (DESIGN §5.5), its request line, and the reply parsed into a
// RetimingResult.
#pragma once

#include "core/records/retiming.h"
#include "core/util/result.h"
#include "core/wire/grade_request.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// One kernel of a re-timing. slowdown > 0 makes the grader add a device-side delay of that fraction of the
/// kernel's own median to every call (calibration's A/B control); 0 times the kernel as it is.
struct RetimeKernel {
    std::string label;                // "source", "base", "skill"; unique within the request
    std::filesystem::path kernelPath; // absolute
    std::string dsl;
    std::string dslDescriptorJson;
    double slowdown = 0;
};

/// The adaptive stop of DESIGN §5.5: at least minRounds, then stop once every pairwise ratio's 95% bootstrap CI is
/// within ±ciHalfwidth of its ratio, or at maxRounds, or after maxSeconds.
struct RetimeSettings {
    int minRounds = 100;
    int maxRounds = 2000;
    double maxSeconds = 60;
    double ciHalfwidth = 0.01;
};

struct RetimeRequest {
    std::filesystem::path problemPath; // absolute
    std::string problemMetaJson;       // as in GradeRequest
    std::string device = "cuda:0";
    std::vector<RetimeKernel> kernels; // 2 to 4
    GradeSettings settings;            // correctness and timeout settings of the contract
    RetimeSettings retime;
    std::optional<std::uint64_t> seed; // the first round's seed, for reproducible tests; fresh when unset
};

/// The one way to start a re-timing request (kernels still to add): the problem's file (made absolute) and its
/// MKB_META always come from `problem`, as for makeGradeRequest.
RetimeRequest makeRetimeRequest(const Problem& problem, const std::string& device, const GradeSettings& settings,
                                const RetimeSettings& retime);

/// What every several-kernel request line carries (retime, pool): type, id, problem, problem_meta, device, kernels and
/// settings.
nlohmann::ordered_json severalKernelsJson(const char* type, const std::string& id,
                                          const std::filesystem::path& problemPath, const std::string& problemMetaJson,
                                          const std::string& device, const std::vector<RetimeKernel>& kernels,
                                          const GradeSettings& settings);

/// The request line (no trailing newline) for the grader protocol: {"type":"retime", ...}.
std::string retimeRequestJson(const RetimeRequest& request, const std::string& id);

/// Parses the "retime" object of the grader's reply into a RetimingResult (json keeps the text verbatim).
/// The error names the field that is missing or has the wrong type.
Result<RetimingResult> retimingResultFromJson(const std::string& json);

} // namespace mkb
