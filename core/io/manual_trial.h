// Filing the verdict of `mkb grade --save`: one kernel graded by hand, kept as the "manual" model's solo trial of its
// problem and DSL (replicate 1), the earlier live one archived.
#pragma once

#include "core/records/problem.h"
#include "core/records/verdict.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <string>

namespace mkb {

/// Stores the problem, the "manual" model, and one finished solo trial of `dsl` with the kernel as its one
/// submission, in one transaction; a live trial at the same coordinate is archived first. graderFingerprint is
/// recorded as given (with the boundary, fingerprintWithBoundary). Errors come from the store.
Status saveManualTrial(Store& store, const Problem& problem, const std::string& dsl, const std::string& kernelSource,
                       const Verdict& verdict, const std::string& graderFingerprint);

} // namespace mkb
