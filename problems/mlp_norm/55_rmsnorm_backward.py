"""RMSNorm backward at hidden size 8192: the input gradient and the weight gradient summed over 4096 tokens (Llama-3.1-70B)."""

import torch

# The backward pass of a Llama-3.1-70B RMSNorm (hidden 8192, eps 1e-5) during training on a 4096-token sequence,
# bf16 activations. With r = 1 / sqrt(mean(x^2) + eps), xhat = x * r and g = grad_out * weight:
#   grad_x      = r * (g - xhat * mean(g * xhat))          per token, bf16
#   grad_weight = sum over tokens of grad_out * xhat       float32 (the optimizer's master copy is float32)
# The statistics are recomputed from x, as fused kernels do. Eager PyTorch needs about a dozen float32 passes over
# 64 MB tensors: an estimated 0.5-0.7 ms on an H200.
NUM_TOKENS = 4096
HIDDEN = 8192
EPS = 1e-5

MKB_META = {
    "category": "Normalization",
    "tags": ["reduction", "normalization", "backward"],
    "outliers": {"inputs": [0, 2]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(HIDDEN, device=device)).to(torch.bfloat16)
    grad_out = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    return [x, weight, grad_out]


def reference(x, weight, grad_out):
    xw = _wide(x)
    dy = _wide(grad_out)
    r = torch.rsqrt(xw.pow(2).mean(dim=-1, keepdim=True) + EPS)
    xhat = xw * r
    g = dy * _wide(weight)
    grad_x = r * (g - xhat * (g * xhat).mean(dim=-1, keepdim=True))
    grad_weight = (dy * xhat).sum(dim=0)
    return grad_x.to(x.dtype), grad_weight.to(torch.float32)
