"""numba-cuda solution for 56_layernorm_backward: one block per token recomputes the row's mean and rstd, reduces
mean(g) and mean(g * xhat) through shared memory and writes grad_x in float32, keeping mean and rstd; a second
kernel gives each thread one column and a slice of the tokens, sums grad_out * xhat and grad_out there, and adds the
partial sums into the weight and bias gradients atomically. Those column sums run over 32,768 tokens and are kept in
float64 (the slices' sums and the atomic totals), then rounded once to float32: in float32 the bias gradient drifted
1.2x past the grader's allowance on one draw in 20. bfloat16 tensors are cast with torch."""

import math

import torch
from numba import cuda, float32, float64

THREADS = 128
EPS = 1e-6
TOKEN_SLICES = 64  # tokens are split across this many blocks per column block of the weight gradient


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
def _grad_input(x, weight, grad_out, grad_x, means, rstds):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    width = x.shape[1]
    partial = cuda.shared.array(THREADS, float32)
    total = float32(0.0)
    for col in range(tid, width, THREADS):
        total += x[row, col]
    mean = _block_sum(partial, tid, total) / width
    squares = float32(0.0)
    for col in range(tid, width, THREADS):
        centred = x[row, col] - mean
        squares += centred * centred
    rstd = float32(1.0) / math.sqrt(_block_sum(partial, tid, squares) / width + float32(EPS))
    g_total = float32(0.0)
    gx_total = float32(0.0)
    for col in range(tid, width, THREADS):
        g = grad_out[row, col] * weight[col]
        g_total += g
        gx_total += g * (x[row, col] - mean) * rstd
    g_mean = _block_sum(partial, tid, g_total) / width
    gx_mean = _block_sum(partial, tid, gx_total) / width
    for col in range(tid, width, THREADS):
        xhat = (x[row, col] - mean) * rstd
        grad_x[row, col] = rstd * (grad_out[row, col] * weight[col] - g_mean - xhat * gx_mean)
    if tid == 0:
        means[row] = mean
        rstds[row] = rstd


@cuda.jit
def _grad_weight_bias(x, grad_out, means, rstds, grad_weight, grad_bias):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    tokens = x.shape[0]
    if col >= x.shape[1]:
        return
    per_slice = (tokens + TOKEN_SLICES - 1) // TOKEN_SLICES
    start = cuda.blockIdx.y * per_slice
    weight_sum = float64(0.0)
    bias_sum = float64(0.0)
    for row in range(start, min(start + per_slice, tokens)):
        dy = grad_out[row, col]
        weight_sum += float64(dy * (x[row, col] - means[row]) * rstds[row])
        bias_sum += float64(dy)
    cuda.atomic.add(grad_weight, col, weight_sum)
    cuda.atomic.add(grad_bias, col, bias_sum)


def solve(x, weight, grad_out):
    tokens, width = x.shape
    xf, dyf = x.float(), grad_out.float()
    grad_x = torch.empty(tokens, width, device=x.device, dtype=torch.float32)
    means = torch.empty(tokens, device=x.device, dtype=torch.float32)
    rstds = torch.empty(tokens, device=x.device, dtype=torch.float32)
    _grad_input[tokens, THREADS](xf, weight.float(), dyf, grad_x, means, rstds)
    grad_weight = torch.zeros(width, device=x.device, dtype=torch.float64)
    grad_bias = torch.zeros(width, device=x.device, dtype=torch.float64)
    _grad_weight_bias[((width + 127) // 128, TOKEN_SLICES), 128](xf, dyf, means, rstds, grad_weight, grad_bias)
    return grad_x.to(x.dtype), grad_weight.to(torch.float32), grad_bias.to(torch.float32)
