"""numba-cuda solution for 69_mxfp4_moe_expert_gemv: one warp per (token, routed slot, output row) walks the expert's
packed e2m1 row (two values a byte, decoded through a 16-entry table) with its e8m0 block scales (2^(s - 127), from
a 256-entry table a first kernel fills), reduces the dot product with the token's activations across the warp with
shuffles and adds the expert's bias. bf16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

WARPS = 8
MX_BLOCK = 32
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


@cuda.jit
def _scale_table(table):
    i = cuda.grid(1)
    if i < table.shape[0]:
        table[i] = math.pow(2.0, float(i - 127))  # exact: a power of two


@cuda.jit
def _expert_gemv(x, w_blocks, w_scales, bias, topk_ids, values, scales, out):
    lane = cuda.threadIdx.x % 32
    rows = w_blocks.shape[1]
    top_k = topk_ids.shape[1]
    index = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    valid = index < x.shape[0] * top_k * rows
    safe = index if valid else 0  # every lane joins the shuffles
    row = safe % rows
    pair = safe // rows
    token = pair // top_k
    expert = topk_ids[token, pair % top_k]
    acc = float32(0.0)
    for byte in range(lane, w_blocks.shape[2], 32):
        packed = w_blocks[expert, row, byte]
        scale = scales[w_scales[expert, row, (2 * byte) // MX_BLOCK]]
        acc += (x[token, 2 * byte] * values[packed & 15] + x[token, 2 * byte + 1] * values[packed >> 4]) * scale
    offset = 16
    while offset > 0:
        acc += cuda.shfl_xor_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    if lane == 0 and valid:
        out[token, pair % top_k, row] = acc + bias[expert, row]


def solve(x, w_blocks, w_scales, bias, topk_ids):
    tokens, top_k = topk_ids.shape
    rows = w_blocks.shape[1]
    values = torch.tensor(E2M1_VALUES, device=x.device, dtype=torch.float32)
    scales = torch.empty(256, device=x.device, dtype=torch.float32)
    _scale_table[1, 256](scales)
    out = torch.empty(tokens, top_k, rows, device=x.device, dtype=torch.float32)
    warps = tokens * top_k * rows
    _expert_gemv[(warps + WARPS - 1) // WARPS, WARPS * 32](x.float(), w_blocks.contiguous(), w_scales.contiguous(),
                                                           bias.float(), topk_ids.contiguous(), values, scales, out)
    return out.to(x.dtype)
