"""numba-cuda solution for 03_fused_add_rmsnorm: one block per token sums the residual in float32, reduces the squares
through shared memory and writes the normalised row and the new residual in float32; torch casts them to float16
(this numba exports no float16 conversion at its top level)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
EPS = 1e-5


@cuda.jit
def _add_rmsnorm(hidden, residual, weight, normed, summed):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = hidden.shape[1]
    partial = cuda.shared.array(THREADS, float32)
    total = float32(0.0)
    for col in range(tid, cols, THREADS):
        value = float32(hidden[row, col]) + float32(residual[row, col])
        total += value * value
    partial[tid] = total
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    inverse_rms = float32(1.0) / math.sqrt(partial[0] / float32(cols) + float32(EPS))
    for col in range(tid, cols, THREADS):
        value = float32(hidden[row, col]) + float32(residual[row, col])
        summed[row, col] = value
        normed[row, col] = value * inverse_rms * float32(weight[col])


def solve(hidden, residual, weight):
    hidden, residual, weight = hidden.contiguous(), residual.contiguous(), weight.contiguous()
    normed = torch.empty(hidden.shape, device=hidden.device, dtype=torch.float32)
    summed = torch.empty(hidden.shape, device=hidden.device, dtype=torch.float32)
    _add_rmsnorm[hidden.shape[0], THREADS](hidden, residual, weight, normed, summed)
    return normed.to(hidden.dtype), summed.to(hidden.dtype)
