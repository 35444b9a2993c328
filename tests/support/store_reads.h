// What the tests that run mkb read back from the store it wrote: the devices that graded its verdicts.
#pragma once

#include "core/store/store.h"

#include <QString>

#include <set>
#include <string>
#include <vector>

namespace mkbtest {

/// Every device that graded a verdict of the store: the final verdicts and the submissions.
inline std::multiset<std::string> verdictDevices(const QString& store) {
    std::multiset<std::string> devices;
    auto opened = mkb::Store::open(store.toStdString(), mkb::OpenMode::MustExist);
    if (!opened) {
        return devices;
    }
    auto trials = (*opened)->loadTrials();
    for (const mkb::TrialRecord& trial : trials ? *trials : std::vector<mkb::TrialRecord>{}) {
        if (trial.finalVerdict && trial.finalVerdict->stage != "no_kernel") {
            devices.insert(trial.finalVerdict->device);
        }
        auto submissions = (*opened)->submissions(trial.id);
        for (const mkb::SubmissionRecord& submission :
             submissions ? *submissions : std::vector<mkb::SubmissionRecord>{}) {
            devices.insert(submission.verdict.device);
        }
    }
    return devices;
}

} // namespace mkbtest
