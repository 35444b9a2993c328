"""Gated linear attention as a CUDA C++ scan: each warp owns two value columns of one head's [128, 128] state (four key
rows per lane, in registers) and walks the tokens, S = diag(alpha_t) S + k_t^T v_t, o_t = q_t S with a warp-shuffle
sum; every 16 tokens the block stages q, k, the gates alpha = exp(logsigmoid(gk) / 16) and its value columns in
shared memory."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define KEY_DIM 128
#define TILE 16
#define WARPS 4
#define COLS_PER_WARP 2
#define BLOCK_COLS (WARPS * COLS_PER_WARP)
#define ROWS_PER_LANE (KEY_DIM / 32)

__device__ __forceinline__ float warp_sum(float value) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
gla_scan(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
         const __nv_bfloat16* __restrict__ v, const __nv_bfloat16* __restrict__ gk, __nv_bfloat16* __restrict__ out,
         int heads, int seq_len, int value_dim, float scale, float inv_normalizer) {
    __shared__ float q_tile[TILE][KEY_DIM];
    __shared__ float k_tile[TILE][KEY_DIM];
    __shared__ float alpha_tile[TILE][KEY_DIM];
    __shared__ float v_tile[TILE][BLOCK_COLS];
    const int bh = blockIdx.x;
    const int batch = bh / heads;
    const int head = bh % heads;
    const int col0 = blockIdx.y * BLOCK_COLS;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const long long key_base = ((long long)batch * seq_len * heads + head) * KEY_DIM;
    const long long value_base = ((long long)batch * seq_len * heads + head) * value_dim;
    const long long key_stride = (long long)heads * KEY_DIM;
    const long long value_stride = (long long)heads * value_dim;
    float state[ROWS_PER_LANE][COLS_PER_WARP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_LANE; ++r)
#pragma unroll
        for (int c = 0; c < COLS_PER_WARP; ++c) state[r][c] = 0.0f;

    for (int t0 = 0; t0 < seq_len; t0 += TILE) {
        __syncthreads();
#pragma unroll
        for (int i = threadIdx.x; i < TILE * KEY_DIM; i += WARPS * 32) {
            const int step = i / KEY_DIM;
            const int d = i % KEY_DIM;
            const long long at = key_base + (long long)(t0 + step) * key_stride + d;
            q_tile[step][d] = __bfloat162float(q[at]) * scale;
            k_tile[step][d] = __bfloat162float(k[at]);
            const float x = __bfloat162float(gk[at]);
            const float log_sigmoid = fminf(x, 0.0f) - log1pf(expf(-fabsf(x)));
            alpha_tile[step][d] = expf(log_sigmoid * inv_normalizer);
        }
#pragma unroll
        for (int i = threadIdx.x; i < TILE * BLOCK_COLS; i += WARPS * 32) {
            const int step = i / BLOCK_COLS;
            const int c = i % BLOCK_COLS;
            v_tile[step][c] = __bfloat162float(v[value_base + (long long)(t0 + step) * value_stride + col0 + c]);
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
                const float alpha = alpha_tile[step][d];
#pragma unroll
                for (int c = 0; c < COLS_PER_WARP; ++c) {
                    state[r][c] = fmaf(alpha, state[r][c], kd * values[c]);
                    partial[c] = fmaf(qd, state[r][c], partial[c]);
                }
            }
#pragma unroll
            for (int c = 0; c < COLS_PER_WARP; ++c) {
                const float total = warp_sum(partial[c]);
                if (lane == c) {
                    out[value_base + (long long)(t0 + step) * value_stride + col0 + warp * COLS_PER_WARP + c] =
                        __float2bfloat16_rn(total);
                }
            }
        }
    }
}
"""

BLOCK_COLS = 8
THREADS = 128
GATE_NORMALIZER = 16.0
_kernel = mkb_cuda.compile(SOURCE, "gla_scan")


def solve(q, k, v, gk):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    gk = gk.contiguous()
    batch, seq_len, heads, key_dim = q.shape
    value_dim = v.shape[-1]
    out = torch.empty_like(v)
    _kernel((batch * heads, value_dim // BLOCK_COLS, 1), (THREADS, 1, 1),
            [q, k, v, gk, out, heads, seq_len, value_dim, float(key_dim**-0.5), 1.0 / GATE_NORMALIZER])
    return out
