"""numba-cuda solution for 17_parallel_residual_layernorm: one block per token adds the attention and MLP outputs to
the residual in float32, reduces the row's mean and then its centred squares through shared memory, and writes the
LayerNorm output (weight and bias) and the new residual in float32. bfloat16 tensors are cast with torch (numba reads
no bfloat16)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
EPS = 1e-5


@cuda.jit(device=True)
def _block_sum(partial, tid, value):
    partial[tid] = value
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    total = partial[0]
    cuda.syncthreads()  # partial is reused by the next reduction
    return total


@cuda.jit
def _residual_layernorm(attention_out, mlp_out, residual, weight, bias, normed, summed):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = residual.shape[1]
    partial = cuda.shared.array(THREADS, float32)
    total = float32(0.0)
    for col in range(tid, cols, THREADS):
        value = residual[row, col] + attention_out[row, col] + mlp_out[row, col]
        summed[row, col] = value
        total += value
    mean = _block_sum(partial, tid, total) / cols
    squares = float32(0.0)
    for col in range(tid, cols, THREADS):
        centred = summed[row, col] - mean  # each thread reads back only what it wrote
        squares += centred * centred
    inverse_std = float32(1.0) / math.sqrt(_block_sum(partial, tid, squares) / cols + float32(EPS))
    for col in range(tid, cols, THREADS):
        normed[row, col] = (summed[row, col] - mean) * inverse_std * weight[col] + bias[col]


def solve(attention_out, mlp_out, residual, weight, bias):
    normed = torch.empty(residual.shape, device=residual.device, dtype=torch.float32)
    summed = torch.empty(residual.shape, device=residual.device, dtype=torch.float32)
    _residual_layernorm[residual.shape[0], THREADS](attention_out.float(), mlp_out.float(), residual.float(),
                                                    weight.float(), bias.float(), normed, summed)
    return normed.to(residual.dtype), summed.to(residual.dtype)
