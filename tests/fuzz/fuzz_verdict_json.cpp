// libFuzzer target: the grader's verdict JSON through verdictFromJson, and every verdict it accepts written back with
// verdictToJson and read again (what the grader client and the store do with it).
#include "core/grading/verdict_json.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

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
