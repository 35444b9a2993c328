"""CUDA C++ solution for 55_rmsnorm_backward: a 1024-thread block per 16 rows (eight bf16 values a thread) writes grad_x and a partial weight gradient; a second kernel sums the 256 partials of each column in float64, in a fixed order.

The column sum is float64 because a 256-long float32 chain over partials that grow to ~270 rounds at every step:
its error reached 1.1e-4, past the float32 allowance (3 x eps x max|grad_weight|, ~9e-5). With float64 partial
sums only the 16-row float32 chains and the products' rounding remain (~2e-5 emulated on the CPU).
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

__device__ __forceinline__ void unpack8(const uint4& raw, float* out) {
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(pairs[j]);
        out[2 * j] = f.x;
        out[2 * j + 1] = f.y;
    }
}

// rows_per_block rows of x/dy [rows, hidden] bf16, blockDim.x == hidden / 8; partial [gridDim.x, hidden] float.
// __launch_bounds__(1024): a block of 1024 threads must fit the register file (64 registers a thread).
extern "C" __global__ void __launch_bounds__(1024) rmsnorm_backward_rows(
    const uint4* __restrict__ x, const uint4* __restrict__ weight, const uint4* __restrict__ dy,
    uint4* __restrict__ dx, float* __restrict__ partial, int rows_per_block, float eps) {
    __shared__ float sums[32][2];
    const int vectors = blockDim.x;
    const int hidden = vectors * 8;
    const int i = threadIdx.x, lane = i & 31, warp = i >> 5, warps = blockDim.x >> 5;
    float w[8], acc[8];
    unpack8(weight[i], w);
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = 0.0f;
    for (int r = 0; r < rows_per_block; ++r) {
        const long long row = (long long)blockIdx.x * rows_per_block + r;
        float xv[8], dv[8];
        unpack8(x[row * vectors + i], xv);
        unpack8(dy[row * vectors + i], dv);
        float sum_x2 = 0.0f, sum_gx = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            sum_x2 += xv[j] * xv[j];
            sum_gx += dv[j] * w[j] * xv[j];
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum_x2 += __shfl_xor_sync(0xffffffffu, sum_x2, offset);
            sum_gx += __shfl_xor_sync(0xffffffffu, sum_gx, offset);
        }
        if (lane == 0) {
            sums[warp][0] = sum_x2;
            sums[warp][1] = sum_gx;
        }
        __syncthreads();
        float total_x2 = 0.0f, total_gx = 0.0f;
        for (int k = 0; k < warps; ++k) {
            total_x2 += sums[k][0];
            total_gx += sums[k][1];
        }
        __syncthreads();  // sums is rewritten by the next row
        const float rinv = rsqrtf(total_x2 / (float)hidden + eps);
        const float c = rinv * total_gx / (float)hidden;  // mean(g * xhat)
        uint4 out_raw;
        __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(&out_raw);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float xa = xv[2 * j] * rinv, xb = xv[2 * j + 1] * rinv;
            const float ga = dv[2 * j] * w[2 * j], gb = dv[2 * j + 1] * w[2 * j + 1];
            out[j] = __floats2bfloat162_rn(rinv * (ga - xa * c), rinv * (gb - xb * c));
            acc[2 * j] += dv[2 * j] * xa;
            acc[2 * j + 1] += dv[2 * j + 1] * xb;
        }
        dx[row * vectors + i] = out_raw;
    }
    float* mine = partial + (long long)blockIdx.x * hidden + i * 8;
#pragma unroll
    for (int j = 0; j < 8; ++j) mine[j] = acc[j];
}

#define SLICES 8  // column_sum's block: 32 columns x SLICES chunk slices

// partial [chunks, hidden] float -> out [hidden] float. A block owns 32 adjacent columns (one per lane, so a warp
// reads 128 contiguous bytes of a partial row); slice k adds chunks k, k + SLICES, ... in float64, then the slices
// are added in the order 0..SLICES-1, in float64, and rounded once to float.
extern "C" __global__ void __launch_bounds__(32 * SLICES) column_sum(const float* __restrict__ partial,
                                                                   float* __restrict__ out, int chunks, int hidden) {
    __shared__ double slice_sums[SLICES][32];
    const int lane = threadIdx.x & 31, slice = threadIdx.x >> 5;
    const int column = blockIdx.x * 32 + lane;
    double acc = 0.0;
    if (column < hidden) {
#pragma unroll 8
        for (int c = slice; c < chunks; c += SLICES) acc += (double)partial[(long long)c * hidden + column];
    }
    slice_sums[slice][lane] = acc;
    __syncthreads();
    if (slice == 0 && column < hidden) {
        double total = 0.0;
#pragma unroll
        for (int k = 0; k < SLICES; ++k) total += slice_sums[k][lane];
        out[column] = (float)total;
    }
}
"""

EPS = 1e-5
ROWS_PER_BLOCK = 16
SLICES = 8  # as in SOURCE
_rows = mkb_cuda.compile(SOURCE, "rmsnorm_backward_rows")
_column_sum = mkb_cuda.compile(SOURCE, "column_sum")


def solve(x, weight, grad_out):
    x, weight, grad_out = x.contiguous(), weight.contiguous(), grad_out.contiguous()
    rows, hidden = x.shape
    chunks = rows // ROWS_PER_BLOCK
    grad_x = torch.empty_like(x)
    partial = torch.empty(chunks, hidden, dtype=torch.float32, device=x.device)
    grad_weight = torch.empty(hidden, dtype=torch.float32, device=x.device)
    _rows((chunks,), (hidden // 8,), [x, weight, grad_out, grad_x, partial, ROWS_PER_BLOCK, EPS])
    _column_sum(((hidden + 31) // 32,), (32 * SLICES,), [partial, grad_weight, chunks, hidden])
    return grad_x, grad_weight
