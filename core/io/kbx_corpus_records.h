// One line of KernelBench-X's refinement corpus (data/kbx_corpus/*.jsonl) as plain data: a task's kernel before and
// after one round of an agent's refinement, each side with KernelBench-X's own verdict.
#pragma once

#include "core/records/verdict.h"
#include "core/util/result.h"

#include <optional>
#include <string>
#include <string_view>

namespace mkb {

/// One round's kernel of a task as KernelBench-X's harness judged it (its call, exe and perf stages).
struct CorpusSide {
    int round = 0; // "round_0" -> 0
    bool callOk = false;
    bool exeOk = false;
    bool perfOk = false;
    std::optional<double> runtimeMs;
    std::optional<double> speedup; // against KernelBench-X's golden eager timing on its own GPU
    std::string error;             // the harness's captured stderr (often a traceback, sometimes cut short)
    std::string code;              // the Triton source of that round
    std::string sideJson;          // the side object exactly as the corpus holds it (dtype, gbs, tflops, ...)
    std::string reachedBy;         // an after side: the kind of the transition that led to it; "" for a before side
};

struct CorpusRecord {
    int line = 0;         // 1-based line of the corpus file
    std::string category; // "Activation"
    std::string taskName; // "gelu_bf16"
    std::string taskFile; // "gelu_bf16.py": numbering sorts by the file name, as the task importer does
    std::string kind;     // "exe_fail_to_pass,call_fail_to_pass,perf_ok_newly"
    CorpusSide before;
    CorpusSide after;

    std::string taskId() const { return category + "/" + taskName; }
};

/// Parses one line. The error names the line and the field: "line 7: field 'after.exe_ok' must be true or false".
Result<CorpusRecord> parseCorpusRecord(std::string_view text, int line);

/// The verdict KernelBench-X gave one side, in the store's terms: imported = call_ok, correct = exe_ok, passed =
/// exe_ok and perf_ok with a positive speedup (the speedup is 0 otherwise, as in every failed verdict). Its boundary
/// is "kbx" (judged by KernelBench-X's harness, never compared with ours); its JSON keeps the corpus's side object
/// under "kernelbenchx" with "source": "kernelbenchx-corpus", and "reached_by" names the transition's kind.
Verdict corpusVerdict(const CorpusSide& side, const std::string& taskId);

/// The one-line reason of a failed side: the last exception line of its traceback, else its last line that is not a
/// warning; empty when the side passed.
std::string corpusFailureReason(const CorpusSide& side);

} // namespace mkb
