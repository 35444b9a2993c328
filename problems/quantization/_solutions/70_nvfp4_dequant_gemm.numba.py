"""numba-cuda solution for 70_nvfp4_dequant_gemm: a skinny GEMM for the 64-token batch. One warp per output row of the
weight reads its packed e2m1 bytes (two values each) with its block scales, decodes them through a 16-entry table
and keeps all 64 tokens' partial sums in registers, then reduces them across the warp with shuffles and applies the
tensor scale. fp8 block scales and bf16 activations are cast with torch (numba reads neither); the table is the
e2m1 value list."""

import torch
from numba import cuda, float32

TOKENS = 64
WARPS = 4
NV_BLOCK = 16
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


@cuda.jit
def _nvfp4_gemm(x, w_packed, block_scales, tensor_scale, table, out):
    lane = cuda.threadIdx.x % 32
    row = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    valid = row < w_packed.shape[0]
    safe_row = row if valid else 0  # every lane joins the shuffles
    values = cuda.shared.array(16, float32)
    if cuda.threadIdx.x < 16:
        values[cuda.threadIdx.x] = table[cuda.threadIdx.x]
    cuda.syncthreads()
    acc = cuda.local.array(TOKENS, float32)
    for t in range(TOKENS):
        acc[t] = float32(0.0)
    for byte in range(lane, w_packed.shape[1], 32):
        packed = w_packed[safe_row, byte]
        scale = block_scales[safe_row, (2 * byte) // NV_BLOCK]
        low = values[packed & 15] * scale
        high = values[packed >> 4] * scale
        for t in range(TOKENS):
            acc[t] += x[t, 2 * byte] * low + x[t, 2 * byte + 1] * high
    g = tensor_scale[0]
    for t in range(TOKENS):
        value = acc[t]
        offset = 16
        while offset > 0:
            value += cuda.shfl_xor_sync(0xFFFFFFFF, value, offset)
            offset //= 2
        if lane == 0 and valid:
            out[t, row] = value * g


def solve(x, w_packed, block_scales, tensor_scale):
    assert x.shape[0] == TOKENS
    rows = w_packed.shape[0]
    table = torch.tensor(E2M1_VALUES, device=x.device, dtype=torch.float32)
    out = torch.empty(TOKENS, rows, device=x.device, dtype=torch.float32)
    _nvfp4_gemm[(rows + WARPS - 1) // WARPS, WARPS * 32](x.float(), w_packed.contiguous(), block_scales.float(),
                                                         tensor_scale.float().contiguous(), table, out)
    return out.to(x.dtype)
