"""Hostile case: a Triton kernel that writes zeros everywhere."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _zeros_kernel(out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.zeros([BLOCK], dtype=tl.float32).to(out_ptr.dtype.element_ty), mask=mask)


def solve(gate, up):
    out = torch.empty_like(gate)
    n_elements = out.numel()
    _zeros_kernel[(triton.cdiv(n_elements, BLOCK),)](out, n_elements, BLOCK=BLOCK)
    return out
