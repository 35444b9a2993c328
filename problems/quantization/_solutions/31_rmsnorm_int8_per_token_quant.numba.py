"""numba-cuda solution for 31_rmsnorm_int8_per_token_quant: one block per token reduces the squares and then the
normalised row's amax through shared memory, and writes int8 codes round-half-even(normed / scale), saturated to
+-127, with the token's scale."""

import math

import torch
from numba import cuda, float32

THREADS = 512
EPS = 1e-5
INT8_MAX = 127.0
MIN_AMAX = 1e-10


@cuda.jit(device=True)
def _round_half_even(v):
    r = float32(math.floor(v + float32(0.5)))
    if r - v == float32(0.5) and r % float32(2.0) != float32(0.0):  # a tie: torch.round takes the even neighbour
        r -= float32(1.0)
    return r


@cuda.jit
def _norm_quantize(x, weight, codes, scales):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    squares = float32(0.0)
    for col in range(tid, x.shape[1], THREADS):
        value = float32(x[row, col])
        squares += value * value
    partial[tid] = squares
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    inverse_rms = float32(1.0) / math.sqrt(partial[0] / float32(x.shape[1]) + float32(EPS))
    cuda.syncthreads()  # partial is reused for the amax
    amax = float32(0.0)
    for col in range(tid, x.shape[1], THREADS):
        amax = max(amax, abs(float32(x[row, col]) * inverse_rms * float32(weight[col])))
    partial[tid] = amax
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] = max(partial[tid], partial[tid + stride])
        cuda.syncthreads()
        stride //= 2
    scale = max(partial[0], float32(MIN_AMAX)) / float32(INT8_MAX)
    for col in range(tid, x.shape[1], THREADS):
        normed = float32(x[row, col]) * inverse_rms * float32(weight[col])
        codes[row, col] = int(min(max(_round_half_even(normed / scale), float32(-INT8_MAX)), float32(INT8_MAX)))
    if tid == 0:
        scales[row, 0] = scale


def solve(x, weight):
    tokens = x.shape[0]
    codes = torch.empty(x.shape, device=x.device, dtype=torch.int8)
    scales = torch.empty(tokens, 1, device=x.device, dtype=torch.float32)
    _norm_quantize[tokens, THREADS](x.contiguous(), weight.contiguous(), codes, scales)
    return codes, scales
