"""Triton solution for 03_fused_add_rmsnorm: one program per row, one read of each input, float32 math."""

import torch
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def _add_rmsnorm_kernel(hidden_ptr, residual_ptr, weight_ptr, out_ptr, residual_out_ptr, hidden_size, eps,
                        BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < hidden_size
    offsets = row * hidden_size + columns
    summed = (tl.load(hidden_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
              + tl.load(residual_ptr + offsets, mask=mask, other=0.0).to(tl.float32))
    tl.store(residual_out_ptr + offsets, summed.to(residual_out_ptr.dtype.element_ty), mask=mask)
    inverse_rms = tl.rsqrt(tl.sum(summed * summed, axis=0) / hidden_size + eps)
    weight = tl.load(weight_ptr + columns, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, (summed * inverse_rms * weight).to(out_ptr.dtype.element_ty), mask=mask)


def solve(hidden, residual, weight):
    hidden, residual, weight = hidden.contiguous(), residual.contiguous(), weight.contiguous()
    rows, hidden_size = hidden.shape
    out = torch.empty_like(hidden)
    residual_out = torch.empty_like(hidden)
    _add_rmsnorm_kernel[(rows,)](hidden, residual, weight, out, residual_out, hidden_size, EPS,
                                 BLOCK=triton.next_power_of_2(hidden_size), num_warps=8)
    return out, residual_out
