"""Residual add followed by RMSNorm at hidden size 4096, returning the normalised output and the new residual."""

import torch

# The pre-attention / pre-MLP step of a Llama-3-8B layer during prefill: 4096 tokens at hidden size 4096, eps 1e-5.
# The sum of the block's output and the residual stream becomes the new residual; its RMS-normalised, weighted
# version feeds the next block.
NUM_TOKENS = 4096
HIDDEN = 4096
EPS = 1e-5

MKB_META = {
    "category": "Normalization",
    "tags": ["reduction", "elementwise", "normalization"],
}


def make_inputs(device="cuda"):
    hidden = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.float16)
    residual = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.float16)
    weight = (1.0 + 0.1 * torch.randn(HIDDEN, device=device)).to(torch.float16)
    return [hidden, residual, weight]


def reference(hidden, residual, weight):
    summed = hidden.float() + residual.float()
    inverse_rms = torch.rsqrt(summed.pow(2).mean(dim=-1, keepdim=True) + EPS)
    normed = summed * inverse_rms * weight.float()
    return normed.to(hidden.dtype), summed.to(hidden.dtype)
