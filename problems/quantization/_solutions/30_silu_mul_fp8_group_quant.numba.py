"""numba-cuda solution for 30_silu_mul_fp8_group_quant: one block of 128 threads per (token, group) computes
silu(gate) * up for its group, reduces the group's amax through shared memory and writes the scaled, saturated
values in float32 and the group's scale; torch rounds them to fp8 e4m3 (a cast: numba has no fp8 type). bfloat16
inputs are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

GROUP_SIZE = 128
FP8_MAX = 448.0
MIN_AMAX = 1e-10


@cuda.jit
def _silu_mul_quantize(gate_up, scaled, scales):
    groups = scales.shape[1]
    row = cuda.blockIdx.x // groups
    group = cuda.blockIdx.x % groups
    tid = cuda.threadIdx.x
    col = group * GROUP_SIZE + tid
    half = scaled.shape[1]
    gate = gate_up[row, col]
    hidden = gate * (float32(1.0) / (float32(1.0) + math.exp(-gate))) * gate_up[row, half + col]
    partial = cuda.shared.array(GROUP_SIZE, float32)
    partial[tid] = abs(hidden)
    cuda.syncthreads()
    stride = GROUP_SIZE // 2
    while stride > 0:
        if tid < stride:
            partial[tid] = max(partial[tid], partial[tid + stride])
        cuda.syncthreads()
        stride //= 2
    scale = max(partial[0], float32(MIN_AMAX)) / float32(FP8_MAX)
    scaled[row, col] = min(max(hidden / scale, float32(-FP8_MAX)), float32(FP8_MAX))
    if tid == 0:
        scales[row, group] = scale


def solve(gate_up):
    tokens, width = gate_up.shape
    groups = width // 2 // GROUP_SIZE
    scaled = torch.empty(tokens, width // 2, device=gate_up.device, dtype=torch.float32)
    scales = torch.empty(tokens, groups, device=gate_up.device, dtype=torch.float32)
    _silu_mul_quantize[tokens * groups, GROUP_SIZE](gate_up.float(), scaled, scales)
    return scaled.to(torch.float8_e4m3fn), scales
