"""RMSNorm fused with dynamic per-token int8 quantisation: int8 activations plus one float32 scale per token."""

import torch

# SmoothQuant W8A8 serving of Llama-2-7B (hidden size 4096, RMSNorm eps 1e-5) on a 4096-token prefill batch, as
# vLLM's rms_norm_dynamic_per_token_quant does it: y = x * rsqrt(mean(x^2) + eps) * weight in float32; the token's
# scale is max|y| (floored at 1e-10) over 127; q = y / scale rounded to the nearest integer, ties to even
# (torch.round, __float2int_rn, cvt.rni), saturated to +-127. Outputs are judged by the quantization metrics: a
# different reduction order or rsqrt may move a rare element by one step.
NUM_TOKENS = 4096
HIDDEN = 4096
EPS = 1e-5
INT8_MAX = 127.0
MIN_AMAX = 1e-10

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "reduction", "normalization"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.002, "max_rmse": 0.1},
    "outliers": {"inputs": [0, 1]},
}


def make_inputs(device="cuda"):
    token_magnitude = 0.25 + 2.0 * torch.rand(NUM_TOKENS, 1, device=device)
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device) * token_magnitude
    weight = 1.0 + 0.2 * torch.randn(HIDDEN, device=device)
    return [x.to(torch.float16), weight.to(torch.float16)]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(x, weight):
    wide = _wide(x)
    inverse_rms = torch.rsqrt(wide.pow(2).mean(dim=-1, keepdim=True) + EPS)
    normed = wide * inverse_rms * _wide(weight)
    scale = normed.abs().amax(dim=-1, keepdim=True).clamp(min=MIN_AMAX) / INT8_MAX
    quantized = torch.round(normed / scale).clamp(-INT8_MAX, INT8_MAX).to(torch.int8)
    return quantized, scale.to(torch.float32)
