"""Boundary case: a genuine hybrid on problem 02. A Triton kernel adds the residual in float32; eager PyTorch norms."""

import torch
import triton
import triton.language as tl

BLOCK = 1024
EPS = 1e-6


@triton.jit
def _residual_add_kernel(x_ptr, r_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(h_ptr + offsets, x + r, mask=mask)


def solve(x, residual, weight):
    x, residual = x.contiguous(), residual.contiguous()
    h = torch.empty(x.shape, device=x.device, dtype=torch.float32)
    n_elements = x.numel()
    _residual_add_kernel[(triton.cdiv(n_elements, BLOCK),)](x, residual, h, n_elements, BLOCK=BLOCK)
    normed = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return (normed * weight.float()).to(x.dtype)
