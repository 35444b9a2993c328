"""Hostile case: calls the problem's input generator from inside solve (then computes honestly)."""

import os
import runpy
import sys
import types

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _silu_mul_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    gate = tl.load(gate_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(up_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    result = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(gate, up, out, n_elements):
    _silu_mul_kernel[(triton.cdiv(n_elements, BLOCK),)](gate, up, out, n_elements, BLOCK=BLOCK)


def _problem_module():
    for module in list(sys.modules.values()):
        if module is not None and callable(getattr(module, "reference", None)) and \
                callable(getattr(module, "make_inputs", None)):
            return module
    path = os.environ.get("MKB_HOSTILE_PROBLEM") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "problem", "mlp_norm", "01_silu_mul.py")
    return types.SimpleNamespace(**runpy.run_path(path))


def solve(gate, up):
    _problem_module().make_inputs(device=gate.device)
    out = torch.empty_like(gate)
    _launch(gate, up, out, gate.numel())
    return out
