// Our grader's verdict on a stored submission graded again (`mkb regrade`), kept beside the submission's own verdict.
#pragma once

#include "core/records/verdict.h"

#include <cstdint>
#include <string>

namespace mkb {

struct RegradingRecord {
    std::int64_t id = 0;
    std::int64_t submissionId = 0;
    std::int64_t trialId = 0;      // read back from the submission
    int submissionIndex = 0;       // read back from the submission (a corpus round k is index k + 1)
    std::string graderFingerprint; // with the boundary (fingerprintWithBoundary), as trials record it
    std::string problemFingerprint;
    std::string kernelSha256; // of the kernel.py graded
    std::string kernelSource; // the kernel.py graded (an imported round is adapted to the contract first)
    Verdict verdict;          // its boundary is verdict.boundary ("mkb" or "strict")
    std::string createdAt;    // ISO 8601 UTC; the current time when empty
};

} // namespace mkb
