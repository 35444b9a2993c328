// A problem of the catalog as plain data: where it lives, what it is called, its content fingerprint and MKB_META.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// Thresholds of DESIGN §5.3 for problems judged by quantization metrics.
struct QuantThresholds {
    double minCosine = 0.95;
    double maxRelativeL1 = 0.05;
    double maxRmse = 0.1;
};

/// What MKB_META adds to the MetaKernelBench format; every field is optional in the file.
struct ProblemMeta {
    std::vector<std::string> tags;        // structural categories: "reduction", "gemm_epilogue", ...
    std::optional<QuantThresholds> quant; // set when the problem is judged by quantization metrics
    std::string outliersJson;             // "" = grader default; otherwise the JSON value of MKB_META["outliers"]
    std::optional<double> flops;          // roofline overrides
    std::optional<double> bytes;
    std::vector<int> insensitiveInputs; // inputs the suite check may find without effect (MKB_META["insensitive"])
    std::string category;  // KernelBench-X category (MKB_META["category"]); "" = uncategorised (outside suites)
    std::string precision; // precision variant (MKB_META["precision"]): "fp16", "w8a8", ...; "" = not stated
    std::vector<int> inplaceOutputs; // inputs written in place as outputs (MKB_META["inplace_outputs"]), compared after
                                     // the call instead of required unchanged
    std::string origin;              // where an imported problem came from (MKB_META["origin"]); "" = not stated
    // DSL id -> why no solution in that DSL can exist (MKB_META["no_solution"]); the suite table shows the reason
    std::map<std::string, std::string> noSolution;
};

struct Problem {
    std::string suite;          // the suite root's name (its folder name), e.g. "problems"
    int number = 0;             // the two-digit catalog number NN, unique across the suite
    std::string slug;           // e.g. "paged_gqa_decode"
    std::string family;         // e.g. "attention"
    std::string title;          // the one-line module docstring
    std::filesystem::path path; // absolute path of the .py file
    std::string source;         // the file's text, exactly as read
    std::string fingerprint;    // SHA-256 of the source bytes: changes whenever the problem changes
    ProblemMeta meta;

    /// "p07": the prefix used in coordinates.
    std::string code() const;
    /// "attention/07_paged_gqa_decode": how users name a problem.
    std::string name() const;
};

} // namespace mkb
