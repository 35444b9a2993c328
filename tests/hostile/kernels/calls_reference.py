"""Hostile case: finds the problem module (loaded by the grader, or from disk) and returns its answer via a copy."""

import os
import runpy
import sys
import types

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def _copy(src):
    dst = torch.empty_like(src)
    n_elements = src.numel()
    _copy_kernel[(triton.cdiv(n_elements, BLOCK),)](src, dst, n_elements, BLOCK=BLOCK)
    return dst


def _problem_module():
    for module in list(sys.modules.values()):
        if module is not None and callable(getattr(module, "reference", None)) and \
                callable(getattr(module, "make_inputs", None)):
            return module
    path = os.environ.get("MKB_HOSTILE_PROBLEM") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "problem", "mlp_norm", "01_silu_mul.py")
    return types.SimpleNamespace(**runpy.run_path(path))


def solve(gate, up):
    return _copy(_problem_module().reference(gate, up))
