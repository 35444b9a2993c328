// Derived names of a problem.
#include "core/records/problem.h"

#include <cstdio>

namespace mkb {

std::string Problem::code() const {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "p%02d", number);
    return buffer;
}

std::string Problem::name() const {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%02d", number);
    return family + "/" + buffer + "_" + slug;
}

} // namespace mkb
