"""numba-cuda solution for 21_decode_swiglu_mlp: a skinny GEMM kernel (one warp per output column reads its weight row
once and keeps all 32 tokens' partial sums in registers, then reduces them across the warp with shuffles) runs the
gate/up projection and, after silu(gate) * up, the down projection. The bf16 roundings of the reference (projection
outputs, the activation) are torch casts between the kernels; numba reads no bfloat16, so inputs are cast with torch."""

import math

import torch
from numba import cuda, float32

TOKENS = 32  # the decode batch: one register accumulator per token
WARPS = 8


@cuda.jit
def _skinny_gemm(x, weight, out):
    lane = cuda.threadIdx.x % 32
    column = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    if column >= weight.shape[0]:
        return
    acc = cuda.local.array(TOKENS, float32)
    for t in range(TOKENS):
        acc[t] = float32(0.0)
    for k in range(lane, weight.shape[1], 32):
        w = weight[column, k]
        for t in range(TOKENS):
            acc[t] += x[t, k] * w
    for t in range(TOKENS):
        value = acc[t]
        offset = 16
        while offset > 0:
            value += cuda.shfl_xor_sync(0xFFFFFFFF, value, offset)
            offset //= 2
        if lane == 0:
            out[t, column] = value


@cuda.jit
def _silu_mul(gate_up, hidden):
    half = hidden.shape[1]
    for index in range(cuda.grid(1), hidden.shape[0] * half, cuda.gridsize(1)):
        row = index // half
        col = index % half
        gate = gate_up[row, col]
        hidden[row, col] = gate / (float32(1.0) + math.exp(-gate)) * gate_up[row, half + col]


def _project(x, weight):
    out = torch.empty(x.shape[0], weight.shape[0], device=x.device, dtype=torch.float32)
    _skinny_gemm[(weight.shape[0] + WARPS - 1) // WARPS, WARPS * 32](x, weight, out)
    return out


def solve(x, gate_up_weight, down_weight):
    assert x.shape[0] == TOKENS
    gate_up = _project(x.float(), gate_up_weight.float()).to(x.dtype).float()  # the bf16 projection output
    hidden = torch.empty(TOKENS, gate_up.shape[1] // 2, device=x.device, dtype=torch.float32)
    _silu_mul[132 * 8, 256](gate_up, hidden)
    return _project(hidden.to(x.dtype).float(), down_weight.float()).to(x.dtype)
