"""Hostile case: a Triton kernel that stores 2 TiB past the end of its output (an illegal memory access)."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


FAR_OFFSET = 1 << 40  # elements; a 64-bit kernel argument


@triton.jit
def _stray_store_kernel(gate_ptr, up_ptr, out_ptr, n_elements, far_offset, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    gate = tl.load(gate_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(up_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    result = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + offsets + far_offset, result.to(out_ptr.dtype.element_ty), mask=mask)


def solve(gate, up):
    out = torch.empty_like(gate)
    n_elements = gate.numel()
    _stray_store_kernel[(triton.cdiv(n_elements, BLOCK),)](gate, up, out, n_elements, FAR_OFFSET, BLOCK=BLOCK)
    return out
