// Grading one kernel file on its own (kernel_grading.h).
#include "core/grader_client/kernel_grading.h"

#include "core/grader_client/device_probe.h"
#include "core/vocabulary/boundary.h"

#include <utility>

namespace mkb {

namespace fs = std::filesystem;

Result<std::unique_ptr<Store>> openGradingStore(const fs::path& storePath, bool named, bool save,
                                                GradeRequest& request) {
    std::error_code ec;
    if (!named && !fs::exists(storePath, ec)) {
        return std::unique_ptr<Store>();
    }
    auto opened = Store::open(storePath, save ? OpenMode::CreateIfMissing : OpenMode::Inspect);
    if (!opened) {
        return opened.error();
    }
    std::unique_ptr<Store> store = std::move(opened).value();
    auto devices = store->devices();
    if (!devices) {
        return devices.error();
    }
    request.peaksJson = latestPeaksFor(*devices, request.device, currentHostName());
    return store;
}

KernelGrading gradeKernelFile(const GradeRequest& request, const GraderLaunch& launch, const StageCallback& onStage,
                              const std::atomic<bool>* cancel) {
    GraderProcess grader(launch);
    KernelGrading graded;
    graded.verdict = grader.grade(request, onStage, cancel);
    // Recorded with the boundary, so a verdict under one boundary never passes for one under the other.
    graded.graderFingerprint = fingerprintWithBoundary(grader.hello().graderFingerprint, request.settings.boundary);
    grader.stop();
    return graded;
}

} // namespace mkb
