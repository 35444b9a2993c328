// Naming and parsing the implementation boundaries; the boundary's mark on the recorded grader fingerprint.
#include "core/vocabulary/boundary.h"

namespace mkb {

Result<std::string> parseBoundary(std::string_view text, std::string_view where) {
    if (text == kBoundaryMkb || text == kBoundaryStrict) {
        return std::string(text);
    }
    return makeError(std::string(where) + " '" + std::string(text) +
                     "' is not an implementation boundary; use mkb (MetaKernelBench's rule, the default) or strict "
                     "(all arithmetic in the DSL)");
}

std::string boundaryOrLegacy(std::string_view boundary) {
    return boundary.empty() ? std::string(kBoundaryLegacy) : std::string(boundary);
}

std::string fingerprintWithBoundary(const std::string& graderFingerprint, std::string_view boundary) {
    if (graderFingerprint.empty()) {
        return "";
    }
    return graderFingerprint + "+" + boundaryOrLegacy(boundary);
}

std::string graderOfFingerprint(const std::string& recordedFingerprint) {
    return recordedFingerprint.substr(0, recordedFingerprint.find('+'));
}

} // namespace mkb
