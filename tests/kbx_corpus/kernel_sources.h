// Round codes and problem files for the corpus kernel tests, kept out of the test file (moc misreads raw strings).
#pragma once

#include <string>

namespace kbxtest {

/// A problem file as `mkb suite import kernelbenchx` writes it: the task's torch function, inputs, reference.
inline const std::string kProblemSource =
    R"("""KernelBench-X Activation/gelu_bf16: GELU activation with BF16 precision."""

import torch
import torch.nn.functional as F

MKB_META = {"category": "Activation", "origin": "kernelbenchx:Activation/gelu_bf16"}


def gelu_bf16(input, approximate='none'):
    return F.gelu(input, approximate=approximate)


def make_inputs(device="cuda"):
    x = torch.randn((1024,), dtype=torch.bfloat16, device=device)
    return [x]


def reference(x):
    return gelu_bf16(x, approximate='none')
)";

/// A round as the corpus holds it: the kernel, KernelBench-X's separator, its harness with an import-time test call.
inline const std::string kRoundWithHarness = R"(import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def gelu_bf16(input, approximate='none'):
    y = torch.empty_like(input)
    _gelu_kernel[(triton.cdiv(input.numel(), 1024),)](input, y, input.numel(), BLOCK=1024)
    return y
##################################################################################################################
import sys
sys.path.append("utils")
from data_utils import rand_tensor


def test_gelu_bf16():
    x = rand_tensor((2048,), dtype=torch.bfloat16)
    return {"out": gelu_bf16(x)}


test_results = test_gelu_bf16()
)";

/// A round without a separator whose test call sits at module level, a test call under __main__, and a docstring
/// holding a row of '#'.
inline const std::string kRoundWithInlineTestCall = R"(import torch


def gelu_bf16(input, approximate='none'):
    """Doc.
##################################################################################################################
    """
    return input * 0.5


def test_gelu_bf16():
    return gelu_bf16(torch.ones(4))


results = test_gelu_bf16(
    )
if __name__ == "__main__":
    test_gelu_bf16()
)";

/// A problem whose reference does more than return one call.
inline const std::string kProblemWithTwoLineReference = R"(import torch


def make_inputs(device="cuda"):
    return [torch.randn(4, device=device)]


def reference(x):
    y = x * 2
    return torch.relu(y)
)";

} // namespace kbxtest
