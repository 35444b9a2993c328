// Building grade requests: DSL descriptor lookup, MKB_META and settings as protocol JSON.
#include "core/wire/grade_request.h"

#include "core/util/json_input.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace mkb {
namespace {

bool isPlainIdentifier(const std::string& text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

} // namespace

Result<std::string> loadDslDescriptor(const std::string& dslId, const std::vector<std::filesystem::path>& extraDirs) {
    std::vector<std::filesystem::path> dirs = extraDirs;
    dirs.push_back(resourcesDir() / "dsls");
    std::string searched;
    for (const auto& dir : dirs) {
        searched += (searched.empty() ? "" : ", ") + dir.string();
    }
    if (!isPlainIdentifier(dslId)) {
        return makeError("'" + dslId +
                         "' is not a DSL id (lowercase letters, digits, '_' or '-'); see resources/dsls/");
    }
    std::error_code ec;
    for (const auto& dir : dirs) {
        std::filesystem::path file = dir / (dslId + ".json");
        if (!std::filesystem::is_regular_file(file, ec)) {
            continue;
        }
        auto text = readFile(file);
        if (!text) {
            return text.error();
        }
        auto parsed = parseJsonInputOrDiscarded<nlohmann::json>(*text);
        if (parsed.is_discarded() || !parsed.is_object()) {
            return makeError("DSL descriptor " + file.string() + " is not a JSON object; fix or remove it");
        }
        if (parsed.contains("id") && parsed["id"] != dslId) {
            return makeError("DSL descriptor " + file.string() + " says id " + parsed["id"].dump() +
                             " but is named for '" + dslId + "'; make them agree");
        }
        return *text;
    }
    std::set<std::string> known;
    for (const auto& dir : dirs) {
        for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
             it.increment(ec)) {
            if (it->path().extension() == ".json") {
                known.insert(it->path().stem().string());
            }
        }
    }
    std::string knownList;
    for (const auto& id : known) {
        knownList += (knownList.empty() ? "" : ", ") + id;
    }
    return makeError("unknown DSL '" + dslId + "': no " + dslId + ".json in " + searched +
                     (knownList.empty() ? " (no DSLs found there)" : " (known: " + knownList + ")"));
}

GradeRequest makeGradeRequest(const Problem& problem, const std::filesystem::path& kernelPath, const std::string& dsl,
                              const std::string& dslDescriptorJson, const std::string& device,
                              const GradeSettings& settings, const std::string& peaksJson) {
    GradeRequest request;
    request.problemPath = std::filesystem::absolute(problem.path);
    request.kernelPath = kernelPath;
    request.dsl = dsl;
    request.dslDescriptorJson = dslDescriptorJson;
    request.device = device;
    request.settings = settings;
    request.peaksJson = peaksJson;
    request.problemMetaJson = problemMetaJson(problem.meta);
    return request;
}

std::string problemMetaJson(const ProblemMeta& meta) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    if (!meta.tags.empty()) {
        object["tags"] = meta.tags;
    }
    if (meta.quant) {
        object["quant"] = {{"min_cosine", meta.quant->minCosine},
                           {"max_relative_l1", meta.quant->maxRelativeL1},
                           {"max_rmse", meta.quant->maxRmse}};
    }
    if (!meta.outliersJson.empty()) {
        // The grader takes false or a list of input positions here; any richer form it reads from the file itself.
        auto outliers = nlohmann::ordered_json::parse(meta.outliersJson, nullptr, false);
        if (!outliers.is_discarded() && (outliers == false || outliers.is_array())) {
            object["outliers"] = outliers;
        } else if (!outliers.is_discarded() && outliers == "off") {
            object["outliers"] = false;
        }
    }
    if (meta.flops) {
        object["flops"] = *meta.flops;
    }
    if (meta.bytes) {
        object["bytes"] = *meta.bytes;
    }
    return object.empty() ? "" : object.dump();
}

nlohmann::ordered_json gradeSettingsJson(const GradeSettings& s) {
    return {{"correctness_draws", s.correctnessDraws},
            {"warmup_draws", s.warmupDraws},
            {"timing_draws", s.timingDraws},
            {"recheck_draws", s.recheckDraws},
            {"timeout_s", s.timeoutS},
            {"max_kernel_bytes", s.maxKernelBytes},
            {"outliers", s.outliers},
            {"outlier_p", s.outlierP},
            {"outlier_scale", s.outlierScale},
            {"kernel_only_timing", s.kernelOnlyTiming},
            {"boundary", s.boundary}};
}

std::string gradeRequestJson(const GradeRequest& request, const std::string& id) {
    nlohmann::ordered_json line;
    line["type"] = "grade";
    line["id"] = id;
    line["problem"] = request.problemPath.string();
    line["kernel"] = request.kernelPath.string();
    line["dsl"] = request.dsl;
    auto descriptor = nlohmann::ordered_json::parse(request.dslDescriptorJson, nullptr, false);
    line["dsl_descriptor"] = descriptor.is_discarded() ? nlohmann::ordered_json::object() : descriptor;
    line["device"] = request.device;
    line["settings"] = gradeSettingsJson(request.settings);
    if (!request.peaksJson.empty()) {
        auto peaks = nlohmann::ordered_json::parse(request.peaksJson, nullptr, false);
        if (!peaks.is_discarded()) {
            line["peaks"] = peaks;
        }
    }
    if (!request.problemMetaJson.empty()) {
        auto meta = nlohmann::ordered_json::parse(request.problemMetaJson, nullptr, false);
        if (!meta.is_discarded()) {
            line["problem_meta"] = meta;
        }
    }
    if (request.slowdown > 0) {
        line["slowdown"] = request.slowdown;
    }
    if (!request.nextDsl.empty()) {
        auto nextDescriptor = nlohmann::ordered_json::parse(request.nextDslDescriptorJson, nullptr, false);
        line["next"] = {
            {"dsl", request.nextDsl},
            {"dsl_descriptor", nextDescriptor.is_object() ? nextDescriptor : nlohmann::ordered_json::object()}};
    }
    return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status validateDevice(const std::string& device) {
    if (device == "cpu" || cudaDeviceIndex(device)) {
        return Ok{};
    }
    return makeError("device '" + device + "' is not understood; use cpu, cuda or cuda:N (e.g. cuda:0)");
}

std::optional<int> cudaDeviceIndex(const std::string& device) {
    if (device == "cuda") {
        return 0;
    }
    if (!startsWith(device, "cuda:") || device.size() == 5 || device.size() > 8) {
        return std::nullopt;
    }
    int index = 0;
    for (std::size_t i = 5; i < device.size(); ++i) {
        if (device[i] < '0' || device[i] > '9') {
            return std::nullopt;
        }
        index = index * 10 + (device[i] - '0');
    }
    return index;
}

} // namespace mkb
