"""fp8 e4m3 cast with its transpose and amax, delayed per-tensor scaling (Transformer Engine, Llama-3-8B FP8 training)."""

import torch

# Transformer Engine's cast_transpose for FP8 training with delayed scaling: the forward GEMM reads the fp8
# activations row-major, the weight-gradient GEMM reads them transposed, and the tensor's amax feeds the next
# step's scale. For Llama-3-8B's MLP down-projection input (8192 tokens x 14336, bf16) and the scale that the
# amax history gave (a float32 tensor of one element):
#   q  = e4m3(saturate(x * scale, 448))       [T, K]     (nearest, ties to even)
#   qt = q transposed                         [K, T]
#   amax = max |x|                             float32 [1]
# Eager PyTorch (cast, scale, clamp, fp8 cast, transpose copy, amax) takes an estimated 1.5-2 ms on an H200.
NUM_TOKENS = 8192
WIDTH = 14336
FP8_MAX = 448.0

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "transpose", "reduction"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.002, "max_rmse": 1.0},
    "outliers": {"inputs": [0]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, WIDTH, device=device, dtype=torch.bfloat16)
    scale = (FP8_MAX / 5.0) * (0.8 + 0.4 * torch.rand(1, device=device))
    return [x, scale]


def reference(x, scale):
    wide = _wide(x)
    q = (wide * _wide(scale)).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    amax = wide.abs().amax().reshape(1)
    return q, q.t().contiguous(), amax.to(torch.float32)
