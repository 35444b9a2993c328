"""Boundary case (CPU corpus, problem 02): a cpusim kernel adds the residual in float32; eager PyTorch norms."""

import cpusim
import torch

EPS = 1e-6


@cpusim.kernel
def _residual_add_row(row, x, residual, h):
    h[row] = x[row].float() + residual[row].float()


def solve(x, residual, weight):
    h = torch.empty(x.shape, device=x.device, dtype=torch.float32)
    _residual_add_row[(x.shape[0],)](x, residual, h)
    normed = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return (normed * weight.float()).to(x.dtype)
