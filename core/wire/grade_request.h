// What one grade request carries: problem, kernel, DSL descriptor, device, settings (DESIGN §5.1 defaults) and peaks.
#pragma once

#include "core/records/problem.h"
#include "core/util/result.h"
#include "core/vocabulary/grade_settings.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

struct GradeRequest {
    std::filesystem::path problemPath; // absolute
    std::filesystem::path kernelPath;  // absolute
    std::string dsl;                   // "triton", "cuda", ...
    std::string dslDescriptorJson;     // contents of resources/dsls/<dsl>.json
    std::string device = "cuda:0";     // "cuda:N" or "cpu"
    GradeSettings settings;
    std::string peaksJson;       // {"copy_gbps":..,"tflops":{..}} or "" when the device was never probed
    std::string problemMetaJson; // MKB_META as the grader reads it, or "" when the problem has none
    // mkb calibrate's A/B control only: grade a copy slowed by this fraction of its own warm-up median (a
    // device-side delay after each call, inside the timed region, as re-timing adds it); 0 = the kernel as it is.
    double slowdown = 0;
    // The DSL (and its descriptor) of the client's next grading on this device, if it knows it: the grader forks that
    // grading's child as this one starts, to warm up beside its untimed stages (docs/grader-protocol.md, "next").
    std::string nextDsl;
    std::string nextDslDescriptorJson;
};

/// The one way to build a grade request: the problem's file (made absolute) and its MKB_META (quant and outlier
/// settings) always come from `problem`, so no caller can forget them.
GradeRequest makeGradeRequest(const Problem& problem, const std::filesystem::path& kernelPath, const std::string& dsl,
                              const std::string& dslDescriptorJson, const std::string& device,
                              const GradeSettings& settings, const std::string& peaksJson = "");

/// The descriptor of a DSL: <dir>/<dslId>.json from the extra folders first, then resources/dsls/.
/// The error names the DSL, the folders searched and the DSLs that do exist.
Result<std::string> loadDslDescriptor(const std::string& dslId, const std::vector<std::filesystem::path>& extraDirs);

/// The problem's MKB_META as JSON for the request's "problem_meta" ("" when it has nothing to say).
std::string problemMetaJson(const ProblemMeta& meta);

/// The settings as the protocol's "settings" object, shared by the grade and retime request lines.
nlohmann::ordered_json gradeSettingsJson(const GradeSettings& settings);

/// The request line (no trailing newline) for the grader protocol.
std::string gradeRequestJson(const GradeRequest& request, const std::string& id);

/// Checks "cpu", "cuda" or "cuda:N"; the error says what is accepted.
Status validateDevice(const std::string& device);

/// The GPU index of "cuda:N" ("cuda" is 0), or nothing for "cpu".
std::optional<int> cudaDeviceIndex(const std::string& device);

} // namespace mkb
