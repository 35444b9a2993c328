// Reading KernelBench-X corpus lines field by field, and turning each side's call/exe/perf into a stored verdict.
#include "core/io/kbx_corpus_records.h"

#include "core/util/json_input.h"

#include <cmath>
#include <regex>
#include <sstream>
#include <vector>

namespace mkb {
namespace {

using nlohmann::json;

/// Reads the fields of one JSON object of one line; every error names the line and the dotted field.
class LineFields {
public:
    LineFields(const json& object, int line, std::string prefix)
        : object_(object), line_(line), prefix_(std::move(prefix)) {}

    Error fault(const std::string& field, const std::string& what) const {
        return makeError("line " + std::to_string(line_) + ": field '" + prefix_ + field + "' " + what);
    }

    Result<const json*> present(const std::string& field) const {
        auto it = object_.find(field);
        if (it == object_.end()) {
            return fault(field, "is missing");
        }
        return &*it;
    }

    Result<std::string> text(const std::string& field, bool nonEmpty) const {
        auto value = present(field);
        if (!value) {
            return value.error();
        }
        if (!(*value)->is_string()) {
            return fault(field, "must be a string");
        }
        std::string result = (*value)->get<std::string>();
        if (nonEmpty && result.find_first_not_of(" \t\r\n") == std::string::npos) {
            return fault(field, "is empty");
        }
        return result;
    }

    /// A string, or "" for a missing field or null.
    Result<std::string> optionalText(const std::string& field) const {
        auto it = object_.find(field);
        if (it == object_.end() || it->is_null()) {
            return std::string();
        }
        if (!it->is_string()) {
            return fault(field, "must be a string or null");
        }
        return it->get<std::string>();
    }

    Result<bool> flag(const std::string& field) const {
        auto value = present(field);
        if (!value) {
            return value.error();
        }
        if (!(*value)->is_boolean()) {
            return fault(field, "must be true or false");
        }
        return (*value)->get<bool>();
    }

    /// A finite number, or unset for a missing field or null.
    Result<std::optional<double>> amount(const std::string& field) const {
        auto it = object_.find(field);
        if (it == object_.end() || it->is_null()) {
            return std::optional<double>();
        }
        if (!it->is_number() || !std::isfinite(it->get<double>())) {
            return fault(field, "must be a finite number or null");
        }
        return std::optional<double>(it->get<double>());
    }

    Result<const json*> object(const std::string& field) const {
        auto value = present(field);
        if (!value) {
            return value.error();
        }
        if (!(*value)->is_object()) {
            return fault(field, "must be an object");
        }
        return *value;
    }

private:
    const json& object_;
    int line_;
    std::string prefix_;
};

Result<int> roundNumber(const LineFields& fields, const std::string& field) {
    auto name = fields.text(field, true);
    if (!name) {
        return name.error();
    }
    static const std::regex pattern("round_([0-9]{1,3})");
    std::smatch match;
    if (!std::regex_match(*name, match, pattern)) {
        return fields.fault(field, "must read round_<k> (it is '" + *name + "')");
    }
    return std::stoi(match[1].str());
}

Result<CorpusSide> readSide(const json& record, int line, const std::string& sideName, const std::string& codeField,
                            const std::string& roundField) {
    const LineFields top(record, line, "");
    CorpusSide side;
    auto round = roundNumber(top, roundField);
    if (!round) {
        return round.error();
    }
    side.round = *round;
    auto object = top.object(sideName);
    if (!object) {
        return object.error();
    }
    const LineFields fields(**object, line, sideName + ".");
    auto call = fields.flag("call_ok");
    auto exe = fields.flag("exe_ok");
    auto perf = fields.flag("perf_ok");
    for (const auto* read : {&call, &exe, &perf}) {
        if (!*read) {
            return read->error();
        }
    }
    side.callOk = *call;
    side.exeOk = *exe;
    side.perfOk = *perf;
    auto runtime = fields.amount("runtime_ms");
    auto speedup = fields.amount("speedup");
    for (const auto* read : {&runtime, &speedup}) {
        if (!*read) {
            return read->error();
        }
    }
    side.runtimeMs = *runtime;
    side.speedup = *speedup;
    auto error = fields.optionalText("error");
    if (!error) {
        return error.error();
    }
    side.error = *error;
    auto code = top.text(codeField, true);
    if (!code) {
        return code.error();
    }
    side.code = *code;
    side.sideJson = (*object)->dump();
    return side;
}

} // namespace

Result<CorpusRecord> parseCorpusRecord(std::string_view text, int line) {
    // KernelBench-X's records are written by Python's json module, which writes a NaN speedup as the bare token NaN:
    // read it, so that the field holding it is named below, rather than refusing the line as cut short.
    auto parsed = parsePythonJsonInput(text);
    if (!parsed) {
        // The parser counts lines within this one line: its "line 1, column C" is the column of the file's line.
        std::string cause = parsed.error().message;
        if (auto at = cause.find("line 1, column "); at != std::string::npos) {
            cause.replace(at, 15, "column ");
        }
        return makeError("line " + std::to_string(line) + ": not a whole JSON object (" + cause +
                         "; was the line cut short?)");
    }
    if (!parsed->is_object()) {
        return makeError("line " + std::to_string(line) + ": not a JSON object");
    }
    const LineFields fields(*parsed, line, "");
    CorpusRecord record;
    record.line = line;
    auto task = fields.text("task_id", true);
    if (!task) {
        return task.error();
    }
    static const std::regex taskPattern("([A-Za-z0-9_]+)/([^/]+)\\.py");
    std::smatch match;
    if (!std::regex_match(*task, match, taskPattern)) {
        return fields.fault("task_id", "must read <Category>/<task>.py (it is '" + *task + "')");
    }
    record.category = match[1].str();
    record.taskName = match[2].str();
    record.taskFile = record.taskName + ".py";
    auto kind = fields.optionalText("kind");
    if (!kind) {
        return kind.error();
    }
    record.kind = *kind;
    auto before = readSide(*parsed, line, "before", "before_code", "from_round");
    if (!before) {
        return before.error();
    }
    auto after = readSide(*parsed, line, "after", "after_code", "to_round");
    if (!after) {
        return after.error();
    }
    if (after->round <= before->round) {
        return fields.fault("to_round", "must come after from_round (round_" + std::to_string(before->round) + ")");
    }
    record.before = std::move(*before);
    record.after = std::move(*after);
    record.after.reachedBy = record.kind;
    return record;
}

std::string corpusFailureReason(const CorpusSide& side) {
    const bool passed = side.callOk && side.exeOk && side.perfOk;
    if (passed) {
        return "";
    }
    const std::string stage = !side.callOk ? "call" : !side.exeOk ? "exe" : "perf";
    std::vector<std::string> lines;
    std::istringstream in(side.error);
    for (std::string text; std::getline(in, text);) {
        if (text.find_first_not_of(" \t\r") != std::string::npos) {
            lines.push_back(text);
        }
    }
    static const std::regex exceptionLine("^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Exit|Interrupt)\\b.*");
    std::string reason;
    for (auto it = lines.rbegin(); it != lines.rend() && reason.empty(); ++it) {
        if (std::regex_match(*it, exceptionLine)) {
            reason = *it;
        }
    }
    for (auto it = lines.rbegin(); it != lines.rend() && reason.empty(); ++it) {
        if (it->find("Warning") == std::string::npos && it->rfind("  ", 0) != 0) {
            reason = *it;
        }
    }
    if (reason.empty()) {
        reason = "no error text recorded";
    }
    if (reason.size() > 300) {
        reason = reason.substr(0, 300) + "…";
    }
    return "KernelBench-X " + stage + " stage failed: " + reason;
}

Verdict corpusVerdict(const CorpusSide& side, const std::string& taskId) {
    Verdict verdict;
    verdict.imported = side.callOk;
    verdict.correct = side.callOk && side.exeOk;
    verdict.passed = verdict.correct && side.perfOk && side.speedup && *side.speedup > 0;
    verdict.speedupVsEager = verdict.passed ? *side.speedup : 0.0;
    verdict.stage = verdict.passed ? "done" : !side.callOk ? "import" : !side.exeOk ? "correctness" : "timing";
    verdict.error = corpusFailureReason(side);
    // KernelBench-X's call stage is its whole buildability check; it has no compliance rules of ours to fail.
    verdict.compliant = true;
    verdict.boundary = "kbx";
    if (side.runtimeMs) {
        verdict.kernelMedianMs = side.runtimeMs;
    }
    verdict.log = side.error;
    nlohmann::json stored = {{"source", "kernelbenchx-corpus"},
                             {"task", taskId},
                             {"round", "round_" + std::to_string(side.round)},
                             {"kernelbenchx", nlohmann::json::parse(side.sideJson)}};
    if (!side.reachedBy.empty()) {
        stored["reached_by"] = side.reachedBy;
    }
    verdict.json = stored.dump();
    return verdict;
}

} // namespace mkb
