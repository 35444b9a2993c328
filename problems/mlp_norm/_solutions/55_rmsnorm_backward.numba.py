"""numba-cuda solution for 55_rmsnorm_backward: one block per token recomputes r = rsqrt(mean(x^2) + eps), reduces
mean(g * xhat) through shared memory and writes grad_x in float32, keeping r; a second kernel gives each thread one
column and a slice of the tokens, sums grad_out * x * r there, and adds the partial sums into the float32 weight
gradient atomically. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
EPS = 1e-5
TOKEN_SLICES = 32  # tokens are split across this many blocks per column block of the weight gradient


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
def _grad_input(x, weight, grad_out, grad_x, inverse_rms):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    width = x.shape[1]
    partial = cuda.shared.array(THREADS, float32)
    squares = float32(0.0)
    for col in range(tid, width, THREADS):
        squares += x[row, col] * x[row, col]
    r = float32(1.0) / math.sqrt(_block_sum(partial, tid, squares) / width + float32(EPS))
    gx_total = float32(0.0)
    for col in range(tid, width, THREADS):
        gx_total += grad_out[row, col] * weight[col] * x[row, col] * r
    gx_mean = _block_sum(partial, tid, gx_total) / width
    for col in range(tid, width, THREADS):
        grad_x[row, col] = r * (grad_out[row, col] * weight[col] - x[row, col] * r * gx_mean)
    if tid == 0:
        inverse_rms[row] = r


@cuda.jit
def _grad_weight(x, grad_out, inverse_rms, grad_weight):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    tokens = x.shape[0]
    if col >= x.shape[1]:
        return
    per_slice = (tokens + TOKEN_SLICES - 1) // TOKEN_SLICES
    start = cuda.blockIdx.y * per_slice
    total = float32(0.0)
    for row in range(start, min(start + per_slice, tokens)):
        total += grad_out[row, col] * x[row, col] * inverse_rms[row]
    cuda.atomic.add(grad_weight, col, total)


def solve(x, weight, grad_out):
    tokens, width = x.shape
    xf, dyf = x.float(), grad_out.float()
    grad_x = torch.empty(tokens, width, device=x.device, dtype=torch.float32)
    inverse_rms = torch.empty(tokens, device=x.device, dtype=torch.float32)
    _grad_input[tokens, THREADS](xf, weight.float(), dyf, grad_x, inverse_rms)
    grad_weight = torch.zeros(width, device=x.device, dtype=torch.float32)
    _grad_weight[((width + 127) // 128, TOKEN_SLICES), 128](xf, dyf, inverse_rms, grad_weight)
    return grad_x.to(x.dtype), grad_weight
