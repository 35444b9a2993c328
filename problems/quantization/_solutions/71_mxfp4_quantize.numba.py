"""numba-cuda solution for 71_mxfp4_quantize: one warp per 32-value MX block (a lane per value) takes the block's amax
with shuffles, its shared exponent (frexp's exponent - 3, clamped to +-127), scales its value by 2^-shared, encodes
it as an e2m1 code, and even lanes pack their own code with their neighbour's into one byte. bfloat16 inputs are
cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda

MX_BLOCK = 32
WARPS = 8


@cuda.jit(device=True)
def _e2m1_code(value):
    a = abs(value)
    magnitude = ((1 if a > 0.25 else 0) + (1 if a >= 0.75 else 0) + (1 if a > 1.25 else 0) + (1 if a >= 1.75 else 0)
                 + (1 if a > 2.5 else 0) + (1 if a >= 3.5 else 0) + (1 if a > 5.0 else 0))
    return magnitude + (8 if value < 0 else 0)


@cuda.jit
def _quantize(x, packed, scales):
    lane = cuda.threadIdx.x % 32
    block = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    blocks_per_row = scales.shape[1]
    valid = block < x.shape[0] * blocks_per_row
    row = block // blocks_per_row if valid else 0
    group = block % blocks_per_row
    col = group * MX_BLOCK + lane
    value = x[row, col]
    amax = abs(value)
    offset = 16
    while offset > 0:
        amax = max(amax, cuda.shfl_xor_sync(0xFFFFFFFF, amax, offset))
        offset //= 2
    shared = -127
    if amax > 0:
        shared = min(max(math.frexp(amax)[1] - 3, -127), 127)
    code = _e2m1_code(math.ldexp(value, -shared))
    neighbour = cuda.shfl_down_sync(0xFFFFFFFF, code, 1)
    if valid:
        if lane % 2 == 0:
            packed[row, col // 2] = code | (neighbour << 4)
        if lane == 0:
            scales[row, group] = shared + 127


def solve(x):
    tokens, hidden = x.shape
    groups = hidden // MX_BLOCK
    packed = torch.empty(tokens, hidden // 2, device=x.device, dtype=torch.uint8)
    scales = torch.empty(tokens, groups, device=x.device, dtype=torch.uint8)
    _quantize[(tokens * groups + WARPS - 1) // WARPS, WARPS * 32](x.float(), packed, scales)
    return packed, scales
