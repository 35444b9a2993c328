"""Mamba-2 selective state update for one decode step over a batch of float32 SSM states (Mamba2-2.7B)."""

import torch
import torch.nn.functional as F

# Mamba2-2.7B (d_inner 5120 as 80 heads of dim 64, d_state 128, one B/C group) serving 256 sequences: one new token
# per sequence updates each head's [64, 128] float32 state as selective_state_update does:
# dt = softplus(dt_raw + dt_bias), state = exp(dt A) state + (dt x) B^T, y = state C + D x. Returns y (bf16) and the
# new states. The states take 671 MB, read and written once by a fused kernel.
# Eager estimate on an H200: ~1.5-2 ms (five full passes over the 671 MB state in float32).
BATCH = 256
HEADS = 80
HEAD_DIM = 64
STATE_DIM = 128

MKB_META = {
    "category": "LinearAlgebra",
    "tags": ["scan", "decode", "elementwise", "reduction", "mamba"],
    "outliers": {"inputs": [0, 2, 3]},
}


def make_inputs(device="cuda"):
    x = torch.randn(BATCH, HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    dt = torch.randn(BATCH, HEADS, device=device, dtype=torch.bfloat16)
    b = torch.randn(BATCH, STATE_DIM, device=device, dtype=torch.bfloat16)
    c = torch.randn(BATCH, STATE_DIM, device=device, dtype=torch.bfloat16)
    state = torch.randn(BATCH, HEADS, HEAD_DIM, STATE_DIM, device=device, dtype=torch.float32)
    a = -torch.exp(torch.log(1.0 + 15.0 * torch.rand(HEADS, device=device)))  # A in (-16, -1]
    d = torch.rand(HEADS, device=device, dtype=torch.float32)
    step = 0.001 * torch.pow(100.0, torch.rand(HEADS, device=device))
    dt_bias = step + torch.log(-torch.expm1(-step))  # inverse softplus of dt in [0.001, 0.1)
    return [x, dt, b, c, state, a, d, dt_bias]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(x, dt, b, c, state, a, d, dt_bias):
    step = F.softplus(_wide(dt) + _wide(dt_bias))  # [B, H]
    decay = torch.exp(step * _wide(a))  # [B, H]
    xw = _wide(x)
    new_state = _wide(state) * decay[:, :, None, None] + (step[:, :, None] * xw)[..., None] * _wide(b)[:, None, None, :]
    y = (new_state * _wide(c)[:, None, None, :]).sum(-1) + _wide(d)[None, :, None] * xw
    return y.to(x.dtype), new_state.to(state.dtype)
