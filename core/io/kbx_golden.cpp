// KernelBench-X's golden timing files, read per GPU folder and op file.
#include "core/io/kbx_golden.h"

#include "core/util/json_input.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <system_error>

namespace mkb {
namespace {

/// The input size with every whole-valued float written as an integer, so that 1.0 and 1 name the same input
/// whichever writer made the file (Python keeps 1.0, other JSON writers drop the ".0").
nlohmann::json canonicalSize(nlohmann::json size) {
    if (size.is_array()) {
        for (nlohmann::json& part : size) {
            part = canonicalSize(std::move(part));
        }
    } else if (size.is_number_float()) {
        const double value = size.get<double>();
        if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) < 9.0e15) {
            return static_cast<std::int64_t>(value);
        }
    }
    return size;
}

Status readOpFile(const std::filesystem::path& file, const std::string& gpu, std::vector<analysis::GoldenTiming>& out) {
    auto parsed = readJsonFile(file);
    if (!parsed) {
        return parsed.error();
    }
    const nlohmann::json* entries = &*parsed;
    std::string task;
    if (parsed->is_object()) {
        const auto results = parsed->find("results");
        if (results == parsed->end()) {
            return makeError(file.string() + ": an object without \"results\" (expected a list of timings, or "
                                             "{\"task\", \"results\": [...]})");
        }
        entries = &*results;
        if (const auto named = parsed->find("task"); named != parsed->end() && named->is_string()) {
            task = named->get<std::string>();
        }
    }
    if (!entries->is_array()) {
        return makeError(file.string() + ": the timings are not a list");
    }
    const std::string op = file.stem().string();
    for (std::size_t i = 0; i < entries->size(); ++i) {
        const nlohmann::json& entry = (*entries)[i];
        const std::string where = file.string() + ": entry " + std::to_string(i + 1);
        if (!entry.is_object() || !entry.contains("input_size")) {
            return makeError(where + " has no input_size");
        }
        const auto ms = entry.find("ms");
        if (ms == entry.end() || !ms->is_number() || !std::isfinite(ms->get<double>()) || ms->get<double>() <= 0) {
            return makeError(where + " has no positive, finite ms");
        }
        out.push_back({gpu, op, task, canonicalSize(entry["input_size"]).dump(), ms->get<double>()});
    }
    return Ok{};
}

} // namespace

Result<std::vector<analysis::GoldenTiming>> readGoldenTimings(const std::filesystem::path& root) {
    std::error_code error;
    if (!std::filesystem::is_directory(root, error)) {
        return makeError(root.string() + ": not a folder (give KernelBench-X's metrics/golden_results, or a copy "
                                         "with this GPU's folder from bench/kbx_golden_timing.py)");
    }
    std::vector<std::filesystem::path> gpus;
    for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
        if (entry.is_directory()) {
            gpus.push_back(entry.path());
        }
    }
    if (error) {
        return makeError(root.string() + ": cannot list it (" + error.message() + ")");
    }
    if (gpus.empty()) {
        return makeError(root.string() + ": no GPU folder in it (expected e.g. 4090/, h800/, each of <op>.json)");
    }
    std::sort(gpus.begin(), gpus.end());
    std::vector<analysis::GoldenTiming> timings;
    for (const std::filesystem::path& folder : gpus) {
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
            const std::string name = entry.path().filename().string();
            if (entry.is_regular_file() && entry.path().extension() == ".json" && name.rfind('_', 0) != 0) {
                files.push_back(entry.path());
            }
        }
        std::sort(files.begin(), files.end());
        for (const std::filesystem::path& file : files) {
            if (Status read = readOpFile(file, folder.filename().string(), timings); !read) {
                return read.error();
            }
        }
    }
    return timings;
}

} // namespace mkb
