// The suite check loop with resume and reuse, and the peaks it grades with.
#include "core/suite/suite_run.h"

#include "core/grader_client/device_probe.h"

#include <mutex>
#include <optional>
#include <set>
#include <thread>

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
            if (const DeviceRecord* latest = latestProbeOf(*devices, device, currentHostName())) {
                peaks.note = "the latest probe of " + device + " in " + storePath.string();
                peaks.peaksJson = requestPeaks(*latest);
                peaks.deviceName = latest->name;
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

std::map<std::string, SuitePeaks> suitePeaksOnPool(GraderPool& pool, Store* store,
                                                   const std::filesystem::path& storePath,
                                                   const std::function<void(const std::string&)>& say,
                                                   const std::atomic<bool>* cancel) {
    std::map<std::string, SuitePeaks> found;
    for (const PoolDeviceState& state : pool.devices()) {
        if (state.lost) {
            continue;
        }
        (void)pool.runOnOneDevice(
            [&](GraderProcess& server, const std::string& device, const std::string& graderDevice) -> Status {
                if (device == state.device) { // not another device standing in for a lost one
                    found[device] = suitePeaks(server, graderDevice, store, storePath, say, cancel);
                }
                return Ok{};
            },
            state.device, cancel);
    }
    return found;
}

namespace {

/// The first earlier report's check of the problem that still holds, counting the reuse or the reason there was none.
std::optional<ProblemCheck> reusedCheck(const Problem& problem, const SuiteCheckOptions& options,
                                        const std::vector<EarlierSuiteReport>& earlier,
                                        const std::string& graderFingerprint, SuiteRunOutcome& outcome) {
    std::optional<ProblemCheck> reused;
    std::optional<std::string> recheckReason;
    for (const EarlierSuiteReport& candidate : earlier) {
        if (reused || !candidate.entries.count(problem.name())) {
            continue;
        }
        auto previous = reusableCheck(candidate, problem, options, graderFingerprint);
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
    return reused;
}

/// Records the device a problem was checked on, on the check and on each of its verdicts.
void nameDevice(ProblemCheck& check, const std::string& device) {
    check.device = device;
    for (SolutionCheck& solution : check.solutions) {
        if (solution.verdict) {
            solution.verdict->device = device;
        }
    }
}

/// report.unchecked: the selected problems the report does not hold, in selection order.
void listUnchecked(const std::vector<const Problem*>& selected, SuiteCheckReport& report) {
    std::set<std::string> held;
    for (const ProblemCheck& check : report.problems) {
        held.insert(check.problem.name());
    }
    report.unchecked.clear();
    for (const Problem* problem : selected) {
        if (!held.count(problem->name())) {
            report.unchecked.push_back(problem->name());
        }
    }
}

} // namespace

SuiteRunOutcome runSuiteChecks(GraderProcess& grader, const std::vector<const Problem*>& selected,
                               const SuiteCheckOptions& options, const std::vector<EarlierSuiteReport>& earlier,
                               SuiteCheckReport& report, const SuiteRunHooks& hooks, const std::atomic<bool>& cancel) {
    SuiteRunOutcome outcome;
    std::size_t index = 0;
    for (; index < selected.size(); ++index) {
        const Problem* problem = selected[index];
        if (cancel.load()) {
            break;
        }
        std::optional<ProblemCheck> reused = reusedCheck(*problem, options, earlier, report.graderFingerprint, outcome);
        auto stage = [&](const std::string& what) {
            if (hooks.onStage) {
                hooks.onStage(*problem, what);
            }
        };
        ProblemCheck check = reused ? std::move(*reused) : checkProblem(grader, *problem, options, stage, &cancel);
        if (cancel.load() && !check.reused) {
            ++index; // cut short, and no earlier report holds it
            break;
        }
        if (!check.reused) {
            nameDevice(check, options.device);
        }
        if (report.deviceName.empty()) {
            report.deviceName = check.validation.deviceName;
        }
        report.problems.push_back(std::move(check));
        if (hooks.onProblem) {
            hooks.onProblem(report.problems.back());
        }
        listUnchecked(selected, report);
        if (hooks.writeReports) {
            if (Status written = hooks.writeReports(report); !written) {
                outcome.writeError = written.error();
                return outcome;
            }
        }
    }
    for (; index < selected.size(); ++index) { // interrupted: what earlier reports hold stays in this one
        if (std::optional<ProblemCheck> reused =
                reusedCheck(*selected[index], options, earlier, report.graderFingerprint, outcome)) {
            report.problems.push_back(std::move(*reused));
        }
    }
    listUnchecked(selected, report);
    outcome.interrupted = cancel.load();
    return outcome;
}

SuiteRunOutcome runSuiteChecksOnPool(GraderPool& pool, const std::vector<const Problem*>& selected,
                                     const SuiteCheckOptions& options,
                                     const std::map<std::string, std::string>& peaksByDevice,
                                     const std::vector<EarlierSuiteReport>& earlier, SuiteCheckReport& report,
                                     const SuiteRunHooks& hooks, const std::atomic<bool>& cancel) {
    SuiteRunOutcome outcome;
    std::mutex mutex; // guards everything below, the report and the outcome, and serialises the hooks
    std::size_t next = 0;
    bool stop = false;
    std::map<std::size_t, ProblemCheck> done; // by place in the selection
    const auto publishLocked = [&]() {
        report.problems.clear();
        report.unchecked.clear();
        for (std::size_t index = 0; index < selected.size(); ++index) {
            auto found = done.find(index);
            if (found != done.end()) {
                report.problems.push_back(found->second);
            } else {
                report.unchecked.push_back(selected[index]->name());
            }
        }
    };
    const auto checkOnDevice = [&](const Problem& problem) {
        ProblemCheck check;
        Status ran = pool.runOnOneDevice(
            [&](GraderProcess& server, const std::string& device, const std::string& graderDevice) -> Status {
                SuiteCheckOptions onDevice = options;
                onDevice.device = graderDevice;
                onDevice.lockDevice = false; // the pool holds the device's lock for the whole check
                auto peaks = peaksByDevice.find(device);
                onDevice.peaksJson = peaks != peaksByDevice.end() ? peaks->second : std::string();
                check = checkProblem(
                    server, problem, onDevice,
                    [&](const std::string& what) {
                        std::lock_guard<std::mutex> lock(mutex);
                        if (hooks.onStage) {
                            hooks.onStage(problem, what + " on " + device);
                        }
                    },
                    &cancel);
                nameDevice(check, device);
                return Ok{};
            },
            "", &cancel);
        if (!ran) { // no device is left: this problem says why, the rest stay unchecked
            check = ProblemCheck{};
            check.problem = problem;
            check.infrastructureError = true;
            check.problems.push_back(problem.name() + ": not checked: " + ran.error().message);
        }
        return std::make_pair(check, ran.ok());
    };
    const auto worker = [&]() {
        while (true) {
            std::size_t index = 0;
            std::optional<ProblemCheck> reused;
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (stop || cancel.load() || next >= selected.size()) {
                    return;
                }
                index = next++;
                reused = reusedCheck(*selected[index], options, earlier, report.graderFingerprint, outcome);
            }
            auto [check, deviceLeft] =
                reused ? std::make_pair(std::move(*reused), true) : checkOnDevice(*selected[index]);
            if (cancel.load() && !check.reused) {
                return;
            }
            std::lock_guard<std::mutex> lock(mutex);
            if (report.deviceName.empty()) {
                report.deviceName = check.validation.deviceName;
            }
            done.emplace(index, std::move(check));
            publishLocked();
            if (hooks.onProblem) {
                hooks.onProblem(done.at(index));
            }
            stop = stop || !deviceLeft;
            if (hooks.writeReports && !outcome.writeError) {
                if (Status written = hooks.writeReports(report); !written) {
                    outcome.writeError = written.error();
                    stop = true;
                }
            }
        }
    };
    std::vector<std::thread> threads;
    for (std::size_t device = 0; device < pool.devices().size(); ++device) {
        threads.emplace_back(worker);
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    for (; next < selected.size(); ++next) { // stopped early: what earlier reports hold stays in this one
        if (std::optional<ProblemCheck> reused =
                reusedCheck(*selected[next], options, earlier, report.graderFingerprint, outcome)) {
            done.emplace(next, std::move(*reused));
        }
    }
    publishLocked();
    outcome.interrupted = cancel.load();
    return outcome;
}

} // namespace mkb
