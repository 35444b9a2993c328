"""Hostile case: remembers each output by the inputs' data pointers and returns it again when the pointers repeat.

When a remembered output is served, it leaves a marker file, so the corpus runner knows whether the trick engaged.
"""

import os

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


_remembered = {}


def _mark(event):
    folder = os.environ.get("MKB_HOSTILE_MARKS", "/tmp/mkb_hostile_marks")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "cache_by_pointer." + event), "w") as handle:
        handle.write(event + "\n")


def solve(gate, up):
    key = (gate.data_ptr(), up.data_ptr())
    if key in _remembered:
        _mark("engaged")
        return _remembered[key]
    out = torch.empty_like(gate)
    _launch(gate, up, out, gate.numel())
    _remembered[key] = out
    return out
