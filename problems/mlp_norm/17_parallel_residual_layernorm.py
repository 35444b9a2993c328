"""Parallel-block residual update (attention + MLP + residual) followed by LayerNorm with bias (Falcon-7B)."""

import torch
import torch.nn.functional as F

# Falcon-7B's parallel attention/MLP block during prefill: 4096 tokens at hidden size 4544 (not a power of two).
# The attention and MLP outputs are both added to the residual stream; the new residual feeds the next layer's
# input_layernorm, a LayerNorm with weight and bias, eps 1e-5. Returns the normalised output and the new residual.
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
