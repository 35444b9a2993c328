"""Gated RMSNorm over 128-wide heads: rmsnorm(o) * weight * silu(z) for 8192 tokens x 32 heads (Qwen3-Next's Gated DeltaNet)."""

import torch

# Qwen3-Next-80B-A3B's Gated DeltaNet layers normalise each value head's output (32 heads of width 128) with an
# RMSNorm (eps 1e-6, one weight vector shared by the heads) and gate it with silu of the z projection:
#   y = o * rsqrt(mean(o^2) + eps) * weight * silu(z)          per head row of 128, bf16 in and out
# for an 8192-token prefill chunk. Eager PyTorch makes about ten float32 passes over 64-128 MB: an estimated
# 0.5-0.7 ms on an H200.
NUM_TOKENS = 8192
NUM_HEADS = 32
HEAD_DIM = 128
EPS = 1e-6

MKB_META = {
    "category": "Normalization",
    "tags": ["reduction", "normalization", "elementwise", "activation"],
    "outliers": {"inputs": [0, 1]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    o = torch.randn(NUM_TOKENS, NUM_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    z = torch.randn(NUM_TOKENS, NUM_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(HEAD_DIM, device=device)).to(torch.bfloat16)
    return [o, z, weight]


def reference(o, z, weight):
    ow = _wide(o)
    zw = _wide(z)
    normed = ow * torch.rsqrt(ow.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return (normed * _wide(weight) * zw * torch.sigmoid(zw)).to(o.dtype)
