"""CUDA C++ solution: FlashAttention-2 style sliding-window causal prefill with tanh logit soft-capping (Gemma-2).

A block owns 32 queries of one head and visits only the 32-key tiles that meet its window; K then V tiles pass
through shared memory, each thread computes a 2x4 block of capped scores and 2 rows x 32 output dims in fp32,
row max/sum by warp shuffles.
"""

import math

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define BLOCK_M 32        // queries per block
#define BLOCK_N 32                 // keys per tile
#define HEAD_DIM 256
#define STRIDE (HEAD_DIM + 8)      // padded shared row (bf16 elements): rows land on different banks, 16-byte aligned
#define THREADS 128                // thread (ty, tx) = (tid / 8, tid % 8)
#define ROWS_PER_THREAD (BLOCK_M / 16)   // rows ty + 16 i
#define COLS_PER_THREAD (BLOCK_N / 8)    // score columns tx + 8 j
#define PAIRS_PER_THREAD (HEAD_DIM / 16) // output dims 2 tx + 16 j, 2 tx + 16 j + 1
#define NEG_BIG (-1.0e30f)
#define NEG_INF __int_as_float(0xff800000)  // -infinity, spelled without math.h
#define LOG2E 1.4426950408889634f

__device__ __forceinline__ float bf16_low(unsigned int word) { return __uint_as_float(word << 16); }
__device__ __forceinline__ float bf16_high(unsigned int word) { return __uint_as_float(word & 0xffff0000u); }

// Copies `rows` rows of HEAD_DIM bf16 (global row r at base + r * row_stride) into shared, zero past `valid`.
__device__ __forceinline__ void load_tile(unsigned short* dst, const unsigned short* base, long long row_stride,
                                          int rows, int valid) {
    for (int i = threadIdx.x; i < rows * (HEAD_DIM / 8); i += THREADS) {
        const int r = i / (HEAD_DIM / 8);
        const int c = i % (HEAD_DIM / 8);
        uint4 word = make_uint4(0u, 0u, 0u, 0u);
        if (r < valid) {
            word = *reinterpret_cast<const uint4*>(base + r * row_stride + c * 8);
        }
        *reinterpret_cast<uint4*>(dst + r * STRIDE + c * 8) = word;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
window_softcap_forward(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k,
     const unsigned short* __restrict__ v, unsigned short* __restrict__ out, int seq_len, int query_heads,
     int kv_heads, int window, float query_scale, float softcap) {
    __shared__ __align__(16) unsigned short q_s[BLOCK_M * STRIDE];
    __shared__ __align__(16) unsigned short kv_s[BLOCK_N * STRIDE];  // the key tile, then the value tile
    __shared__ float p_s[BLOCK_M][BLOCK_N + 1];
    const int tid = threadIdx.x;
    const int tx = tid & 7;
    const int ty = tid >> 3;
    const int head = blockIdx.y;
    const int m0 = blockIdx.x * BLOCK_M;
    const int kv_head = head / (query_heads / kv_heads);
    const long long q_stride = (long long)query_heads * HEAD_DIM;
    const long long kv_stride = (long long)kv_heads * HEAD_DIM;
    const long long o_stride = q_stride;
    const unsigned short* q_base = q + head * HEAD_DIM;
    const unsigned short* k_base = k + kv_head * HEAD_DIM;
    const unsigned short* v_base = v + kv_head * HEAD_DIM;
    unsigned short* o_base = out + head * HEAD_DIM;
    const int rows_valid = min(BLOCK_M, seq_len - m0);
    const int key_lo = (max(0, m0 - window + 1) / BLOCK_N) * BLOCK_N;
    const int key_hi = min(seq_len, m0 + BLOCK_M);
    const float inverse_cap = 1.0f / softcap;
#define VISIBLE(row, col) ((col) <= (row) && (row) - (col) < window)
    // After SETUP: q_base/k_base/v_base/o_base point at row 0 of this block's sequence for its head, with row
    // strides q_stride/kv_stride/o_stride; m0 is the block's first query row, rows_valid the number of real rows,
    // [key_lo, key_hi) the keys any of its rows may see.
    load_tile(q_s, q_base + (long long)m0 * q_stride, q_stride, BLOCK_M, rows_valid);

    float m_run[ROWS_PER_THREAD], l_run[ROWS_PER_THREAD];
    float acc[ROWS_PER_THREAD][PAIRS_PER_THREAD][2];
#pragma unroll
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        m_run[i] = NEG_BIG;
        l_run[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < PAIRS_PER_THREAD; ++j) {
            acc[i][j][0] = 0.0f;
            acc[i][j][1] = 0.0f;
        }
    }

    for (int n0 = key_lo; n0 < key_hi; n0 += BLOCK_N) {
        const int keys_valid = min(BLOCK_N, key_hi - n0);
        __syncthreads();  // previous value tile fully used (and q_s written on the first pass)
        load_tile(kv_s, k_base + (long long)n0 * kv_stride, kv_stride, BLOCK_N, keys_valid);
        __syncthreads();

        float s[ROWS_PER_THREAD][COLS_PER_THREAD];
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) {
                s[i][j] = 0.0f;
            }
        }
#pragma unroll 4
        for (int d = 0; d < HEAD_DIM; d += 4) {
            float2 qa[ROWS_PER_THREAD], qb[ROWS_PER_THREAD];
#pragma unroll
            for (int i = 0; i < ROWS_PER_THREAD; ++i) {
                const uint2 word = *reinterpret_cast<const uint2*>(q_s + (ty + 16 * i) * STRIDE + d);
                qa[i] = make_float2(bf16_low(word.x), bf16_high(word.x));
                qb[i] = make_float2(bf16_low(word.y), bf16_high(word.y));
            }
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) {
                const uint2 word = *reinterpret_cast<const uint2*>(kv_s + (tx + 8 * j) * STRIDE + d);
                const float k0 = bf16_low(word.x), k1 = bf16_high(word.x), k2 = bf16_low(word.y),
                            k3 = bf16_high(word.y);
#pragma unroll
                for (int i = 0; i < ROWS_PER_THREAD; ++i) {
                    s[i][j] += qa[i].x * k0 + qa[i].y * k1 + qb[i].x * k2 + qb[i].y * k3;
                }
            }
        }

        // Online softmax; the 8 threads of a row are lanes differing in their low 3 bits.
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            const int row = m0 + ty + 16 * i;
            float tile_max = NEG_INF;
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) {
                const int col = n0 + tx + 8 * j;
                float logit = s[i][j];
                logit = softcap * tanhf(logit * query_scale * inverse_cap) * LOG2E;
                s[i][j] = (col < key_hi && VISIBLE(row, col)) ? logit : NEG_INF;
                tile_max = fmaxf(tile_max, s[i][j]);
            }
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 4));
            const float m_new = fmaxf(m_run[i], tile_max);
            const float alpha = exp2f(m_run[i] - m_new);
            float tile_sum = 0.0f;
#pragma unroll
            for (int j = 0; j < COLS_PER_THREAD; ++j) {
                const float p = exp2f(s[i][j] - m_new);
                p_s[ty + 16 * i][tx + 8 * j] = p;
                tile_sum += p;
            }
            tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
            tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 2);
            tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 4);
            l_run[i] = l_run[i] * alpha + tile_sum;
            m_run[i] = m_new;
#pragma unroll
            for (int j = 0; j < PAIRS_PER_THREAD; ++j) {
                acc[i][j][0] *= alpha;
                acc[i][j][1] *= alpha;
            }
        }
        __syncthreads();  // p_s complete, key tile no longer read
        load_tile(kv_s, v_base + (long long)n0 * kv_stride, kv_stride, BLOCK_N, keys_valid);
        __syncthreads();

#pragma unroll 2
        for (int n = 0; n < BLOCK_N; ++n) {
            float p[ROWS_PER_THREAD];
#pragma unroll
            for (int i = 0; i < ROWS_PER_THREAD; ++i) {
                p[i] = p_s[ty + 16 * i][n];
            }
#pragma unroll
            for (int j = 0; j < PAIRS_PER_THREAD; ++j) {
                const unsigned int word = *reinterpret_cast<const unsigned int*>(kv_s + n * STRIDE + 2 * tx + 16 * j);
                const float v0 = bf16_low(word), v1 = bf16_high(word);
#pragma unroll
                for (int i = 0; i < ROWS_PER_THREAD; ++i) {
                    acc[i][j][0] += p[i] * v0;
                    acc[i][j][1] += p[i] * v1;
                }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        const int r = ty + 16 * i;
        if (r < rows_valid) {
            const float inverse = 1.0f / l_run[i];
            unsigned short* dst = o_base + (long long)(m0 + r) * o_stride;
#pragma unroll
            for (int j = 0; j < PAIRS_PER_THREAD; ++j) {
                const unsigned int lo = __bfloat16_as_ushort(__float2bfloat16_rn(acc[i][j][0] * inverse));
                const unsigned int hi = __bfloat16_as_ushort(__float2bfloat16_rn(acc[i][j][1] * inverse));
                *reinterpret_cast<unsigned int*>(dst + 2 * tx + 16 * j) = lo | (hi << 16);
            }
        }
    }
}
"""

BLOCK_M = 32
THREADS = 128
WINDOW = 4096
SOFTCAP = 50.0
QUERY_SCALE = 256**-0.5
_kernel = mkb_cuda.compile(SOURCE, "window_softcap_forward")


def solve(q, k, v):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    seq_len, query_heads, dim = q.shape
    kv_heads = k.shape[1]
    out = torch.empty_like(q)
    grid = ((seq_len + BLOCK_M - 1) // BLOCK_M, query_heads)
    _kernel(grid, (THREADS,), [q, k, v, out, seq_len, query_heads, kv_heads, WINDOW, QUERY_SCALE, SOFTCAP])
    return out
