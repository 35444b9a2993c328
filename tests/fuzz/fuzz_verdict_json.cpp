// libFuzzer target: the grader's verdict JSON through verdictFromJson, and every verdict it accepts written back with
// verdictToJson and read again (what the grader client and the store do with it).
#include "core/wire/verdict_json.h"
#include "json_mutator.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t maxSize);

namespace {
// clang-format off
const std::vector<std::string> kVerdictKeys = {
    "imported", "correct", "passed", "speedup_vs_eager", "stage", "error", "infrastructure_error", "timed_out",
    "correct_draws", "total_draws", "failed_draws", "mismatch", "compliant", "compliance_rule", "kernel_median_ms",
    "eager_median_ms", "kernel_iqr_ms", "throttled", "outliers_correct", "quant", "cosine", "relative_l1", "rmse",
    "roofline", "bytes", "flops", "achieved_gbps", "achieved_tflops", "iou", "mfu", "eval_seconds",
    "outlier_mismatch", "recheck_correct", "log", "device_name"};
// clang-format on
} // namespace

/// Half the mutations change one JSON value of the verdict (json_mutator.h), half are libFuzzer's byte mutations.
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t maxSize,
                                               unsigned int seed) {
    std::minstd_rand rng(seed);
    if (rng() % 2 == 0) {
        std::string text(reinterpret_cast<const char*>(data), size);
        if (mkbfuzz::mutateJsonText(text, rng, kVerdictKeys) && text.size() <= maxSize) {
            std::memcpy(data, text.data(), text.size());
            return text.size();
        }
    }
    return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)mkb::withNonFiniteAsNull(text);
    auto verdict = mkb::verdictFromJson(text);
    if (!verdict) {
        return 0;
    }
    // A verdict the parser accepted must survive its own writer: the store keeps verdictToJson's text.
    const std::string written = mkb::verdictToJson(*verdict);
    auto again = mkb::verdictFromJson(written);
    if (!again || again->imported != verdict->imported || again->correct != verdict->correct ||
        again->passed != verdict->passed || again->speedupVsEager != verdict->speedupVsEager) {
        std::fprintf(stderr, "verdict did not survive verdictToJson -> verdictFromJson:\n  in:  %s\n  out: %s\n  %s\n",
                     text.c_str(), written.c_str(), again ? "rewards differ" : again.error().message.c_str());
        std::abort();
    }
    return 0;
}
