"""CUDA C++ solution: online-softmax sparse MLA on CUDA cores. A block takes 16 heads of one sequence and walks the
2048 selected slots in tiles of 16 gathered 576-wide rows staged in shared memory (padded rows, zeros for -1
slots). Scores: each thread makes a 2 heads x 4 rows tile over 72 of the 576 dims and 8 lanes finish it by shuffles.
Softmax: one half-warp per head (log2 units, fp32). Values: each thread accumulates 4 heads x 8 latent dims, reading
the staged rows with 16-byte loads. The reference widens the whole 2.4 GB pool to float32 first; this kernel reads
only the selected rows, in bf16, but without tensor cores its speedup stays modest.
"""

import math

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define HEADS_PER_BLOCK 16
#define WIDTH 576           // latent 512 + rope 64
#define LATENT 512
#define STRIDE 584          // padded row (bf16): a multiple of 8 keeps 16-byte alignment
#define TILE 16             // gathered rows per tile
#define THREADS 256
#define SPLITS 8            // lanes sharing one score tile
#define SPLIT_DIMS (WIDTH / SPLITS)  // 72
#define NEG_BIG (-1.0e30f)
#define NEG_INF __int_as_float(0xff800000)
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float lo_bf16(unsigned int word) { return __uint_as_float(word << 16); }
__device__ __forceinline__ float hi_bf16(unsigned int word) { return __uint_as_float(word & 0xffff0000u); }

__device__ __forceinline__ unsigned int pack_bf16(float lo, float hi) {
    return (unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           ((unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
}

// grid: (heads / 16, batch)
extern "C" __global__ void __launch_bounds__(THREADS)
sparse_mla(const unsigned short* __restrict__ q, const unsigned short* __restrict__ kv,
           const int* __restrict__ slots, unsigned short* __restrict__ out, int heads, int top_k, float scale_log2) {
    __shared__ __align__(16) unsigned short q_s[HEADS_PER_BLOCK][STRIDE];
    __shared__ __align__(16) unsigned short k_s[TILE][STRIDE];
    __shared__ float p_s[HEADS_PER_BLOCK][TILE + 1];
    __shared__ float alpha_s[HEADS_PER_BLOCK];
    __shared__ float l_s[HEADS_PER_BLOCK];
    __shared__ int slot_s[TILE];
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int b = blockIdx.y;
    const int h0 = blockIdx.x * HEADS_PER_BLOCK;
    for (int x = tid; x < HEADS_PER_BLOCK * (WIDTH / 8); x += THREADS) {
        const int h = x / (WIDTH / 8);
        const int c = (x % (WIDTH / 8)) * 8;
        *reinterpret_cast<uint4*>(&q_s[h][c]) =
            *reinterpret_cast<const uint4*>(q + ((long long)b * heads + h0 + h) * WIDTH + c);
    }
    // Score tiles: thread = (tile, split); tile -> heads 2 hp, 2 hp + 1 and rows 4 kq ... 4 kq + 3.
    const int split = tid % SPLITS;
    const int score_tile = tid / SPLITS;
    const int hp = score_tile / 4;
    const int kq = score_tile % 4;
    // Softmax: warp w owns heads 2w and 2w + 1, one half-warp each, lane % 16 = row of the tile.
    const int soft_head = warp * 2 + (lane >> 4);
    const int soft_row = lane & 15;
    float m_run = NEG_BIG, l_run = 0.0f;
    // Values: thread owns heads 4 hg ... 4 hg + 3 and latent dims 8 cg ... 8 cg + 7.
    const int cg = tid % 64;
    const int hg = tid / 64;
    float acc[4][8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (int start = 0; start < top_k; start += TILE) {
        __syncthreads();  // the previous tile is done with k_s and p_s
        if (tid < TILE) {
            slot_s[tid] = start + tid < top_k ? slots[(long long)b * top_k + start + tid] : -1;
        }
        __syncthreads();
        for (int x = tid; x < TILE * (WIDTH / 8); x += THREADS) {
            const int r = x / (WIDTH / 8);
            const int c = (x % (WIDTH / 8)) * 8;
            const int slot = slot_s[r];
            uint4 word = make_uint4(0u, 0u, 0u, 0u);  // -1 slots read as zeros (their weight is 0)
            if (slot >= 0) {
                word = *reinterpret_cast<const uint4*>(kv + (long long)slot * WIDTH + c);
            }
            *reinterpret_cast<uint4*>(&k_s[r][c]) = word;
        }
        __syncthreads();
        float s[2][4] = {};
        const int d0 = split * SPLIT_DIMS;
#pragma unroll 4
        for (int d = d0; d < d0 + SPLIT_DIMS; d += 2) {
            const unsigned int qa = *reinterpret_cast<const unsigned int*>(&q_s[2 * hp][d]);
            const unsigned int qb = *reinterpret_cast<const unsigned int*>(&q_s[2 * hp + 1][d]);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const unsigned int kw = *reinterpret_cast<const unsigned int*>(&k_s[4 * kq + j][d]);
                s[0][j] += lo_bf16(qa) * lo_bf16(kw) + hi_bf16(qa) * hi_bf16(kw);
                s[1][j] += lo_bf16(qb) * lo_bf16(kw) + hi_bf16(qb) * hi_bf16(kw);
            }
        }
#pragma unroll
        for (int i = 0; i < 2; ++i) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                s[i][j] += __shfl_xor_sync(FULL_MASK, s[i][j], 1);
                s[i][j] += __shfl_xor_sync(FULL_MASK, s[i][j], 2);
                s[i][j] += __shfl_xor_sync(FULL_MASK, s[i][j], 4);
            }
        }
        if (split == 0) {
#pragma unroll
            for (int i = 0; i < 2; ++i) {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int r = 4 * kq + j;
                    p_s[2 * hp + i][r] = slot_s[r] >= 0 ? s[i][j] * scale_log2 : NEG_INF;
                }
            }
        }
        __syncthreads();
        {
            const float score = p_s[soft_head][soft_row];
            float tile_max = score;
#pragma unroll
            for (int o = 8; o > 0; o >>= 1) {
                tile_max = fmaxf(tile_max, __shfl_xor_sync(FULL_MASK, tile_max, o));
            }
            const float m_new = fmaxf(m_run, tile_max);
            const float alpha = exp2f(m_run - m_new);
            const float p = exp2f(score - m_new);
            float tile_sum = p;
#pragma unroll
            for (int o = 8; o > 0; o >>= 1) {
                tile_sum += __shfl_xor_sync(FULL_MASK, tile_sum, o);
            }
            l_run = l_run * alpha + tile_sum;
            m_run = m_new;
            p_s[soft_head][soft_row] = p;
            if (soft_row == 0) {
                alpha_s[soft_head] = alpha;
                l_s[soft_head] = l_run;
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float alpha = alpha_s[4 * hg + i];
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                acc[i][j] *= alpha;
            }
        }
#pragma unroll 2
        for (int r = 0; r < TILE; ++r) {
            const uint4 word = *reinterpret_cast<const uint4*>(&k_s[r][cg * 8]);
            const float vals[8] = {lo_bf16(word.x), hi_bf16(word.x), lo_bf16(word.y), hi_bf16(word.y),
                                   lo_bf16(word.z), hi_bf16(word.z), lo_bf16(word.w), hi_bf16(word.w)};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float p = p_s[4 * hg + i][r];
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    acc[i][j] += p * vals[j];
                }
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int h = 4 * hg + i;
        const float inverse = 1.0f / l_s[h];
        unsigned short* target = out + ((long long)b * heads + h0 + h) * LATENT + cg * 8;
        *reinterpret_cast<uint4*>(target) =
            make_uint4(pack_bf16(acc[i][0] * inverse, acc[i][1] * inverse),
                       pack_bf16(acc[i][2] * inverse, acc[i][3] * inverse),
                       pack_bf16(acc[i][4] * inverse, acc[i][5] * inverse),
                       pack_bf16(acc[i][6] * inverse, acc[i][7] * inverse));
    }
}
"""

THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "sparse_mla")


def solve(q, latent, topk_slots):
    q, latent, topk_slots = q.contiguous(), latent.contiguous(), topk_slots.contiguous()
    batch, heads, width = q.shape
    assert width == 576 and heads % 16 == 0, "written for DeepSeek's 576-wide absorbed rows, 16 heads per block"
    out = torch.empty(batch, heads, 512, device=q.device, dtype=q.dtype)
    _kernel((heads // 16, batch), (THREADS,),
            [q, latent, topk_slots, out, heads, topk_slots.shape[1], math.log2(math.e) * 192**-0.5])
    return out
