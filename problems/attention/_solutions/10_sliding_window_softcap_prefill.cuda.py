"""CUDA C++ solution: FlashAttention-2 sliding-window causal prefill with tanh logit soft-capping, on tensor cores.

A block owns 64 queries of one head (16 per warp) and visits only the 16-key tiles that meet its window; K, then
V, pass through shared memory; Q K^T and P V run as mma.sync m16n8k16 on bf16 with fp32 accumulators, logits
are soft-capped in registers, row max/sum by quad shuffles.
"""

import math

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define BLOCK_M 64                   // queries per block: 16 per warp
#define BLOCK_N 16          // keys per tile
#define HEAD_DIM 256
#define STRIDE (HEAD_DIM + 8)        // padded shared row (bf16 elements): fragment loads hit distinct banks
#define THREADS 128
#define KEY_TILES (BLOCK_N / 8)      // score fragments (16 x 8) per warp
#define QK_STEPS (HEAD_DIM / 16)     // k-steps of Q K^T
#define DIM_TILES (HEAD_DIM / 8)     // output fragments (16 x 8) per warp
#define PV_STEPS (BLOCK_N / 16)      // k-steps of P V
#define NEG_BIG (-1.0e30f)
#define NEG_INF __int_as_float(0xff800000)  // -infinity, spelled without math.h
#define LOG2E 1.4426950408889634f

__device__ __forceinline__ unsigned int pack_bf16(float low, float high) {
    const unsigned int lo = __bfloat16_as_ushort(__float2bfloat16_rn(low));
    const unsigned int hi = __bfloat16_as_ushort(__float2bfloat16_rn(high));
    return lo | (hi << 16);
}

// c += A (16 x 16, row-major fragment) * B (16 x 8, column fragment); bf16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_bf16_16x8x16(float* c, unsigned int a0, unsigned int a1, unsigned int a2,
                                                 unsigned int a3, unsigned int b0, unsigned int b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

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

__device__ __forceinline__ unsigned int shared_word(const unsigned short* p) {
    return *reinterpret_cast<const unsigned int*>(p);
}

// Warp w owns query rows [16 w, 16 w + 16) of the block; lane (g, t) = (lane / 4, lane % 4) holds rows g and g + 8
// of every 16 x 8 fragment, columns 2 t and 2 t + 1.
extern "C" __global__ void __launch_bounds__(THREADS)
window_softcap_forward(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k,
     const unsigned short* __restrict__ v, unsigned short* __restrict__ out, int seq_len, int query_heads,
     int kv_heads, int window, float query_scale, float softcap) {
    __shared__ __align__(16) unsigned short q_s[BLOCK_M * STRIDE];
    __shared__ __align__(16) unsigned short kv_s[BLOCK_N * STRIDE];  // the key tile, then the value tile
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
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
    const unsigned short* q_warp = q_s + warp * 16 * STRIDE;
    const int row_of[2] = {m0 + warp * 16 + g, m0 + warp * 16 + g + 8};

    float o[DIM_TILES][4];
#pragma unroll
    for (int j = 0; j < DIM_TILES; ++j) {
        o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
    }
    float m_run[2] = {NEG_BIG, NEG_BIG};
    float l_run[2] = {0.0f, 0.0f};

    for (int n0 = key_lo; n0 < key_hi; n0 += BLOCK_N) {
        const int keys_valid = min(BLOCK_N, key_hi - n0);
        __syncthreads();  // previous value tile fully used (and q_s written on the first pass)
        load_tile(kv_s, k_base + (long long)n0 * kv_stride, kv_stride, BLOCK_N, keys_valid);
        __syncthreads();

        float s[KEY_TILES][4];
#pragma unroll
        for (int j = 0; j < KEY_TILES; ++j) {
            s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
        }
#pragma unroll
        for (int step = 0; step < QK_STEPS; ++step) {
            const int k0 = step * 16 + 2 * t;
            const unsigned int a0 = shared_word(q_warp + g * STRIDE + k0);
            const unsigned int a1 = shared_word(q_warp + (g + 8) * STRIDE + k0);
            const unsigned int a2 = shared_word(q_warp + g * STRIDE + k0 + 8);
            const unsigned int a3 = shared_word(q_warp + (g + 8) * STRIDE + k0 + 8);
#pragma unroll
            for (int j = 0; j < KEY_TILES; ++j) {
                const unsigned short* key = kv_s + (j * 8 + g) * STRIDE + k0;
                mma_bf16_16x8x16(s[j], a0, a1, a2, a3, shared_word(key), shared_word(key + 8));
            }
        }

        // Online softmax per row; a row's 4 lanes (same g) differ in the low 2 bits of the lane id.
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = row_of[half];
            float tile_max = NEG_INF;
#pragma unroll
            for (int j = 0; j < KEY_TILES; ++j) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int col = n0 + j * 8 + 2 * t + e;
                    float logit = s[j][2 * half + e];
                    logit = softcap * tanhf(logit * query_scale * inverse_cap) * LOG2E;
                    logit = (col < key_hi && VISIBLE(row, col)) ? logit : NEG_INF;
                    s[j][2 * half + e] = logit;
                    tile_max = fmaxf(tile_max, logit);
                }
            }
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
            tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
            const float m_new = fmaxf(m_run[half], tile_max);
            const float alpha = exp2f(m_run[half] - m_new);
            float tile_sum = 0.0f;
#pragma unroll
            for (int j = 0; j < KEY_TILES; ++j) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const float p = exp2f(s[j][2 * half + e] - m_new);
                    s[j][2 * half + e] = p;
                    tile_sum += p;
                }
            }
            tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
            tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 2);
            l_run[half] = l_run[half] * alpha + tile_sum;
            m_run[half] = m_new;
#pragma unroll
            for (int j = 0; j < DIM_TILES; ++j) {
                o[j][2 * half] *= alpha;
                o[j][2 * half + 1] *= alpha;
            }
        }
        __syncthreads();  // every warp is done with the key tile
        load_tile(kv_s, v_base + (long long)n0 * kv_stride, kv_stride, BLOCK_N, keys_valid);
        __syncthreads();

        // O += P V: the score fragments of two key tiles form one A fragment (rounded to bf16).
#pragma unroll
        for (int step = 0; step < PV_STEPS; ++step) {
            const unsigned int a0 = pack_bf16(s[2 * step][0], s[2 * step][1]);
            const unsigned int a1 = pack_bf16(s[2 * step][2], s[2 * step][3]);
            const unsigned int a2 = pack_bf16(s[2 * step + 1][0], s[2 * step + 1][1]);
            const unsigned int a3 = pack_bf16(s[2 * step + 1][2], s[2 * step + 1][3]);
            const unsigned short* value = kv_s + (step * 16 + 2 * t) * STRIDE + g;
#pragma unroll
            for (int j = 0; j < DIM_TILES; ++j) {
                const unsigned short* column = value + j * 8;
                const unsigned int b0 = (unsigned int)column[0] | ((unsigned int)column[STRIDE] << 16);
                const unsigned int b1 = (unsigned int)column[8 * STRIDE] | ((unsigned int)column[9 * STRIDE] << 16);
                mma_bf16_16x8x16(o[j], a0, a1, a2, a3, b0, b1);
            }
        }
    }

#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int local = warp * 16 + g + 8 * half;
        if (local < rows_valid) {
            const float inverse = 1.0f / l_run[half];
            unsigned short* dst = o_base + (long long)(m0 + local) * o_stride + 2 * t;
#pragma unroll
            for (int j = 0; j < DIM_TILES; ++j) {
                *reinterpret_cast<unsigned int*>(dst + j * 8) =
                    pack_bf16(o[j][2 * half] * inverse, o[j][2 * half + 1] * inverse);
            }
        }
    }
}
"""

BLOCK_M = 64
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
