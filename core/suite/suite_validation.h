// The grader's validation of one problem (docs/grader-protocol.md, "validate"): the request, its reply as plain data,
// and the call through a grader session that holds the device's lock.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/records/problem.h"
#include "core/util/result.h"
#include "core/vocabulary/grade_settings.h"
#include "core/wire/grade_request.h"

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// What redrawing one input alone did to the reference's output (the grader's "validation.inputs" entry).
struct InputSensitivity {
    int index = 0;
    std::string name;        // the reference's parameter name
    std::string description; // "input 2 (seq_lens, int32[8])"
    bool tensor = false;     // only tensors are redrawn
    std::optional<bool> changed;
    bool exempt = false; // listed in MKB_META["insensitive"]
    std::optional<double> maxDiff;
    std::optional<double> allowance;
    std::string note;    // "output changed, max |diff| 0.83 > allowance 0.004"
    std::string skipped; // why this input was not checked ("its float64 anchor needs 28.8 GiB and ...")
    bool error = false;  // the reference failed with this input redrawn alone ("cannot be redrawn alone")
};

/// The grader's validation of one problem (docs/grader-protocol.md, "validate").
struct ProblemValidation {
    bool clean = false;
    std::string error;                // "" unless validation could not finish
    bool infrastructureError = false; // the grader session failed (crash, silence, refusal), not the problem
    std::optional<bool> deterministic;
    std::string determinismNote;
    std::optional<bool> nearZero;
    std::vector<std::string> nearZeroOutputs;
    std::optional<bool> sensitive;
    std::vector<InputSensitivity> inputs;
    std::optional<double> eagerMedianMs;
    std::optional<double> eagerIqrMs;
    double eagerTargetMs = kEagerTargetMs;
    std::optional<bool> eagerOk;
    std::vector<std::string> issues; // one line each, as the grader worded them
    std::string deviceName;
    double seconds = 0;
    std::string json; // the validation object as the grader wrote it
};

/// Parses the "validation" object of a validation reply; strict on "clean" and "issues", tolerant otherwise.
Result<ProblemValidation> validationFromJson(const std::string& objectText);

/// A validation that could not be obtained from the grader: infrastructureError set, the message as error and issue.
ProblemValidation failedValidation(const std::string& message);

struct ValidateRequest {
    std::filesystem::path problemPath; // absolute
    std::string device = "cuda:0";
    GradeSettings settings;                // warmupDraws, timingDraws and timeoutS apply
    double eagerTargetMs = kEagerTargetMs; // the eager median a problem must reach
    std::string problemMetaJson;           // as for grading ("" when none)
};

/// The request line (no trailing newline).
std::string validateRequestJson(const ValidateRequest& request, const std::string& id);

/// Sends one validate request through the session, holding the device's GpuLock when lockDevice. Never fails as a
/// call: session failures come back as failedValidation(...).
ProblemValidation validateProblem(GraderProcess& grader, const ValidateRequest& request, bool lockDevice,
                                  const std::atomic<bool>* cancel = nullptr);

/// The validate request for `problem`: its file (made absolute) and MKB_META always come from the problem.
ValidateRequest makeValidateRequest(const Problem& problem, const std::string& device, const GradeSettings& settings,
                                    double eagerTargetMs);

/// The first line of a grader message, cut at `limit` characters: how suite issues quote the grader.
std::string shortGraderMessage(const std::string& text, std::size_t limit = 300);

} // namespace mkb
