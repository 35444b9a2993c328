// Formatting run progress as terminal lines and as JSON lines, and reading the JSON lines back.
#include "core/protocol/progress.h"

#include "core/util/json_fields.h"
#include "core/util/json_input.h"

#include <nlohmann/json.hpp>

#include <cctype>
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
    case ProgressEventKind::JobState:
        return "job_state";
    case ProgressEventKind::Note:
        return "note";
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
        if (!event.stored) {
            out["stored"] = false;
        }
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
    case ProgressEventKind::JobState:
        out["coordinate"] = event.coordinate;
        out["trial_id"] = event.trialId;
        out["message"] = event.message;
        break;
    case ProgressEventKind::Note:
        out["device"] = event.coordinate;
        out["message"] = event.message;
        break;
    }
    const bool aboutTrial = event.kind == ProgressEventKind::TrialStarted ||
                            event.kind == ProgressEventKind::Submission ||
                            event.kind == ProgressEventKind::TrialFinished || event.kind == ProgressEventKind::JobState;
    if (aboutTrial && !event.jobId.empty()) {
        out["job_id"] = event.jobId;
        out["job_state"] = event.jobState;
    }
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

std::optional<ProgressEventKind> kindNamed(const std::string& name) {
    for (ProgressEventKind kind :
         {ProgressEventKind::Plan, ProgressEventKind::TrialStarted, ProgressEventKind::Submission,
          ProgressEventKind::TrialFinished, ProgressEventKind::RunFinished, ProgressEventKind::Retimed,
          ProgressEventKind::JobState, ProgressEventKind::Note}) {
        if (name == toString(kind)) {
            return kind;
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<ProgressEvent> parseProgressEventJson(std::string_view line) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
        line.remove_prefix(1);
    }
    if (line.empty() || line.front() != '{') {
        return std::nullopt;
    }
    const nlohmann::json object = parseJsonInputOrDiscarded(line);
    if (!object.is_object()) {
        return std::nullopt;
    }
    const auto kind = kindNamed(jsonText(object, "event"));
    if (!kind) {
        return std::nullopt;
    }
    ProgressEvent event;
    event.kind = *kind;
    if (const auto counts = object.find("counts"); counts != object.end() && counts->is_object()) {
        event.counts.total = jsonWhole(*counts, "total").value_or(0);
        event.counts.done = jsonWhole(*counts, "done").value_or(0);
        event.counts.running = jsonWhole(*counts, "running").value_or(0);
        event.counts.failed = jsonWhole(*counts, "failed").value_or(0);
        event.counts.interrupted = jsonWhole(*counts, "interrupted").value_or(0);
        event.counts.passed = jsonWhole(*counts, "passed").value_or(0);
    }
    event.counts.elapsedSeconds = jsonNumber(object, "elapsed_s").value_or(0);
    event.counts.etaSeconds = jsonNumber(object, "eta_s");
    if (const auto entries = object.find("entries"); entries != object.end() && entries->is_array()) {
        for (const nlohmann::json& entry : *entries) {
            if (entry.is_object()) {
                event.planned.push_back({jsonText(entry, "coordinate"), jsonText(entry, "problem"),
                                         jsonText(entry, "arm"), jsonText(entry, "status"), jsonText(entry, "reason")});
            }
        }
    }
    event.coordinate = jsonText(object, event.kind == ProgressEventKind::Retimed ? "cell"
                                        : event.kind == ProgressEventKind::Note  ? "device"
                                                                                 : "coordinate");
    event.trialId = static_cast<std::int64_t>(jsonNumber(object, "trial_id").value_or(0));
    event.status = jsonText(object, "status");
    event.message = jsonText(object, "message");
    event.submissionIndex = jsonWhole(object, "index").value_or(0);
    event.counted = jsonFlag(object, "counted").value_or(false);
    event.stored = jsonFlag(object, "stored").value_or(true);
    event.passed = jsonFlag(object, "passed");
    event.speedup = jsonNumber(object, "speedup");
    event.submissionsLeft = jsonWhole(object, "submissions_left").value_or(0);
    event.secondsLeft = jsonNumber(object, "seconds_left").value_or(0);
    event.exitCode = jsonWhole(object, "exit_code").value_or(0);
    event.ratio = jsonNumber(object, "ratio");
    event.ciLow = jsonNumber(object, "ci_low");
    event.ciHigh = jsonNumber(object, "ci_high");
    event.rounds = jsonWhole(object, "rounds").value_or(0);
    event.jobId = jsonText(object, "job_id");
    event.jobState = jsonText(object, "job_state");
    return event;
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
        line +=
            event.coordinate + " started " +
            (event.jobId.empty() ? "(trial #" + std::to_string(event.trialId) + ")" : "as slurm job " + event.jobId);
        break;
    case ProgressEventKind::Submission:
        line += event.coordinate + " submission " + std::to_string(event.submissionIndex) + ": " +
                (event.counted ? verdictWords() : "not counted") + " (" + std::to_string(event.submissionsLeft) +
                " left)" + (event.stored ? "" : ", NOT STORED: " + event.message);
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
    case ProgressEventKind::JobState:
        line += event.coordinate + " slurm job " + event.jobId + ": " +
                (event.jobState.empty() ? std::string("state unknown") : event.jobState);
        break;
    case ProgressEventKind::Note:
        line += "note: " + event.message;
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
