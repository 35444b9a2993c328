// The current time in UTC as text: the ISO 8601 stamp every stored record and report carries, and a compact form
// for names.
#pragma once

#include <string>

namespace mkb {

/// Now in UTC as "YYYY-MM-DDTHH:MM:SSZ".
std::string utcNowIso();

/// Now in UTC as "YYYYMMDDTHHMMSSZ", for file and batch names.
std::string utcNowCompact();

} // namespace mkb
