// Turning one stored round of KernelBench-X's refinement corpus, with its problem file, into the kernel.py our
// contract wants (DESIGN §5.1): the round's code, then a solve(*inputs) that makes the call the problem's reference()
// makes.
//
// A corpus round is the Triton module KernelBench-X ran: the task's function (named after the task, e.g.
// `def gelu_bf16(input)` launching `_gelu_kernel[grid]`) and, below a separator line of '#', KernelBench-X's test
// harness, whose module-level statements (`from data_utils import rand_tensor`, `test_results = test_gelu_bf16()`)
// run when the module is imported. Our grader imports kernel.py and then calls solve with make_inputs()'s list, so:
// - the harness below the separator is left out (its imports and its call run at import; its test functions are
//   called only from there);
// - above it, a module-level statement that calls a `test_*` function (`test_results = test_x()`, `test_x()`) is
//   commented out, so line numbers stay those of the corpus's code; anything else is kept as it is, including
//   `if __name__ == "__main__":` blocks, which do not run when the grader imports the module;
// - solve is the problem's reference() renamed: same parameters, same one `return task(...)` line. It calls the
//   task's function and never reference itself (compliance forbids that). A task whose function is itself called
//   solve (LinearAlgebra/solve) keeps it as kbx_task_solve, which the new solve calls.
#pragma once

#include "core/util/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// The kernel.py made from a corpus round, with what was left out of the round's code.
struct CorpusKernel {
    std::string source; // the kernel.py, ending in a newline
    std::string call;   // the call solve makes, as the reference writes it: "gelu_bf16(x, approximate='none')"
    std::vector<std::string>
        dropped; // each change to the round's code in words: "lines 41-75: KernelBench-X's harness ..."
};

/// Adapts one round. `where` names the round in errors ("task Activation/gelu_bf16 round_1"). Errors (one line
/// each, starting with `where`): the round holds no code; the problem file cannot be tokenized, has no module-level
/// reference(), or its reference is not one `return <call>` line. A round whose code is not valid Python is still
/// adapted (the harness is then cut at its separator alone, and nothing above it is commented out): the grader
/// reports that it does not compile, as it would for any kernel.
Result<CorpusKernel> corpusRoundKernel(std::string_view roundCode, std::string_view problemSource,
                                       const std::string& where);

} // namespace mkb
