"""Residual add then RMSNorm on bf16 activations (64 x 128: the CPU copy of the GPU fixture)."""

import torch

ROWS = 64
COLS = 128
EPS = 1e-6

MKB_META = {"tags": ["norm"]}


def make_inputs(device="cpu"):
    """Activations, residual and the norm's weight, bf16, drawn from the grader-seeded RNG."""
    x = torch.randn(ROWS, COLS, device=device, dtype=torch.float32).to(torch.bfloat16)
    residual = torch.randn(ROWS, COLS, device=device, dtype=torch.float32).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(COLS, device=device, dtype=torch.float32)).to(torch.bfloat16)
    return [x, residual, weight]


def reference(x, residual, weight):
    """The semantics in eager PyTorch: the sum in float32, normalised per row, scaled, stored as bf16."""
    h = x.float() + residual.float()
    normed = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return (normed * weight.float()).to(x.dtype)
