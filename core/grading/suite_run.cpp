// The suite check loop with resume and reuse, and the peaks it grades with.
#include "core/grading/suite_run.h"

#include "core/grading/device_probe.h"

#include <optional>

namespace mkb {

SuitePeaks suitePeaks(GraderProcess& grader, const std::string& device, Store* store,
                      const std::filesystem::path& storePath, const std::function<void(const std::string&)>& say,
                      const std::atomic<bool>* cancel) {
    SuitePeaks peaks;
    if (device == "cpu") {
        peaks.note = "none (IOU and MFU need a probed GPU)";
        return peaks;
    }
    if (store) {
        if (auto devices = store->devices(); devices) {
            std::string latest = latestPeaksFor(*devices, device, currentHostName());
            if (!latest.empty()) {
                peaks.note = "the latest probe of " + device + " in " + storePath.string();
                peaks.peaksJson = latest;
                return peaks;
            }
        }
    }
    say("no probe of " + device + " in the store: probing it first");
    auto probe = grader.probe(device, cancel);
    if (!probe) {
        peaks.note = "none (probing " + device + " failed: " + probe.error().message + ")";
        say("mkb suite: " + peaks.note);
        return peaks;
    }
    peaks.deviceName = probe->name;
    peaks.note = "a probe of " + device + " run for this check";
    if (store) {
        if (auto saved = store->saveDevice(deviceRecordFromProbe(*probe, currentHostName())); saved) {
            peaks.note += " (saved in " + storePath.string() + ")";
        }
    }
    peaks.peaksJson = peaksJson(*probe);
    return peaks;
}

SuiteRunOutcome runSuiteChecks(GraderProcess& grader, const std::vector<const Problem*>& selected,
                               const SuiteCheckOptions& options, const std::vector<EarlierSuiteReport>& earlier,
                               SuiteCheckReport& report, const SuiteRunHooks& hooks, const std::atomic<bool>& cancel) {
    SuiteRunOutcome outcome;
    auto remainingAfter = [&](std::size_t done) {
        report.unchecked.clear();
        for (std::size_t i = done; i < selected.size(); ++i) {
            report.unchecked.push_back(selected[i]->name());
        }
    };
    for (std::size_t index = 0; index < selected.size(); ++index) {
        const Problem* problem = selected[index];
        if (cancel.load()) {
            break;
        }
        // The first earlier report whose check of this problem still holds; else the last one's reason.
        std::optional<ProblemCheck> reused;
        std::optional<std::string> recheckReason;
        for (const EarlierSuiteReport& candidate : earlier) {
            if (reused || !candidate.entries.count(problem->name())) {
                continue;
            }
            auto previous = reusableCheck(candidate, *problem, options, report.graderFingerprint);
            if (previous) {
                reused = std::move(previous).value();
            } else {
                recheckReason = previous.error().message;
            }
        }
        if (reused) {
            ++outcome.reused;
        } else if (recheckReason) {
            ++outcome.recheckReasons[*recheckReason];
        }
        auto stage = [&](const std::string& what) {
            if (hooks.onStage) {
                hooks.onStage(*problem, what);
            }
        };
        ProblemCheck check = reused ? std::move(*reused) : checkProblem(grader, *problem, options, stage, &cancel);
        if (cancel.load() && !check.reused) {
            break;
        }
        if (report.deviceName.empty()) {
            report.deviceName = check.validation.deviceName;
        }
        report.problems.push_back(std::move(check));
        if (hooks.onProblem) {
            hooks.onProblem(report.problems.back());
        }
        remainingAfter(index + 1);
        if (hooks.writeReports) {
            if (Status written = hooks.writeReports(report); !written) {
                outcome.writeError = written.error();
                return outcome;
            }
        }
    }
    remainingAfter(report.problems.size());
    outcome.interrupted = cancel.load();
    return outcome;
}

} // namespace mkb
