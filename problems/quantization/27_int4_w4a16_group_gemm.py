"""Int4 W4A16 GEMM with group-wise (128) fp16 scales and zero points, fp16 output (Llama-3-8B MLP down_proj)."""

import torch

# GPTQ/AWQ-style 4-bit weight-only inference of Llama-3-8B's MLP down projection (14336 -> 4096) for a decode
# batch of 16 tokens. Weights are packed eight 4-bit values per int32 along the input dimension, GPTQ layout:
# qweight[k // 8, n] holds the unsigned nibble of weight (k, n) at bits 4 * (k % 8) .. 4 * (k % 8) + 3.
# Every group of 128 consecutive input channels of an output channel has one fp16 scale and one fp16 zero point
# (integer-valued, as the GEMM kernels take them): weight = (nibble - zero) * scale. Activations stay fp16.
NUM_TOKENS = 16
IN_FEATURES = 14336
OUT_FEATURES = 4096
GROUP_SIZE = 128
NIBBLES_PER_WORD = 8

MKB_META = {
    "category": "Quantization",
    "tags": ["gemm_epilogue", "quantize", "dequantize", "decode"],
    "outliers": {"inputs": [0]},
    "flops": 1879048192,  # 2 * 16 * 14336 * 4096
}


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, IN_FEATURES, device=device).to(torch.float16)
    qweight = torch.randint(-2**31, 2**31, (IN_FEATURES // NIBBLES_PER_WORD, OUT_FEATURES), dtype=torch.int32,
                            device=device)  # every bit pattern: eight uniform nibbles per word
    groups = IN_FEATURES // GROUP_SIZE
    scales = (0.001 + 0.0012 * torch.rand(groups, OUT_FEATURES, device=device)).to(torch.float16)
    zeros = torch.randint(4, 12, (groups, OUT_FEATURES), device=device).to(torch.float16)
    return [x, qweight, scales, zeros]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(x, qweight, scales, zeros):
    words, out_features = qweight.shape
    groups = scales.shape[0]
    shifts = torch.arange(0, 4 * NIBBLES_PER_WORD, 4, dtype=torch.int32, device=qweight.device)
    nibbles = (qweight.unsqueeze(1) >> shifts.view(1, -1, 1)) & 0xF  # [K / 8, 8, N], k = 8 * word + position
    scale = _wide(scales).unsqueeze(1)
    nibbles = nibbles.view(groups, -1, out_features).to(scale.dtype)  # [groups, 128, N]
    weight = ((nibbles - _wide(zeros).unsqueeze(1)) * scale).view(words * NIBBLES_PER_WORD, out_features)
    return torch.matmul(_wide(x), weight).to(x.dtype)
