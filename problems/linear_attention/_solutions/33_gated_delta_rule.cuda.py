"""Gated delta rule prefill as a CUDA C++ scan: each warp owns two value columns of one value head's [128, 128] state
(four key rows per lane, in registers) and walks the tokens: decay, recall k S (warp-shuffle sum), write
beta (v - k S) along k, read q S. Every 32 tokens the block stages the L2-normalised q and k, the decays, the betas
and its value columns in shared memory."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define KEY_DIM 128
#define TILE 32
#define WARPS 4
#define COLS_PER_WARP 2
#define BLOCK_COLS (WARPS * COLS_PER_WARP)
#define ROWS_PER_LANE (KEY_DIM / 32)

__device__ __forceinline__ float warp_sum(float value) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
gated_delta_scan(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                 const __nv_bfloat16* __restrict__ v, const __nv_bfloat16* __restrict__ a,
                 const __nv_bfloat16* __restrict__ b, const float* __restrict__ a_log,
                 const float* __restrict__ dt_bias, __nv_bfloat16* __restrict__ out,
                 __nv_bfloat16* __restrict__ final_state, int key_heads, int value_heads, int seq_len, int value_dim,
                 float scale, float eps) {
    __shared__ float q_tile[TILE][KEY_DIM];
    __shared__ float k_tile[TILE][KEY_DIM];
    __shared__ float v_tile[TILE][BLOCK_COLS];
    __shared__ float decay_tile[TILE];
    __shared__ float beta_tile[TILE];
    const int bh = blockIdx.x;
    const int batch = bh / value_heads;
    const int head = bh % value_heads;
    const int key_head = head / (value_heads / key_heads);
    const int col0 = blockIdx.y * BLOCK_COLS;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const long long key_base = ((long long)batch * seq_len * key_heads + key_head) * KEY_DIM;
    const long long value_base = ((long long)batch * seq_len * value_heads + head) * value_dim;
    const long long gate_base = (long long)batch * seq_len * value_heads + head;
    const long long key_stride = (long long)key_heads * KEY_DIM;
    const long long value_stride = (long long)value_heads * value_dim;
    const float a_scale = expf(a_log[head]);
    const float bias = dt_bias[head];
    float state[ROWS_PER_LANE][COLS_PER_WARP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_LANE; ++r)
#pragma unroll
        for (int c = 0; c < COLS_PER_WARP; ++c) state[r][c] = 0.0f;

    for (int t0 = 0; t0 < seq_len; t0 += TILE) {
        __syncthreads();
        // Each warp stages (and L2-normalises) the q and k rows of TILE / WARPS tokens.
#pragma unroll
        for (int step = warp; step < TILE; step += WARPS) {
            const long long at = key_base + (long long)(t0 + step) * key_stride;
            float qv[ROWS_PER_LANE], kv[ROWS_PER_LANE];
            float q_sq = 0.0f, k_sq = 0.0f;
#pragma unroll
            for (int r = 0; r < ROWS_PER_LANE; ++r) {
                qv[r] = __bfloat162float(q[at + r * 32 + lane]);
                kv[r] = __bfloat162float(k[at + r * 32 + lane]);
                q_sq = fmaf(qv[r], qv[r], q_sq);
                k_sq = fmaf(kv[r], kv[r], k_sq);
            }
            const float q_factor = scale / sqrtf(warp_sum(q_sq) + eps);
            const float k_factor = 1.0f / sqrtf(warp_sum(k_sq) + eps);
#pragma unroll
            for (int r = 0; r < ROWS_PER_LANE; ++r) {
                q_tile[step][r * 32 + lane] = qv[r] * q_factor;
                k_tile[step][r * 32 + lane] = kv[r] * k_factor;
            }
        }
#pragma unroll
        for (int i = threadIdx.x; i < TILE * BLOCK_COLS; i += WARPS * 32) {
            const int step = i / BLOCK_COLS;
            const int c = i % BLOCK_COLS;
            v_tile[step][c] = __bfloat162float(v[value_base + (long long)(t0 + step) * value_stride + col0 + c]);
        }
        if (threadIdx.x < TILE) {
            const long long at = gate_base + (long long)(t0 + threadIdx.x) * value_heads;
            const float x = __bfloat162float(a[at]) + bias;
            const float softplus = x > 20.0f ? x : log1pf(expf(x));
            decay_tile[threadIdx.x] = expf(-a_scale * softplus);
            beta_tile[threadIdx.x] = 1.0f / (1.0f + expf(-__bfloat162float(b[at])));
        }
        __syncthreads();
        for (int step = 0; step < TILE; ++step) {
            const float decay = decay_tile[step];
            const float beta = beta_tile[step];
            float recalled[COLS_PER_WARP];
#pragma unroll
            for (int c = 0; c < COLS_PER_WARP; ++c) recalled[c] = 0.0f;
#pragma unroll
            for (int r = 0; r < ROWS_PER_LANE; ++r) {
                const float kd = k_tile[step][r * 32 + lane];
#pragma unroll
                for (int c = 0; c < COLS_PER_WARP; ++c) {
                    state[r][c] *= decay;
                    recalled[c] = fmaf(kd, state[r][c], recalled[c]);
                }
            }
            float written[COLS_PER_WARP], partial[COLS_PER_WARP];
#pragma unroll
            for (int c = 0; c < COLS_PER_WARP; ++c) {
                written[c] = (v_tile[step][warp * COLS_PER_WARP + c] - warp_sum(recalled[c])) * beta;
                partial[c] = 0.0f;
            }
#pragma unroll
            for (int r = 0; r < ROWS_PER_LANE; ++r) {
                const float kd = k_tile[step][r * 32 + lane];
                const float qd = q_tile[step][r * 32 + lane];
#pragma unroll
                for (int c = 0; c < COLS_PER_WARP; ++c) {
                    state[r][c] = fmaf(kd, written[c], state[r][c]);
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
    const long long state_base = (long long)bh * KEY_DIM * value_dim;
#pragma unroll
    for (int r = 0; r < ROWS_PER_LANE; ++r)
#pragma unroll
        for (int c = 0; c < COLS_PER_WARP; ++c)
            final_state[state_base + (long long)(r * 32 + lane) * value_dim + col0 + warp * COLS_PER_WARP + c] =
                __float2bfloat16_rn(state[r][c]);
}
"""

BLOCK_COLS = 8
THREADS = 128
NORM_EPS = 1e-6
_kernel = mkb_cuda.compile(SOURCE, "gated_delta_scan")


def solve(q, k, v, a, b, a_log, dt_bias):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    a = a.contiguous()
    b = b.contiguous()
    a_log = a_log.contiguous()
    dt_bias = dt_bias.contiguous()
    batch, seq_len, key_heads, key_dim = q.shape
    value_heads, value_dim = v.shape[2], v.shape[3]
    out = torch.empty_like(v)
    state = torch.empty(batch, value_heads, key_dim, value_dim, device=v.device, dtype=v.dtype)
    _kernel((batch * value_heads, value_dim // BLOCK_COLS, 1), (THREADS, 1, 1),
            [q, k, v, a, b, a_log, dt_bias, out, state, key_heads, value_heads, seq_len, value_dim,
             float(key_dim**-0.5), NORM_EPS])
    return out, state
