"""fp8 e4m3 GEMM with 1x128 activation-group and 128x128 weight-block float32 scales, bf16 output (DeepSeek-V3)."""

import math

import torch

# DeepSeek-V3's fp8 linear layers (the shared expert's fused gate/up projection, 7168 -> 2 * 2048) on a 2048-token
# prefill chunk. Activations are fp8 e4m3 with one float32 scale per token and 128-channel group
# (a_scales[m, k // 128]); weights are fp8 e4m3 with one float32 scale per 128x128 block
# (b_scales[n // 128, k // 128]). out[m, n] = sum_k a[m, k] * a_scales[m, k // 128] * b[n, k] * b_scales[n // 128,
# k // 128], in bf16. Each 128-wide slice of the product is accumulated and then scaled, as DeepGEMM does.
# numba cannot beat eager here: the work is one 120 GFLOP product, which eager runs as a float32 cuBLAS GEMM in 2.74 ms
# (bench/results/suite-2dsl-h200.md), about 44 TFLOP/s, two thirds of the H200's float32 CUDA-core peak; numba reaches
# neither the fp8 nor the bf16 tensor cores (no MMA), so it must match cuBLAS's own SIMT GEMM in Python-written FMAs,
# and its shared-memory tiled GEMM (64 x 64 tiles, 4 x 4 per thread) was measured at 0.13x of eager on an H200.
# numba stays below eager on an H100 too (0.13x [0.13, 0.13], 2026-12-06): eager's 2.68 ms, dequantisation included,
# is 45 TFLOP/s over the 120 GFLOP, 88% of the 51 TFLOP/s float32 peak probed on that card; numba's GEMM runs at 6.1
# TFLOP/s (19.8 ms of device time), and at the rate of the suite's fastest numba GEMM (25_mixtral_grouped_expert_gemm,
# about 26 TFLOP/s by its file) this product would still take 4.6 ms (inferred).
NUM_TOKENS = 2048
IN_FEATURES = 7168
OUT_FEATURES = 4096
BLOCK = 128
FP8_MAX = 448.0
CODE_SPREAD = 64.0  # the fp8 codes are drawn as N(0, 64^2), saturated to +-448

MKB_META = {
    "category": "Quantization",
    "tags": ["gemm_epilogue", "quantize", "dequantize"],
    "outliers": False,  # the inputs are fp8 codes and their scales
    "flops": 120259084288,  # 2 * 2048 * 4096 * 7168
}


def _to_fp8(t):
    return t.to(torch.float8_e4m3fn)


def make_inputs(device="cuda"):
    k_blocks = IN_FEATURES // BLOCK
    a = _to_fp8((CODE_SPREAD * torch.randn(NUM_TOKENS, IN_FEATURES, device=device)).clamp(-FP8_MAX, FP8_MAX))
    b = _to_fp8((CODE_SPREAD * torch.randn(OUT_FEATURES, IN_FEATURES, device=device)).clamp(-FP8_MAX, FP8_MAX))
    a_scales = (0.5 + torch.rand(NUM_TOKENS, k_blocks, device=device)) / CODE_SPREAD
    b_scales = (0.5 + torch.rand(OUT_FEATURES // BLOCK, k_blocks, device=device)) / (
        CODE_SPREAD * math.sqrt(IN_FEATURES))
    return [a, a_scales, b, b_scales]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(a, a_scales, b, b_scales):
    m, k = a.shape
    n = b.shape[0]
    sa = _wide(a_scales)
    sb = _wide(b_scales)
    a_real = (a.to(sa.dtype).view(m, k // BLOCK, BLOCK) * sa.unsqueeze(-1)).view(m, k)
    b_real = (b.to(sb.dtype).view(n // BLOCK, BLOCK, k // BLOCK, BLOCK) * sb.view(n // BLOCK, 1, k // BLOCK, 1))
    return torch.matmul(a_real, b_real.view(n, k).t()).to(torch.bfloat16)
