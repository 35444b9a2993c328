// Grading one kernel file on its own (`mkb grade`): the store it reads the device's peaks from (and --save files
// into), and the one grading through a grader session of its own.
#pragma once

#include "core/grader_client/grader_process.h"
#include "core/records/verdict.h"
#include "core/store/store.h"
#include "core/util/result.h"
#include "core/wire/grade_request.h"

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

namespace mkb {

/// The store for one grading, or nullptr where none is named and no file is at storePath: created when `save`,
/// else inspected as it is. Sets request.peaksJson from its latest probe of request.device on this host. Errors
/// come from the store.
Result<std::unique_ptr<Store>> openGradingStore(const std::filesystem::path& storePath, bool named, bool save,
                                                GradeRequest& request);

struct KernelGrading {
    Verdict verdict;
    std::string graderFingerprint; // with the request's boundary (fingerprintWithBoundary), as a trial records it
};

/// Starts a grader session, grades the request once and stops the session. A grader that cannot start, or a
/// cancelled grading, comes back as the verdict's infrastructure error.
KernelGrading gradeKernelFile(const GradeRequest& request, const GraderLaunch& launch, const StageCallback& onStage,
                              const std::atomic<bool>* cancel);

} // namespace mkb
