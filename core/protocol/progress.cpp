// Formatting run progress as terminal lines and as JSON lines.
#include "core/protocol/progress.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace mkb {

ProgressSink::~ProgressSink() = default;

const char* toString(ProgressEventKind kind) {
    switch (kind) {
    case ProgressEventKind::Plan:
        return "plan";
    case ProgressEventKind::TrialStarted:
        return "trial_started";
    case ProgressEventKind::Submission:
        return "submission";
    case ProgressEventKind::TrialFinished:
        return "trial_finished";
    case ProgressEventKind::RunFinished:
        return "run_finished";
    case ProgressEventKind::Retimed:
        return "retimed";
    }
    return "unknown";
}

std::string formatDuration(double seconds) {
    const long total = std::lround(std::max(0.0, seconds));
    char buffer[32];
    if (total >= 3600) {
        std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
    } else {
        std::snprintf(buffer, sizeof buffer, "%02ld:%02ld", total / 60, total % 60);
    }
    return buffer;
}

std::string progressEventJson(const ProgressEvent& event) {
    nlohmann::json out;
    out["event"] = toString(event.kind);
    const ProgressCounts& counts = event.counts;
    out["counts"] = {{"total", counts.total},   {"done", counts.done},     {"running", counts.running},
                     {"failed", counts.failed}, {"passed", counts.passed}, {"interrupted", counts.interrupted}};
    out["elapsed_s"] = std::round(counts.elapsedSeconds * 1000) / 1000;
    out["eta_s"] = counts.etaSeconds ? nlohmann::json(std::round(*counts.etaSeconds)) : nlohmann::json();
    auto optionalBool = [](const std::optional<bool>& value) {
        return value ? nlohmann::json(*value) : nlohmann::json();
    };
    auto optionalNumber = [](const std::optional<double>& value) {
        return value ? nlohmann::json(*value) : nlohmann::json();
    };
    switch (event.kind) {
    case ProgressEventKind::Plan:
        if (event.plan) {
            nlohmann::json statusCounts = nlohmann::json::object();
            for (PlanStatus status : kAllPlanStatuses) {
                statusCounts[toString(status)] = event.plan->count(status);
            }
            out["plan_counts"] = std::move(statusCounts);
            nlohmann::json entries = nlohmann::json::array();
            for (const PlanEntry& entry : event.plan->entries) {
                entries.push_back({{"coordinate", entry.coordinateText},
                                   {"problem", entry.problemName},
                                   {"arm", entry.coordinate.arm.name()},
                                   {"status", toString(entry.status)},
                                   {"reason", entry.reason}});
            }
            out["entries"] = std::move(entries);
        }
        break;
    case ProgressEventKind::TrialStarted:
        out["coordinate"] = event.coordinate;
        out["trial_id"] = event.trialId;
        break;
    case ProgressEventKind::Submission:
        out["coordinate"] = event.coordinate;
        out["trial_id"] = event.trialId;
        out["index"] = event.submissionIndex;
        out["counted"] = event.counted;
        out["passed"] = optionalBool(event.passed);
        out["speedup"] = optionalNumber(event.speedup);
        out["submissions_left"] = event.submissionsLeft;
        out["seconds_left"] = std::round(event.secondsLeft);
        out["message"] = event.message;
        break;
    case ProgressEventKind::TrialFinished:
        out["coordinate"] = event.coordinate;
        out["trial_id"] = event.trialId;
        out["status"] = event.status;
        out["passed"] = optionalBool(event.passed);
        out["speedup"] = optionalNumber(event.speedup);
        out["message"] = event.message;
        break;
    case ProgressEventKind::RunFinished:
        out["status"] = event.status;
        out["exit_code"] = event.exitCode;
        out["message"] = event.message;
        break;
    case ProgressEventKind::Retimed:
        out["cell"] = event.coordinate;
        out["status"] = event.status;
        out["ratio"] = optionalNumber(event.ratio);
        out["ci_low"] = optionalNumber(event.ciLow);
        out["ci_high"] = optionalNumber(event.ciHigh);
        out["rounds"] = event.rounds;
        out["message"] = event.message;
        break;
    }
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string progressEventLine(const ProgressEvent& event) {
    const ProgressCounts& counts = event.counts;
    std::string line = "[" + std::to_string(counts.done) + "/" + std::to_string(counts.total) + " done, " +
                       std::to_string(counts.running) + " running, " + std::to_string(counts.failed) + " failed | " +
                       formatDuration(counts.elapsedSeconds) + " elapsed" +
                       (counts.etaSeconds ? ", ETA " + formatDuration(*counts.etaSeconds) : std::string()) + "] ";
    auto verdictWords = [&]() {
        if (!event.passed) {
            return std::string();
        }
        std::string words = *event.passed ? "passed" : "failed";
        if (*event.passed && event.speedup) {
            char buffer[32];
            std::snprintf(buffer, sizeof buffer, " %.2fx", *event.speedup);
            words += buffer;
        }
        return words;
    };
    switch (event.kind) {
    case ProgressEventKind::Plan:
        if (event.plan) {
            std::string counted;
            for (PlanStatus status : kAllPlanStatuses) {
                counted += (counted.empty() ? "" : ", ") + std::string(toString(status)) + " " +
                           std::to_string(event.plan->count(status));
            }
            line += "plan: " + std::to_string(event.plan->entries.size()) + " trials (" + counted + ")";
        }
        break;
    case ProgressEventKind::TrialStarted:
        line += event.coordinate + " started (trial #" + std::to_string(event.trialId) + ")";
        break;
    case ProgressEventKind::Submission:
        line += event.coordinate + " submission " + std::to_string(event.submissionIndex) + ": " +
                (event.counted ? verdictWords() : "not counted") + " (" + std::to_string(event.submissionsLeft) +
                " left)";
        break;
    case ProgressEventKind::TrialFinished:
        line += event.coordinate + " " + event.status;
        if (std::string words = verdictWords(); !words.empty()) {
            line += ": " + words;
        }
        if (!event.message.empty()) {
            line += " (" + event.message + ")";
        }
        break;
    case ProgressEventKind::RunFinished:
        line += "run " + event.status + (event.message.empty() ? std::string() : ": " + event.message);
        break;
    case ProgressEventKind::Retimed:
        line += event.coordinate + " re-timed: " + event.message;
        break;
    }
    return line;
}

void TextProgress::onEvent(const ProgressEvent& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stream_, "%s\n", progressEventLine(event).c_str());
    std::fflush(stream_);
}

void JsonProgress::onEvent(const ProgressEvent& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stream_, "%s\n", progressEventJson(event).c_str());
    std::fflush(stream_);
}

} // namespace mkb
