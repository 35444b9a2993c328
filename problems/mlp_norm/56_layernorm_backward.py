"""LayerNorm backward at width 1152 over 32768 vision tokens: input, weight and bias gradients (Gemma 3's SigLIP tower)."""

import torch

# Gemma 3's vision encoder is a SigLIP-So400m tower: LayerNorm at width 1152, eps 1e-6. Fine-tuning it on a batch
# of 8 images at 896x896 gives 8 * 64 * 64 = 32768 patch tokens, bf16. With mu and rstd the row statistics,
# xhat = (x - mu) * rstd and g = grad_out * weight:
#   grad_x      = rstd * (g - mean(g) - xhat * mean(g * xhat))      per token, bf16
#   grad_weight = sum over tokens of grad_out * xhat                 float32
#   grad_bias   = sum over tokens of grad_out                        float32
# Statistics are recomputed from x. Eager PyTorch runs some fifteen float32 passes over 75 MB tensors: an
# estimated 0.8-1.0 ms on an H200.
NUM_TOKENS = 32768
WIDTH = 1152
EPS = 1e-6

MKB_META = {
    "category": "Normalization",
    "tags": ["reduction", "normalization", "backward"],
    "outliers": {"inputs": [0, 2]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = (0.5 + torch.randn(NUM_TOKENS, WIDTH, device=device) * 2.0).to(torch.bfloat16)
    weight = (1.0 + 0.1 * torch.randn(WIDTH, device=device)).to(torch.bfloat16)
    grad_out = torch.randn(NUM_TOKENS, WIDTH, device=device, dtype=torch.bfloat16)
    return [x, weight, grad_out]


def reference(x, weight, grad_out):
    xw = _wide(x)
    dy = _wide(grad_out)
    mu = xw.mean(dim=-1, keepdim=True)
    centred = xw - mu
    rstd = torch.rsqrt(centred.pow(2).mean(dim=-1, keepdim=True) + EPS)
    xhat = centred * rstd
    g = dy * _wide(weight)
    grad_x = rstd * (g - g.mean(dim=-1, keepdim=True) - xhat * (g * xhat).mean(dim=-1, keepdim=True))
    grad_weight = (dy * xhat).sum(dim=0)
    grad_bias = dy.sum(dim=0)
    return grad_x.to(x.dtype), grad_weight.to(torch.float32), grad_bias.to(torch.float32)
