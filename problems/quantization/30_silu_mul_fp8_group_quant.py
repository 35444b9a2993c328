"""SiLU-and-mul fused with fp8 e4m3 quantisation in 1x128 groups: fp8 activations plus float32 group scales."""

import torch

# DeepSeek-V3's dense-layer MLP (intermediate size 18432) on a 1024-token prefill chunk: the bf16 output of the
# fused gate/up projection (gate in the first 18432 columns, up in the last) becomes silu(gate) * up in float32,
# which is quantised for the fp8 down projection in groups of 128 consecutive channels of a token. A group's
# scale is its absolute maximum (floored at 1e-10) over 448; each element is divided by its group's scale in
# float32, saturated to +-448 and rounded to the nearest e4m3fn value, ties to even (torch's cast, Hopper's
# cvt.rn.satfinite.e4m3x2.f32 and __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E4M3)). Outputs are judged by
# the quantization metrics: a different exp() or a reciprocal multiply may move a rare element by one fp8 step.
NUM_TOKENS = 1024
INTERMEDIATE = 18432
GROUP_SIZE = 128
FP8_MAX = 448.0
MIN_AMAX = 1e-10

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "elementwise", "reduction", "activation"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.002, "max_rmse": 1.0},
    "outliers": {"inputs": [0]},
}


def make_inputs(device="cuda"):
    gate_up = 2.0 * torch.randn(NUM_TOKENS, 2 * INTERMEDIATE, device=device)
    return [gate_up.to(torch.bfloat16)]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _to_fp8(t):
    return t.to(torch.float8_e4m3fn)


def reference(gate_up):
    tokens, width = gate_up.shape
    wide = _wide(gate_up)
    gate, up = wide[:, : width // 2], wide[:, width // 2:]
    hidden = (gate * torch.sigmoid(gate) * up).view(tokens, -1, GROUP_SIZE)
    scale = hidden.abs().amax(dim=-1, keepdim=True).clamp(min=MIN_AMAX) / FP8_MAX
    quantized = _to_fp8((hidden / scale).clamp(-FP8_MAX, FP8_MAX))
    return quantized.view(tokens, width // 2), scale.squeeze(-1).to(torch.float32)
