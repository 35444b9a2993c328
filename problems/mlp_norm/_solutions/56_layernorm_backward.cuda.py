"""CUDA C++ solution for 56_layernorm_backward: a 128-thread block per 64 rows, nine columns a thread (width 1152), two block reductions a row; partial weight/bias gradients summed by a second kernel in a fixed order."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define THREADS 128
#define PER_THREAD 9  // width 1152 = 128 * 9; thread t owns columns t, t + 128, ...

// Sums `count` values across the block; every thread gets the totals (fixed order: warps 0..3).
__device__ __forceinline__ void block_sum(float* values, int count, float (*scratch)[4]) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int v = 0; v < count; ++v) {
        float s = values[v];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
        if (lane == 0) scratch[v][warp] = s;
    }
    __syncthreads();
    for (int v = 0; v < count; ++v) values[v] = scratch[v][0] + scratch[v][1] + scratch[v][2] + scratch[v][3];
    __syncthreads();
}

extern "C" __global__ void __launch_bounds__(THREADS) layernorm_backward_rows(
    const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ weight,
    const __nv_bfloat16* __restrict__ dy, __nv_bfloat16* __restrict__ dx, float* __restrict__ partial_w,
    float* __restrict__ partial_b, int rows_per_block, float eps) {
    __shared__ float scratch[3][4];
    const int width = THREADS * PER_THREAD;
    const int t = threadIdx.x;
    float w[PER_THREAD], acc_w[PER_THREAD], acc_b[PER_THREAD];
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        w[j] = __bfloat162float(weight[t + j * THREADS]);
        acc_w[j] = 0.0f;
        acc_b[j] = 0.0f;
    }
    for (int r = 0; r < rows_per_block; ++r) {
        const long long base = ((long long)blockIdx.x * rows_per_block + r) * width;
        float xv[PER_THREAD], dv[PER_THREAD];
        float first[1] = {0.0f};
#pragma unroll
        for (int j = 0; j < PER_THREAD; ++j) {
            xv[j] = __bfloat162float(x[base + t + j * THREADS]);
            dv[j] = __bfloat162float(dy[base + t + j * THREADS]);
            first[0] += xv[j];
        }
        block_sum(first, 1, scratch);
        const float mu = first[0] / (float)width;
        float second[3] = {0.0f, 0.0f, 0.0f};  // sum (x - mu)^2, sum g, sum g * (x - mu)
#pragma unroll
        for (int j = 0; j < PER_THREAD; ++j) {
            xv[j] -= mu;
            const float g = dv[j] * w[j];
            second[0] += xv[j] * xv[j];
            second[1] += g;
            second[2] += g * xv[j];
        }
        block_sum(second, 3, scratch);
        const float rstd = rsqrtf(second[0] / (float)width + eps);
        const float mean_g = second[1] / (float)width;
        const float mean_gx = rstd * second[2] / (float)width;
#pragma unroll
        for (int j = 0; j < PER_THREAD; ++j) {
            const float xhat = xv[j] * rstd;
            const float g = dv[j] * w[j];
            dx[base + t + j * THREADS] = __float2bfloat16_rn(rstd * (g - mean_g - xhat * mean_gx));
            acc_w[j] += dv[j] * xhat;
            acc_b[j] += dv[j];
        }
    }
    const long long out = (long long)blockIdx.x * width;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        partial_w[out + t + j * THREADS] = acc_w[j];
        partial_b[out + t + j * THREADS] = acc_b[j];
    }
}

extern "C" __global__ void column_sums(const float* __restrict__ partial_w, const float* __restrict__ partial_b,
                                       float* __restrict__ out_w, float* __restrict__ out_b, int chunks, int width) {
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column >= width) return;
    float sw = 0.0f, sb = 0.0f;
    for (int c = 0; c < chunks; ++c) {
        sw += partial_w[(long long)c * width + column];
        sb += partial_b[(long long)c * width + column];
    }
    out_w[column] = sw;
    out_b[column] = sb;
}
"""

EPS = 1e-6
ROWS_PER_BLOCK = 64
_rows = mkb_cuda.compile(SOURCE, "layernorm_backward_rows")
_column_sums = mkb_cuda.compile(SOURCE, "column_sums")


def solve(x, weight, grad_out):
    x, weight, grad_out = x.contiguous(), weight.contiguous(), grad_out.contiguous()
    rows, width = x.shape  # the kernel is written for width 1152 (128 threads x 9 columns)
    chunks = rows // ROWS_PER_BLOCK
    grad_x = torch.empty_like(x)
    partial_w = torch.empty(chunks, width, dtype=torch.float32, device=x.device)
    partial_b = torch.empty(chunks, width, dtype=torch.float32, device=x.device)
    grad_weight = torch.empty(width, dtype=torch.float32, device=x.device)
    grad_bias = torch.empty(width, dtype=torch.float32, device=x.device)
    _rows((chunks,), (128,), [x, weight, grad_out, grad_x, partial_w, partial_b, ROWS_PER_BLOCK, EPS])
    _column_sums(((width + 127) // 128,), (128,), [partial_w, partial_b, grad_weight, grad_bias, chunks, width])
    return grad_x, grad_weight, grad_bias
