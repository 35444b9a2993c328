"""Parallel-block residual update (attention + MLP + residual) followed by LayerNorm with bias (Falcon-7B)."""

import torch
import torch.nn.functional as F

# Falcon-7B's parallel attention/MLP block during prefill: 4096 tokens at hidden size 4544 (not a power of two).
# The attention and MLP outputs are both added to the residual stream; the new residual feeds the next layer's
# input_layernorm, a LayerNorm with weight and bias, eps 1e-5. Returns the normalised output and the new residual.
# pallas stays below eager here (0.45x [0.45, 0.46] on an H100, 2026-12-06): JAX's per-call host work around the
# jitted pallas_call and its 5 DLPack imports takes 1.03 ms outside the device, about twice eager's 0.54 ms for
# everything (its kernel: 0.17 ms of device time, Triton's 0.07 ms). The cheapest Pallas round trip measured in the
# suite (problem 18: one import, one export) spends 0.49 ms outside the device; with a Triton-grade kernel, and before
# the copy that packing the three 37 MB inputs into one import needs, that already exceeds eager (inferred).
NUM_TOKENS = 4096
HIDDEN = 4544
EPS = 1e-5

MKB_META = {
    "category": "Normalization",
    "tags": ["reduction", "elementwise", "normalization"],
}


def make_inputs(device="cuda"):
    attention_out = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    mlp_out = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    residual = (0.5 + torch.randn(NUM_TOKENS, HIDDEN, device=device)).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(HIDDEN, device=device)).to(torch.bfloat16)
    bias = (0.1 * torch.randn(HIDDEN, device=device)).to(torch.bfloat16)
    return [attention_out, mlp_out, residual, weight, bias]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(attention_out, mlp_out, residual, weight, bias):
    summed = _wide(residual) + _wide(attention_out) + _wide(mlp_out)
    normed = F.layer_norm(summed, (summed.shape[-1],), _wide(weight), _wide(bias), EPS)
    return normed.to(residual.dtype), summed.to(residual.dtype)
