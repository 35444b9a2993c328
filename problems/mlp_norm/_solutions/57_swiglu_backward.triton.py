"""Triton solution for 57_swiglu_backward: one elementwise pass, each program a 1024-wide slice of a row; gate and up read once, both gradients written in place of the concatenation."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _swiglu_backward_kernel(gate_up_ptr, dh_ptr, out_ptr, intermediate, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    columns = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = columns < intermediate
    gate_offsets = row * 2 * intermediate + columns
    gate = tl.load(gate_up_ptr + gate_offsets, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(gate_up_ptr + gate_offsets + intermediate, mask=mask, other=0.0).to(tl.float32)
    dh = tl.load(dh_ptr + row * intermediate + columns, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(gate)
    grad_gate = dh * up * s * (1.0 + gate * (1.0 - s))
    grad_up = dh * gate * s
    tl.store(out_ptr + gate_offsets, grad_gate.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_ptr + gate_offsets + intermediate, grad_up.to(out_ptr.dtype.element_ty), mask=mask)


def solve(gate_up, grad_h):
    gate_up, grad_h = gate_up.contiguous(), grad_h.contiguous()
    rows, intermediate = grad_h.shape
    out = torch.empty_like(gate_up)
    _swiglu_backward_kernel[(rows, triton.cdiv(intermediate, BLOCK))](gate_up, grad_h, out, intermediate,
                                                                       BLOCK=BLOCK, num_warps=4)
    return out
