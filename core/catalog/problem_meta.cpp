// Validation and reading of MKB_META: tags, KernelBench-X category, quant thresholds, outlier settings, roofline
// overrides and the reasons a DSL can have no solution.
#include "core/catalog/problem_meta.h"

#include "core/catalog/dsl_registry.h"
#include "core/catalog/python_source.h"

#include <algorithm>

namespace mkb {
namespace {

std::string at(int line, const std::string& message) {
    return "line " + std::to_string(line) + ": " + message;
}

void readQuant(const nlohmann::json& value, int line, ProblemMeta& meta, std::vector<std::string>& problems) {
    if (value.is_boolean() || value.is_null()) {
        if (value.is_boolean() && value.get<bool>()) {
            meta.quant = QuantThresholds{};
        }
        return;
    }
    if (!value.is_object()) {
        problems.push_back(at(line, "'quant' must be True, False or a dict of min_cosine/max_relative_l1/max_rmse"));
        return;
    }
    QuantThresholds thresholds;
    for (const auto& [key, threshold] : value.items()) {
        double* target = key == "min_cosine"        ? &thresholds.minCosine
                         : key == "max_relative_l1" ? &thresholds.maxRelativeL1
                         : key == "max_rmse"        ? &thresholds.maxRmse
                                                    : nullptr;
        if (!target) {
            problems.push_back(
                at(line, "unknown key 'quant." + key + "' (known: min_cosine, max_relative_l1, max_rmse)"));
            continue;
        }
        if (!threshold.is_number() || threshold.get<double>() < 0) {
            problems.push_back(at(line, "'quant." + key + "' must be a non-negative number"));
            continue;
        }
        *target = threshold.get<double>();
    }
    if (thresholds.minCosine > 1.0) {
        problems.push_back(at(line, "'quant.min_cosine' must be at most 1"));
    }
    meta.quant = thresholds;
}

void readOutliers(const nlohmann::json& value, int line, ProblemMeta& meta, std::vector<std::string>& problems) {
    if (value.is_boolean() || (value.is_string() && value.get<std::string>() == "off")) {
        meta.outliersJson = value.dump();
        return;
    }
    if (!value.is_object()) {
        problems.push_back(at(line, "'outliers' must be False, \"off\", True or a dict like "
                                    "{\"inputs\": [0, 2], \"p\": 0.001, \"scale\": 50}"));
        return;
    }
    for (const auto& [key, setting] : value.items()) {
        if (key == "inputs") {
            bool good = setting.is_array() && std::all_of(setting.begin(), setting.end(), [](const nlohmann::json& i) {
                            return i.is_number_integer() && i.get<long long>() >= 0;
                        });
            if (!good) {
                problems.push_back(at(line, "'outliers.inputs' must be a list of input positions (0, 1, ...)"));
            }
        } else if (key == "p") {
            if (!setting.is_number() || setting.get<double>() <= 0 || setting.get<double>() > 1) {
                problems.push_back(at(line, "'outliers.p' must be a fraction in (0, 1]"));
            }
        } else if (key == "scale") {
            if (!setting.is_number() || setting.get<double>() <= 0) {
                problems.push_back(at(line, "'outliers.scale' must be a positive number"));
            }
        } else {
            problems.push_back(at(line, "unknown key 'outliers." + key + "' (known: inputs, p, scale)"));
        }
    }
    meta.outliersJson = value.dump();
}

std::string joinedWith(const std::vector<std::string>& words, const char* separator) {
    std::string text;
    for (const std::string& word : words) {
        text += (text.empty() ? "" : separator) + word;
    }
    return text;
}

void readCategory(const nlohmann::json& value, int line, ProblemMeta& meta, std::vector<std::string>& problems) {
    const std::vector<std::string>& allowed = kernelBenchXCategories();
    if (value.is_string() && std::find(allowed.begin(), allowed.end(), value.get<std::string>()) != allowed.end()) {
        meta.category = value.get<std::string>();
        return;
    }
    const std::string shown = value.is_string() ? "'" + value.get<std::string>() + "'" : value.dump();
    problems.push_back(at(line, "'category' " + shown + " is not a KernelBench-X category; use one of " +
                                    joinedWith(allowed, ", ") + " (or leave 'category' out: uncategorised)"));
}

void readPrecision(const nlohmann::json& value, int line, ProblemMeta& meta, std::vector<std::string>& problems) {
    const std::vector<std::string>& allowed = precisionVariants();
    if (value.is_string() && std::find(allowed.begin(), allowed.end(), value.get<std::string>()) != allowed.end()) {
        meta.precision = value.get<std::string>();
        return;
    }
    problems.push_back(at(line, "'precision' " + value.dump() + " is not a precision variant; use one of " +
                                    joinedWith(allowed, ", ")));
}

/// MKB_META["no_solution"]: {dsl: reason}, each DSL one the grader knows and each reason a non-empty sentence.
void readNoSolution(const nlohmann::json& value, int line, ProblemMeta& meta, std::vector<std::string>& problems) {
    const std::vector<std::string>& dsls = knownDslAdapters();
    if (!value.is_object() || value.empty()) {
        problems.push_back(at(line, "'no_solution' must be a dict from DSL name to the reason no solution in it can "
                                    "exist, e.g. {\"pallas\": \"needs a data-dependent scatter\"}"));
        return;
    }
    for (const auto& [dsl, reason] : value.items()) {
        if (std::find(dsls.begin(), dsls.end(), dsl) == dsls.end()) {
            problems.push_back(
                at(line, "'no_solution." + dsl + "' names no DSL; use one of " + joinedWith(dsls, ", ")));
            continue;
        }
        const bool blank =
            !reason.is_string() || reason.get<std::string>().find_first_not_of(" \t\r\n") == std::string::npos;
        if (blank) {
            problems.push_back(at(line, "'no_solution." + dsl + "' must be a non-empty string saying why no " + dsl +
                                            " solution can exist (the primitive " + dsl + " lacks)"));
            continue;
        }
        meta.noSolution[dsl] = reason.get<std::string>();
    }
}

/// A list of distinct input positions; `words` says what the list means when it is not one.
void readPositions(const nlohmann::json& value, int line, const std::string& words, std::vector<int>& positions,
                   std::vector<std::string>& problems) {
    std::vector<int> read;
    bool good = value.is_array();
    for (const nlohmann::json& position : good ? value : nlohmann::json::array()) {
        if (!position.is_number_integer() || position.get<long long>() < 0 || position.get<long long>() > 1 << 20 ||
            std::find(read.begin(), read.end(), position.get<int>()) != read.end()) {
            good = false;
            break;
        }
        read.push_back(position.get<int>());
    }
    if (!good) {
        problems.push_back(at(line, words));
        return;
    }
    positions = std::move(read);
}

} // namespace

const std::vector<std::string>& precisionVariants() {
    static const std::vector<std::string> variants = {"fp32", "fp16", "bf16", "int8", "w8a8", "w4a16"};
    return variants;
}

const std::vector<std::string>& knownMetaKeys() {
    static const std::vector<std::string> keys = {"tags",       "category",    "quant",     "outliers",        "flops",
                                                  "bytes",      "insensitive", "precision", "inplace_outputs", "origin",
                                                  "no_solution"};
    return keys;
}

const std::vector<std::string>& kernelBenchXCategories() {
    static const std::vector<std::string> categories = {
        "Activation",    "Convolution", "Fusion",  "Index",        "LinearAlgebra", "Loss",   "MatrixMultiply", "Math",
        "Normalization", "Optimizer",   "Pooling", "Quantization", "Random",        "Reduce", "SpatialOps"};
    return categories;
}

std::string categoryOrUncategorised(const std::string& category) {
    return category.empty() ? "uncategorised" : category;
}

std::string categoryFromSource(std::string_view source) {
    Result<std::vector<PythonLogicalLine>> lines = tokenizePython(source);
    if (!lines) {
        return {};
    }
    const PythonModuleFacts facts = scanPythonModule(*lines);
    if (!facts.hasMeta) {
        return {};
    }
    Result<nlohmann::json> literal = parsePythonLiteral(facts.metaValueTokens, 0, facts.metaValueTokens.size());
    if (!literal || !literal->is_object() || !literal->contains("category")) {
        return {};
    }
    ProblemMeta meta;
    std::vector<std::string> ignored;
    readCategory((*literal)["category"], facts.metaLine, meta, ignored);
    return meta.category;
}

std::vector<std::string> readProblemMeta(const nlohmann::json& value, int line, ProblemMeta& meta) {
    std::vector<std::string> problems;
    if (!value.is_object()) {
        problems.push_back(at(line, "must be a dict, e.g. {\"tags\": [\"reduction\"]}"));
        return problems;
    }
    for (const auto& [key, entry] : value.items()) {
        if (key == "tags") {
            if (!entry.is_array() ||
                !std::all_of(entry.begin(), entry.end(), [](const nlohmann::json& t) { return t.is_string(); })) {
                problems.push_back(at(line, "'tags' must be a list of strings"));
                continue;
            }
            for (const nlohmann::json& tag : entry) {
                meta.tags.push_back(tag.get<std::string>());
            }
        } else if (key == "category") {
            readCategory(entry, line, meta, problems);
        } else if (key == "quant") {
            readQuant(entry, line, meta, problems);
        } else if (key == "outliers") {
            readOutliers(entry, line, meta, problems);
        } else if (key == "flops" || key == "bytes") {
            if (entry.is_null()) {
                continue;
            }
            if (!entry.is_number() || entry.get<double>() < 0) {
                problems.push_back(at(line, "'" + key + "' must be a non-negative number"));
                continue;
            }
            (key == "flops" ? meta.flops : meta.bytes) = entry.get<double>();
        } else if (key == "precision") {
            readPrecision(entry, line, meta, problems);
        } else if (key == "inplace_outputs") {
            readPositions(entry, line,
                          "'inplace_outputs' must be a list of input positions (0, 1, ...) that the "
                          "problem writes in place as outputs, each once",
                          meta.inplaceOutputs, problems);
        } else if (key == "origin") {
            if (!entry.is_string() || entry.get<std::string>().empty()) {
                problems.push_back(at(line, "'origin' must be a non-empty string naming where the problem came from"));
                continue;
            }
            meta.origin = entry.get<std::string>();
        } else if (key == "no_solution") {
            readNoSolution(entry, line, meta, problems);
        } else if (key == "insensitive") {
            bool good = entry.is_array() && std::all_of(entry.begin(), entry.end(), [](const nlohmann::json& i) {
                            return i.is_number_integer() && i.get<long long>() >= 0;
                        });
            if (!good) {
                problems.push_back(at(line, "'insensitive' must be a list of input positions (0, 1, ...) whose "
                                            "re-drawing may leave the output unchanged"));
                continue;
            }
            for (const nlohmann::json& position : entry) {
                meta.insensitiveInputs.push_back(position.get<int>());
            }
        } else {
            problems.push_back(
                at(line, "unknown key '" + key + "' (known: " + joinedWith(knownMetaKeys(), ", ") + ")"));
        }
    }
    return problems;
}

} // namespace mkb
