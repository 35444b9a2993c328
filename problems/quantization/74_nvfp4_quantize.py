"""NVFP4 quantisation of activations: e2m1 codes packed two per byte, fp8 e4m3 scales per 16 values and a tensor scale (DeepSeek-R1 FP4)."""

import torch

# NVIDIA's NVFP4 DeepSeek-R1 runs W4A4 GEMMs and quantises activations on the fly. For hidden 7168 and an
# 8192-token prefill chunk (bf16), with global_scale = 448 * 6 / amax(calibration) a float32 tensor of one element,
# per block of 16 consecutive values:
#   s8    = e4m3(min(amax(block) / 6 * global_scale, 448))          (nearest, ties to even)
#   y     = x * (global_scale / s8)   in float32, or 0 when s8 is 0
#   code  = the e2m1 value nearest to y (ties to the even code, saturating at 6), sign in bit 3
#   bytes = code[2i] | code[2i + 1] << 4   (uint8 [T, 3584]),   scales = s8  (float8_e4m3fn [T, 448]).
# Rounding as thresholds on |y|: 0.25 (tie to 0), 0.75 (up), 1.25 (down), 1.75 (up), 2.5 (down), 3.5 (up),
# 5 (down). A kernel that divides in another order may move a rare code by one step; the quantisation metrics
# allow that. Eager PyTorch runs some twenty float32 passes over 117-235 MB: an estimated 2-3 ms on an H200.
NUM_TOKENS = 8192
HIDDEN = 7168
NV_BLOCK = 16
FP8_MAX = 448.0

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "reduction", "elementwise"],
    "quant": {"min_cosine": 0.999, "max_relative_l1": 0.01, "max_rmse": 2.0},
    "outliers": {"inputs": [0]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device).to(torch.bfloat16)
    calibration_amax = 4.0 + 2.0 * torch.rand(1, device=device)
    return [x, FP8_MAX * 6.0 / calibration_amax]


def _e2m1_codes(values):
    a = values.abs()
    magnitude = ((a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8)
                 + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8)
                 + (a > 5.0).to(torch.uint8))
    return magnitude + 8 * (values < 0).to(torch.uint8)


def reference(x, global_scale):
    tokens, hidden = x.shape
    blocks = x.float().view(tokens, hidden // NV_BLOCK, NV_BLOCK)
    g = global_scale.float()
    s8 = (blocks.abs().amax(dim=-1) / 6.0 * g).clamp(max=FP8_MAX).to(torch.float8_e4m3fn)
    s = s8.float()
    multiplier = torch.where(s > 0, g / s, torch.zeros_like(s))
    codes = _e2m1_codes(blocks * multiplier.unsqueeze(-1)).view(tokens, hidden)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    return packed, s8
