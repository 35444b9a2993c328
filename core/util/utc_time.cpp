// The current time in UTC as text (see utc_time.h).
#include "core/util/utc_time.h"

#include <ctime>

namespace mkb {
namespace {

std::string utcNowFormatted(const char* format) {
    const std::time_t now = std::time(nullptr);
    std::tm parts{};
    ::gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof text, format, &parts);
    return text;
}

} // namespace

std::string utcNowIso() {
    return utcNowFormatted("%Y-%m-%dT%H:%M:%SZ");
}

std::string utcNowCompact() {
    return utcNowFormatted("%Y%m%dT%H%M%SZ");
}

} // namespace mkb
