"""Triton solution for 18_swiglu_concat: a 2-D grid of (row, column block), one read of gate and up, float32 math."""

import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _silu_and_mul_kernel(gate_up_ptr, out_ptr, intermediate, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    columns = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = columns < intermediate
    source = gate_up_ptr + row * (2 * intermediate) + columns
    gate = tl.load(source, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(source + intermediate, mask=mask, other=0.0).to(tl.float32)
    result = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + row * intermediate + columns, result.to(out_ptr.dtype.element_ty), mask=mask)


def solve(gate_up):
    gate_up = gate_up.contiguous()
    rows, width = gate_up.shape
    intermediate = width // 2
    out = torch.empty(rows, intermediate, device=gate_up.device, dtype=gate_up.dtype)
    _silu_and_mul_kernel[(rows, triton.cdiv(intermediate, BLOCK))](gate_up, out, intermediate, BLOCK=BLOCK,
                                                                   num_warps=8)
    return out
