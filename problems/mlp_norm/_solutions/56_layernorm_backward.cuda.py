"""CUDA C++ solution for 56_layernorm_backward: a 128-thread block per 64 rows, nine columns a thread (width 1152), two block reductions a row; partial weight/bias gradients (float32 over 8 rows, then float64) summed in float64 by a second kernel in a fixed order.

The gradients' sums run over 32768 tokens to magnitudes near 700. Summed as a 64-row float32 chain a block and then
a 512-long float32 chain over the blocks, grad_weight's error reached 5.5e-4, past the float32 allowance (3e-4).
Here each thread adds 8 rows in float32, folds that into a float64 accumulator, and the column sum is float64:
about 6e-5 emulated on the CPU, mostly the rounding of the products and statistics themselves.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define THREADS 128
#define PER_THREAD 9  // width 1152 = 128 * 9; thread t owns columns t, t + 128, ...
#define GROUP 8       // rows summed in float32 before they are folded into the float64 accumulators

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
    float w[PER_THREAD], group_w[PER_THREAD], group_b[PER_THREAD];
    double acc_w[PER_THREAD], acc_b[PER_THREAD];
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        w[j] = __bfloat162float(weight[t + j * THREADS]);
        group_w[j] = group_b[j] = 0.0f;
        acc_w[j] = acc_b[j] = 0.0;
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
            group_w[j] += dv[j] * xhat;
            group_b[j] += dv[j];
        }
        if ((r + 1) % GROUP == 0 || r + 1 == rows_per_block) {
#pragma unroll
            for (int j = 0; j < PER_THREAD; ++j) {
                acc_w[j] += (double)group_w[j];
                acc_b[j] += (double)group_b[j];
                group_w[j] = group_b[j] = 0.0f;
            }
        }
    }
    const long long out = (long long)blockIdx.x * width;
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        partial_w[out + t + j * THREADS] = (float)acc_w[j];
        partial_b[out + t + j * THREADS] = (float)acc_b[j];
    }
}

#define SLICES 32  // column_sums' block: 32 columns x SLICES chunk slices

// partial_w/partial_b [chunks, width] float -> out_w/out_b [width] float. A block owns 32 adjacent columns (one per
// lane, so a warp reads 128 contiguous bytes of a partial row); slice k adds chunks k, k + SLICES, ... in float64,
// then the slices are added in the order 0..SLICES-1, in float64, and rounded once to float.
extern "C" __global__ void __launch_bounds__(32 * SLICES) column_sums(
    const float* __restrict__ partial_w, const float* __restrict__ partial_b, float* __restrict__ out_w,
    float* __restrict__ out_b, int chunks, int width) {
    __shared__ double sums_w[SLICES][32], sums_b[SLICES][32];
    const int lane = threadIdx.x & 31, slice = threadIdx.x >> 5;
    const int column = blockIdx.x * 32 + lane;
    double sw = 0.0, sb = 0.0;
    if (column < width) {
#pragma unroll 4
        for (int c = slice; c < chunks; c += SLICES) {
            sw += (double)partial_w[(long long)c * width + column];
            sb += (double)partial_b[(long long)c * width + column];
        }
    }
    sums_w[slice][lane] = sw;
    sums_b[slice][lane] = sb;
    __syncthreads();
    if (slice == 0 && column < width) {
        double total_w = 0.0, total_b = 0.0;
#pragma unroll
        for (int k = 0; k < SLICES; ++k) {
            total_w += sums_w[k][lane];
            total_b += sums_b[k][lane];
        }
        out_w[column] = (float)total_w;
        out_b[column] = (float)total_b;
    }
}
"""

EPS = 1e-6
ROWS_PER_BLOCK = 64
SLICES = 32  # as in SOURCE
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
    _column_sums(((width + 31) // 32,), (32 * SLICES,), [partial_w, partial_b, grad_weight, grad_bias, chunks, width])
    return grad_x, grad_weight, grad_bias
