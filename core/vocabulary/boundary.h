// The implementation boundary a verdict was graded under (DESIGN §5.2): its names, parsing, and its mark on
// fingerprints.
#pragma once

#include "core/util/result.h"

#include <string>
#include <string_view>

namespace mkb {

/// MetaKernelBench's rule, the default: eager PyTorch may do any part, but no eager result routed through the DSL.
inline constexpr std::string_view kBoundaryMkb = "mkb";
/// All arithmetic in the DSL: any eager op beyond data movement is a violation.
inline constexpr std::string_view kBoundaryStrict = "strict";
/// Verdicts graded before boundaries existed (the old full-size eager_compute rule, which is neither): their own
/// boundary, never compared with mkb or strict ones.
inline constexpr std::string_view kBoundaryLegacy = "legacy";

/// "mkb" or "strict" as given on a command line or in settings; anything else is an error naming both and `where`.
Result<std::string> parseBoundary(std::string_view text, std::string_view where = "--boundary");

/// The boundary a stored verdict was graded under: its own "boundary" field, or "legacy" when it has none.
std::string boundaryOrLegacy(std::string_view boundary);

/// The grader fingerprint as recorded with a verdict: the grader's SHA-256 with the boundary after a '+'
/// ("<sha>+strict"), so verdicts of one grader under different boundaries never look interchangeable. An empty
/// fingerprint stays empty (unknown).
std::string fingerprintWithBoundary(const std::string& graderFingerprint, std::string_view boundary);

/// The grader's own part of a recorded fingerprint: "<sha>" of "<sha>+strict", a plain fingerprint as it is.
std::string graderOfFingerprint(const std::string& recordedFingerprint);

} // namespace mkb
