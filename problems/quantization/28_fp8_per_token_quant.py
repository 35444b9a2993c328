"""Dynamic per-token fp8 e4m3 quantisation of activations: an fp8 tensor and one float32 scale per token (vLLM)."""

import torch

# vLLM's dynamic_per_token_scaled_fp8_quant in front of Llama-3-8B's MLP down projection (input width 14336) for
# a 2048-token prefill batch of bf16 activations. Each token's scale is its absolute maximum over 448 (the
# e4m3fn maximum), floored at 1 / (448 * 512); every element is divided by its token's scale in float32,
# saturated to +-448 and rounded to the nearest e4m3fn value, ties to even (what torch's cast, Hopper's
# cvt.rn.satfinite.e4m3x2.f32 and __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E4M3) do). Outputs are judged
# by the quantization metrics, so a kernel that multiplies by the reciprocal scale instead of dividing (a last-bit
# difference that may move a rare element by one fp8 step) still passes.
# pallas stays below eager here (0.62x [0.59, 0.67] on an H100, 2026-12-06): it imports one array, yet JAX's per-call
# host work around the jitted pallas_call, with torch's fp8 cast of its float32 output, takes 0.72 ms outside the
# device, more than eager's 0.52 ms for everything. With the cast moved into the kernel and Triton's device time
# (0.036 ms, against its 0.128 ms), the cheapest Pallas round trip measured in the suite (problem 18: one import, one
# export, 0.49 ms outside the device) still comes to about eager's time, not below it (inferred).
NUM_TOKENS = 2048
HIDDEN = 14336
FP8_MAX = 448.0
MIN_SCALE = 1.0 / (FP8_MAX * 512.0)

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "reduction", "elementwise"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.002, "max_rmse": 1.0},
    "outliers": {"inputs": [0]},
}


def make_inputs(device="cuda"):
    token_magnitude = 0.25 + 2.0 * torch.rand(NUM_TOKENS, 1, device=device)
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device) * token_magnitude
    return [x.to(torch.bfloat16)]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _to_fp8(t):
    return t.to(torch.float8_e4m3fn)


def reference(x):
    wide = _wide(x)
    scale = (wide.abs().amax(dim=-1, keepdim=True) / FP8_MAX).clamp(min=MIN_SCALE)
    quantized = _to_fp8((wide / scale).clamp(-FP8_MAX, FP8_MAX))
    return quantized, scale.to(torch.float32)
