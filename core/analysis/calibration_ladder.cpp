// The A/B ladder of a calibration: its sessions read from the stored detail, and the lines mkb calibrate prints.
#include "core/analysis/calibration_ladder.h"

#include "core/util/json_input.h"

#include <cmath>
#include <cstdio>
#include <optional>

namespace mkb {
namespace {

/// [ratio, low, high], each positive and finite, as a timing of `rounds` rounds; nullopt otherwise.
std::optional<analysis::PairedTiming> timingAt(const nlohmann::json& row, const char* key, int rounds) {
    const auto found = row.find(key);
    if (found == row.end() || !found->is_array() || found->size() != 3) {
        return std::nullopt;
    }
    double values[3];
    for (std::size_t i = 0; i < 3; ++i) {
        const nlohmann::json& value = (*found)[i];
        if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() > 0)) {
            return std::nullopt;
        }
        values[i] = value.get<double>();
    }
    return analysis::PairedTiming{values[0], values[1], values[2], rounds};
}

template <typename... Numbers>
std::string formatted(const char* format, Numbers... numbers) {
    char text[256];
    std::snprintf(text, sizeof text, format, numbers...);
    return text;
}

std::string interval(const std::optional<analysis::Interval>& bounds, const char* format) {
    if (!bounds) {
        return "[none]";
    }
    return "[" + formatted(format, bounds->low) + ", " + formatted(format, bounds->high) + "]";
}

std::string rateRow(const char* name, const std::optional<analysis::LadderRates>& rates,
                    const std::optional<analysis::Interval>& scoreInterval) {
    std::string line = formatted("  %-7s", name);
    if (!rates) {
        return line + " none";
    }
    for (double rate : rates->rates) {
        line += formatted(" %7.3f", rate);
    }
    return line + formatted(" %7.1f ", rates->score) + interval(scoreInterval, "%.1f");
}

std::string timing(const analysis::PairedTiming& value, const char* format) {
    return formatted(format, value.ratio) + " [" + formatted("%.3f", value.ciLow) + ", " +
           formatted("%.3f", value.ciHigh) + "]";
}

} // namespace

std::vector<analysis::SlowdownSession> slowdownSessions(const CalibrationRecord& record) {
    std::vector<analysis::SlowdownSession> sessions;
    const nlohmann::json detail = parseJsonInputOrDiscarded(record.detailJson); // a store's text: bounded
    if (!detail.is_array()) {
        return sessions;
    }
    for (const nlohmann::json& row : detail) {
        if (!row.is_object() || !row.contains("problem") || !row["problem"].is_number_integer()) {
            continue;
        }
        const int rounds = row.contains("rounds") && row["rounds"].is_number_integer() ? row["rounds"].get<int>() : 0;
        const auto a = timingAt(row, kDetailSpeedupA, rounds);
        const auto b = timingAt(row, kDetailSpeedupB, rounds);
        const auto bOverA = timingAt(row, "paired_ab", rounds);
        if (!a || !b || !bOverA) {
            continue;
        }
        analysis::SlowdownSession session;
        session.problem = row["problem"].get<int>();
        session.dsl = row.contains("dsl") && row["dsl"].is_string() ? row["dsl"].get<std::string>() : "";
        session.replicate =
            row.contains("replicate") && row["replicate"].is_number_integer() ? row["replicate"].get<int>() : 1;
        session.a = *a;
        session.b = *b;
        session.bOverA = *bOverA;
        sessions.push_back(std::move(session));
    }
    return sessions;
}

std::string ladderRung(const std::vector<bool>& attains, const std::vector<double>& thresholds) {
    std::string rung = "none";
    for (std::size_t i = 0; i < attains.size() && i < thresholds.size(); ++i) {
        if (attains[i]) {
            rung = analysis::ladderLabel(thresholds[i]);
        }
    }
    return rung;
}

std::vector<std::string> slowdownLadderLines(const analysis::SlowdownLadder& ladder, double slowdown,
                                             const std::vector<double>& thresholds) {
    const std::size_t controls = ladder.controls.size();
    if (controls == 0) {
        return {};
    }
    const analysis::Contrast& contrast = ladder.contrast;
    std::vector<std::string> lines;
    lines.push_back(formatted("paired A/B ladder (docs/metrics.md, \"Calibration ladder\"): A = the solution, B = its "
                              "copy slowed by %.3f, both ranked on the paired ladder's rule from one re-timing with "
                              "eager, %zu controls:",
                              slowdown, controls));
    std::string heading = formatted("  %-7s", "");
    for (double t : thresholds) {
        heading += formatted(" %7s", analysis::ladderLabel(t).c_str());
    }
    lines.push_back(heading + formatted(" %7s", "S") + " [95%]");
    lines.push_back(rateRow("A", contrast.base, contrast.intervals.baseScore));
    lines.push_back(rateRow("B", contrast.skill, contrast.intervals.skillScore));
    lines.push_back(rateRow("B - A", contrast.lift, contrast.intervals.liftScore));
    std::string liftIntervals = "  B - A 95% per t:";
    std::string ties = "  ties (a crossing of t within noise, counted as no move):";
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
        liftIntervals +=
            " " + analysis::ladderLabel(thresholds[i]) + " " +
            interval(i < contrast.intervals.liftRates.size() ? contrast.intervals.liftRates[i] : std::nullopt, "%.3f");
        ties += " " + analysis::ladderLabel(thresholds[i]) + " " +
                std::to_string(i < contrast.ties.size() ? contrast.ties[i] : 0);
    }
    lines.push_back(liftIntervals);
    lines.push_back(ties);
    lines.push_back("  S is a step function: the slowdown moves a control's S only when a threshold lies between its "
                    "A and B speedups.");
    lines.push_back(formatted("  crossed a threshold (counted, not a tie): %zu of %zu controls; the wrong way (B "
                              "attains a t that A does not): %zu",
                              ladder.crossed, controls, ladder.wrongWay));
    lines.push_back(formatted("  speedup change B/A below 1 beyond noise (95%% interval of ln(B/A) excludes 0): %zu of "
                              "%zu controls (%.1f%%); above 1 beyond noise: %zu",
                              ladder.changeExcludesZero, controls, 100.0 * double(ladder.changeExcludesZero) / controls,
                              ladder.changeWrongWay));
    for (const analysis::SlowdownControl& control : ladder.controls) {
        const analysis::SlowdownSession& session = control.session;
        std::string tied;
        for (std::size_t i = 0; i < control.ladder.ties.size() && i < thresholds.size(); ++i) {
            if (control.ladder.ties[i]) {
                tied += (tied.empty() ? " tie at " : ", ") + analysis::ladderLabel(thresholds[i]);
            }
        }
        lines.push_back(formatted("  p%02d %s r%d  A ", session.problem, session.dsl.c_str(), session.replicate) +
                        timing(session.a, "%.3fx") + " " + ladderRung(control.ladder.baseAttains, thresholds) + "  B " +
                        timing(session.b, "%.3fx") + " " + ladderRung(control.ladder.skillAttains, thresholds) +
                        "  B/A " + timing(session.bOverA, "%.4f") +
                        (control.changeExcludesZero ? " excludes 1"
                         : control.changeWrongWay   ? " above 1 (wrong way)"
                                                    : " contains 1") +
                        (control.crossed ? (control.wrongWay ? "  crossed the wrong way" : "  crossed") : "") + tied);
    }
    return lines;
}

} // namespace mkb
