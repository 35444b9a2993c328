"""Hostile case: finds the foreign-function module already loaded in sys.modules and reads address 0 with it."""

import sys

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


def solve(gate, up):
    foreign = sys.modules["c" + "types"]
    getattr(foreign, "string" + "_at")(0, 1)
    out = torch.empty_like(gate)
    _launch(gate, up, out, gate.numel())
    return out
