// Names of trial statuses as stored and printed.
#include "core/records/trial.h"

namespace mkb {

const char* toString(TrialStatus status) {
    switch (status) {
    case TrialStatus::Running:
        return "running";
    case TrialStatus::Finished:
        return "finished";
    case TrialStatus::Skipped:
        return "skipped";
    case TrialStatus::InfrastructureError:
        return "infrastructure_error";
    case TrialStatus::Interrupted:
        return "interrupted";
    }
    return "unknown";
}

std::optional<TrialStatus> trialStatusFromString(const std::string& text) {
    for (TrialStatus status : {TrialStatus::Running, TrialStatus::Finished, TrialStatus::Skipped,
                               TrialStatus::InfrastructureError, TrialStatus::Interrupted}) {
        if (text == toString(status)) {
            return status;
        }
    }
    return std::nullopt;
}

} // namespace mkb
