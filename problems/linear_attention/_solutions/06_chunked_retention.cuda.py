"""Retention as a CUDA C++ scan: each warp owns two value columns of one head's state (four key rows per lane, in
registers) and walks the tokens, o_t = q_t (gamma S + k_t^T v_t) with a warp-shuffle sum; every 32 tokens the block
stages q, k and its value columns in shared memory."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_fp16.h>

#define DIM 128
#define TILE 32
#define WARPS 4
#define COLS_PER_WARP 2
#define BLOCK_COLS (WARPS * COLS_PER_WARP)
#define ROWS_PER_LANE (DIM / 32)

__device__ __forceinline__ float warp_sum(float value) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
retention_scan(const __half* __restrict__ q, const __half* __restrict__ k, const __half* __restrict__ v,
               const float* __restrict__ decay, __half* __restrict__ out, int heads, int seq_len, float scale) {
    __shared__ float q_tile[TILE][DIM];
    __shared__ float k_tile[TILE][DIM];
    __shared__ float v_tile[TILE][BLOCK_COLS];
    const int bh = blockIdx.x;
    const int col0 = blockIdx.y * BLOCK_COLS;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const float gamma = decay[bh % heads];
    const long long base = (long long)bh * seq_len * DIM;
    float state[ROWS_PER_LANE][COLS_PER_WARP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_LANE; ++r)
#pragma unroll
        for (int c = 0; c < COLS_PER_WARP; ++c) state[r][c] = 0.0f;

    for (int t0 = 0; t0 < seq_len; t0 += TILE) {
        __syncthreads();
#pragma unroll
        for (int i = threadIdx.x; i < TILE * DIM / 2; i += WARPS * 32) {
            const int step = i / (DIM / 2);
            const int d = (i % (DIM / 2)) * 2;
            const long long at = base + (long long)(t0 + step) * DIM + d;
            const float2 qv = __half22float2(*reinterpret_cast<const __half2*>(q + at));
            const float2 kv = __half22float2(*reinterpret_cast<const __half2*>(k + at));
            q_tile[step][d] = qv.x * scale;
            q_tile[step][d + 1] = qv.y * scale;
            k_tile[step][d] = kv.x;
            k_tile[step][d + 1] = kv.y;
        }
#pragma unroll
        for (int i = threadIdx.x; i < TILE * BLOCK_COLS; i += WARPS * 32) {
            const int step = i / BLOCK_COLS;
            const int c = i % BLOCK_COLS;
            v_tile[step][c] = __half2float(v[base + (long long)(t0 + step) * DIM + col0 + c]);
        }
        __syncthreads();
        for (int step = 0; step < TILE; ++step) {
            float partial[COLS_PER_WARP];
            float values[COLS_PER_WARP];
#pragma unroll
            for (int c = 0; c < COLS_PER_WARP; ++c) {
                partial[c] = 0.0f;
                values[c] = v_tile[step][warp * COLS_PER_WARP + c];
            }
#pragma unroll
            for (int r = 0; r < ROWS_PER_LANE; ++r) {
                const int d = r * 32 + lane;
                const float kd = k_tile[step][d];
                const float qd = q_tile[step][d];
#pragma unroll
                for (int c = 0; c < COLS_PER_WARP; ++c) {
                    state[r][c] = fmaf(gamma, state[r][c], kd * values[c]);
                    partial[c] = fmaf(qd, state[r][c], partial[c]);
                }
            }
#pragma unroll
            for (int c = 0; c < COLS_PER_WARP; ++c) {
                const float total = warp_sum(partial[c]);
                if (lane == c) {
                    out[base + (long long)(t0 + step) * DIM + col0 + warp * COLS_PER_WARP + c] = __float2half_rn(total);
                }
            }
        }
    }
}
"""

BLOCK_COLS = 8
THREADS = 128
_kernel = mkb_cuda.compile(SOURCE, "retention_scan")


def solve(q, k, v, decay):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    decay = decay.contiguous()
    batch, heads, seq_len, dim = q.shape
    out = torch.empty_like(q)
    _kernel((batch * heads, dim // BLOCK_COLS, 1), (THREADS, 1, 1),
            [q, k, v, decay, out, heads, seq_len, float(dim**-0.5)])
    return out
