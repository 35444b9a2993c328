// The calibration tables of a report, and the calibration summary behind them (report_calibration.h).
#include "core/report/report_calibration.h"

#include "core/analysis/calibration_ladder.h"
#include "core/report/report_ladder_rows.h"
#include "core/util/json_input.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace mkb::report {
namespace {

std::string calibratedDeviceName(const CalibrationRecord& calibration) {
    return calibration.deviceName.empty() ? calibration.device
                                          : calibration.device + " (" + calibration.deviceName + ")";
}

ReportCell timingCell(const analysis::PairedTiming& timing, int which, int precision) {
    return numberCell(which == 0 ? timing.ratio : which == 1 ? timing.ciLow : timing.ciHigh, precision);
}

/// The A/B ladders of the chosen calibrations (analysis::slowdownLadder over each one's stored sessions): a ladder
/// table (base = A, skill = B, lift = B − A) and a table of the controls. Nothing when no chosen calibration stored
/// its sessions (calibrations made before the ladder), so such reports stay as they were.
void appendCalibrationLadders(const CalibrationSummary& summary, const analysis::AnalysisSettings& settings,
                              Report& report) {
    const std::vector<double>& thresholds = settings.thresholds;
    ReportTable ladders{"calibration_ladder",
                        "A/B ladder of the calibrations: the slowed copy B against the solution A",
                        {},
                        {},
                        {},
                        {}};
    ladders.columns = {"Device", "arm", "resolved"};
    for (double threshold : thresholds) {
        ladders.columns.push_back(analysis::ladderLabel(threshold));
    }
    ladders.columns.insert(ladders.columns.end(), {"S", "S 95% low", "S 95% high"});
    ReportTable controls{
        "calibration_ab", "A/B controls of the calibrations, one paired re-timing each", {}, {}, {}, {}};
    controls.columns = {"Device",     "Problem",     "DSL",          "Replicate", "A speedup",  "A 95% low",
                        "A 95% high", "A rung",      "B speedup",    "B 95% low", "B 95% high", "B rung",
                        "B/A",        "B/A 95% low", "B/A 95% high", "Change",    "Crossed",    "Ties"};
    for (const DeviceCalibration& entry : summary.devices) {
        if (!entry.chosen) {
            continue;
        }
        const std::vector<analysis::SlowdownSession> sessions = slowdownSessions(*entry.chosen);
        if (sessions.empty()) {
            continue;
        }
        const analysis::SlowdownLadder ladder = analysis::slowdownLadder(sessions, settings);
        const std::string name = calibratedDeviceName(*entry.chosen);
        appendLadderRows(ladders, name, ladder.contrast, thresholds.size());
        char share[32];
        std::snprintf(share, sizeof share, "%.1f%%", 100.0 * double(ladder.changeExcludesZero) / sessions.size());
        char slowdown[32];
        std::snprintf(slowdown, sizeof slowdown, "%.3f", entry.chosen->slowdown);
        ladders.footnotes.push_back(
            name + ": " + std::to_string(sessions.size()) + " controls, slowdown " + slowdown + "; ties " +
            perThreshold(ladder.contrast.ties, thresholds) + "; " + std::to_string(ladder.crossed) +
            " crossed a threshold (not a tie), " + std::to_string(ladder.wrongWay) +
            " the wrong way; the speedup change B/A lies below 1 beyond noise (its 95% interval of ln(B/A) excludes "
            "0) in " +
            std::to_string(ladder.changeExcludesZero) + " of " + std::to_string(sessions.size()) + " (" + share +
            "), above 1 in " + std::to_string(ladder.changeWrongWay) + ".");
        for (const analysis::SlowdownControl& control : ladder.controls) {
            const analysis::SlowdownSession& session = control.session;
            std::string ties;
            for (std::size_t i = 0; i < control.ladder.ties.size() && i < thresholds.size(); ++i) {
                if (control.ladder.ties[i]) {
                    ties += (ties.empty() ? "" : ", ") + analysis::ladderLabel(thresholds[i]);
                }
            }
            controls.rows.push_back(
                {textCell(name), countCell(std::size_t(session.problem)), textCell(session.dsl),
                 countCell(std::size_t(session.replicate)), timingCell(session.a, 0, 3), timingCell(session.a, 1, 3),
                 timingCell(session.a, 2, 3), textCell(ladderRung(control.ladder.baseAttains, thresholds)),
                 timingCell(session.b, 0, 3), timingCell(session.b, 1, 3), timingCell(session.b, 2, 3),
                 textCell(ladderRung(control.ladder.skillAttains, thresholds)), timingCell(session.bOverA, 0, 4),
                 timingCell(session.bOverA, 1, 4), timingCell(session.bOverA, 2, 4),
                 textCell(control.changeExcludesZero ? "below 1"
                          : control.changeWrongWay   ? "above 1"
                                                     : "contains 1"),
                 textCell(control.wrongWay  ? "wrong way"
                          : control.crossed ? "yes"
                                            : "no"),
                 textCell(ties)});
        }
    }
    if (controls.rows.empty()) {
        return;
    }
    ladders.footnotes.insert(
        ladders.footnotes.begin(),
        {"Paired ladder (docs/metrics.md, \"Calibration ladder\"): per control, base = A (the solution) and skill = B "
         "(its copy slowed by the calibration's slowdown), both ranked on their speedups over eager from one "
         "re-timing; lift = B − A. S is a step function: a slowdown moves a control's S only when a threshold lies "
         "between its A and B speedups.",
         kLadderIntervalLine});
    controls.footnotes.push_back("A, B: speedups over eager from one re-timing; B/A = time(A) / time(B) on the same "
                                 "rounds (the speedup change, below 1 when B is slower beyond noise); rung: the "
                                 "highest threshold attained on the ladder (a tie keeps B at A's rung).");
    report.tables.push_back(std::move(ladders));
    report.tables.push_back(std::move(controls));
}

} // namespace

Status appendCalibrations(const Store& store, const analysis::AnalysisSettings& settings, Report& report) {
    Result<CalibrationSummary> summary = calibrationSummary(store);
    if (!summary) {
        return summary.error();
    }
    if (!summary->anyCalibration) {
        return Ok{};
    }
    ReportTable table;
    table.id = "calibration";
    table.title = "Calibration of the devices that graded the data";
    table.columns = {
        "Device",           "Grader",           "Date",         "A/A pairs",       "A/B pairs", "Method", "δ",
        "A/A false helped", "A/A false harmed", "A/B detected", "Smallest safe δ", "Status"};
    for (const DeviceCalibration& entry : summary->devices) {
        if (!entry.chosen) {
            table.footnotes.push_back("no calibration of " + entry.device + ": run mkb calibrate");
            continue;
        }
        const CalibrationRecord& chosen = *entry.chosen;
        if (entry.stale) {
            table.footnotes.push_back("the calibration of " + entry.device + " was made with grader " +
                                      chosen.graderFingerprint.substr(0, 12) +
                                      ", not the data's: stale, run mkb calibrate again");
        }
        const std::string name =
            chosen.deviceName.empty() ? chosen.device : chosen.device + " (" + chosen.deviceName + ")";
        for (const CalibrationMethodResult& method : chosen.methods) {
            const auto share = [](int count, int total) {
                return total ? std::optional<double>(double(count) / total) : std::nullopt;
            };
            table.rows.push_back(
                {textCell(name), textCell(chosen.graderFingerprint.substr(0, 12)),
                 textCell(chosen.createdAt.substr(0, 10)), countCell(std::size_t(method.aaComparisons)),
                 countCell(std::size_t(method.abComparisons)), textCell(method.method), numberCell(method.delta, 3),
                 percentCell(share(method.aaHelped, method.aaComparisons)),
                 percentCell(share(method.aaHarmed, method.aaComparisons)),
                 percentCell(share(method.abDetected, method.abComparisons)), numberCell(method.smallestDelta, 3),
                 textCell(entry.stale ? "stale" : "current")});
        }
    }
    table.footnotes.insert(table.footnotes.begin(),
                           "A/A: a solution against its own copies (any outcome is false); A/B: against a copy "
                           "slowed by the calibration's slowdown (detected when judged harmed).");
    report.tables.push_back(std::move(table));
    appendCalibrationLadders(*summary, settings, report);
    return Ok{};
}

std::vector<analysis::UnpairedControl> unpairedAaControls(const CalibrationRecord& calibration) {
    std::vector<analysis::UnpairedControl> controls;
    const nlohmann::json detail = parseJsonInputOrDiscarded(calibration.detailJson); // a store's text: bounded
    if (!detail.is_array()) {
        return controls;
    }
    for (const nlohmann::json& row : detail) {
        if (!row.is_object() || !row.contains("unpaired")) {
            continue;
        }
        const nlohmann::json& pair = row["unpaired"];
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number()) {
            continue;
        }
        const double first = pair[0].get<double>();
        const double second = pair[1].get<double>();
        controls.push_back({{first > 0, first}, {second > 0, second}});
    }
    return controls;
}

Result<CalibrationSummary> calibrationSummary(const Store& store) {
    Result<std::vector<CalibrationRecord>> calibrations = store.liveCalibrations();
    if (!calibrations) {
        return calibrations.error();
    }
    Result<std::vector<RetimingRecord>> retimings = store.liveRetimings();
    if (!retimings) {
        return retimings.error();
    }
    CalibrationSummary summary;
    summary.anyCalibration = !calibrations->empty();
    std::set<std::string> fingerprints; // the grader fingerprints the data was re-timed with
    std::vector<std::string> devices;
    const auto addDevice = [&devices](const std::string& device) {
        if (!device.empty() && std::find(devices.begin(), devices.end(), device) == devices.end()) {
            devices.push_back(device);
        }
    };
    for (const RetimingRecord& retiming : *retimings) {
        addDevice(retiming.result.device);
        if (!retiming.result.graderFingerprint.empty()) {
            fingerprints.insert(retiming.result.graderFingerprint);
        }
    }
    if (devices.empty()) {
        for (const CalibrationRecord& calibration : *calibrations) {
            addDevice(calibration.device);
        }
    }
    for (const std::string& device : devices) {
        const CalibrationRecord* chosen = nullptr; // newest first: the first match, preferring the data's grader
        for (const CalibrationRecord& calibration : *calibrations) {
            if (calibration.device != device && calibration.deviceName != device) {
                continue;
            }
            if (!chosen ||
                (fingerprints.count(calibration.graderFingerprint) && !fingerprints.count(chosen->graderFingerprint))) {
                chosen = &calibration;
            }
        }
        DeviceCalibration entry;
        entry.device = device;
        if (chosen) {
            entry.chosen = *chosen;
            entry.stale = !fingerprints.empty() && !fingerprints.count(chosen->graderFingerprint);
        }
        summary.devices.push_back(std::move(entry));
    }
    return summary;
}

} // namespace mkb::report
