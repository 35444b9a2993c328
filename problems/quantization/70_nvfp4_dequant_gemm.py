"""NVFP4 weight GEMM, emulated: e2m1 codes with fp8 e4m3 scales per 16 values and a float32 tensor scale (Qwen3-32B gate/up)."""

import torch

# NVIDIA's NVFP4 checkpoints of Qwen3-32B (hidden 5120, intermediate 25600) store each linear weight as e2m1
# codes, two per byte (element 2i in the low nibble), with one fp8 e4m3 scale per 16 consecutive values of a row
# and one float32 scale for the whole tensor: w[n, k] = e2m1(code) * block_scale[n, k // 16] * tensor_scale.
# The H200 has no FP4 unit, so the weight-only path is emulated: the fused gate/up projection (51200 x 5120) for a
# decode batch of 64 tokens,
#   out = x @ w.T          bf16 activations, float32 accumulation, bf16 out.
# The packed weights take 131 MB (plus 16 MB of scales). Eager PyTorch dequantises 262 M values through a lookup
# table in float32 and runs an fp32 GEMM: an estimated 4-6 ms on an H200.
NUM_TOKENS = 64
IN_FEATURES = 5120
OUT_FEATURES = 51200
NV_BLOCK = 16
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]

MKB_META = {
    "category": "Quantization",
    "tags": ["gemm_epilogue", "dequantize", "decode"],
    "outliers": {"inputs": [0]},
    "flops": 33554432000,  # 2 * 64 * 51200 * 5120
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, IN_FEATURES, device=device, dtype=torch.bfloat16)
    w_packed = torch.randint(0, 256, (OUT_FEATURES, IN_FEATURES // 2), device=device, dtype=torch.uint8)
    block_scales = (448.0 * (0.05 + 0.95 * torch.rand(OUT_FEATURES, IN_FEATURES // NV_BLOCK, device=device))).to(
        torch.float8_e4m3fn)
    tensor_scale = (1.0 + torch.rand(1, device=device)) * (0.05 / (448.0 * 6.0))
    return [x, w_packed, block_scales, tensor_scale]


def reference(x, w_packed, block_scales, tensor_scale):
    wide_x = _wide(x)
    dtype = wide_x.dtype
    table = torch.tensor(E2M1_VALUES, dtype=dtype, device=x.device)
    rows = w_packed.shape[0]
    codes = torch.stack([w_packed & 15, w_packed >> 4], dim=-1).reshape(rows, -1).to(torch.long)
    values = table[codes].view(rows, -1, NV_BLOCK) * block_scales.to(dtype).unsqueeze(-1)
    weight = values.reshape(rows, -1) * _wide(tensor_scale).to(dtype)
    return torch.matmul(wide_x, weight.t()).to(x.dtype)
