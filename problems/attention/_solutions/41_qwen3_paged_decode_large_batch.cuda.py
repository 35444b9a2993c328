"""CUDA C++ solution: split-K flash decoding over a paged cache; each cached row is found through the block table.

A block runs the 8 query heads of one KV head over one cache slice: one cached row per thread for the scores
(queries broadcast from shared memory), warp-shuffle online softmax, 4 value dims per thread for the weighted
sum, fp32 throughout. A second kernel merges the slices.
"""

import math

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define ROWS 8               // query rows sharing one stream of cached rows
#define KEY_DIM 128         // width of a query / key row
#define VAL_DIM 128         // width of a value row (the first VAL_DIM elements of its row)
#define THREADS 128
#define TILE 128                     // cached rows per tile: one per thread in the score phase
#define DIM_GROUPS (VAL_DIM / 4)     // each thread accumulates 4 value dims ...
#define ROW_GROUPS (THREADS / DIM_GROUPS)
#define ROWS_PER_THREAD (ROWS / ROW_GROUPS)  // ... for this many rows
#define ROWS_PER_WARP (ROWS / 4)     // softmax bookkeeping: warp w owns rows w, w + 4, ...
#define NEG_BIG (-1.0e30f)
#define NEG_INF __int_as_float(0xff800000)  // -infinity, spelled without math.h
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float elem_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned short float_to_elem(float value) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

__device__ __forceinline__ float low_half(unsigned int word) { return elem_to_float((unsigned short)(word & 0xffffu)); }
__device__ __forceinline__ float high_half(unsigned int word) { return elem_to_float((unsigned short)(word >> 16)); }

// One block per (cache slice, sequence and KV head): an online softmax over the slice's cached rows, written out
// unnormalised with its running max (log2 units) and sum for merge_slices.
extern "C" __global__ void __launch_bounds__(THREADS)
paged_decode_slice(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k_cache,
     const unsigned short* __restrict__ v_cache, const int* __restrict__ block_table,
     const int* __restrict__ seq_lens, int query_heads, int kv_heads, int page_size, int max_pages,
     float* __restrict__ part_o, float* __restrict__ part_m, float* __restrict__ part_l, int split_len, int num_splits,
     float scale_log2) {
    __shared__ __align__(16) float q_s[ROWS][KEY_DIM];
    __shared__ float p_s[TILE][ROWS + 1];
    __shared__ float alpha_s[ROWS];
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int split = blockIdx.x;
    const int b = blockIdx.y / kv_heads;
    const int h = blockIdx.y % kv_heads;
    const int seq_len = seq_lens[b];
    const int* pages = block_table + (long long)b * max_pages;
#define CACHE_OFFSET(pos) \
    ((((long long)pages[(pos) / page_size] * page_size + (pos) % page_size) * kv_heads + h) * KEY_DIM)
#define QUERY_ROW(r) (q + ((long long)b * query_heads + h * ROWS + (r)) * KEY_DIM)
#define KEY_ROW(pos) (k_cache + CACHE_OFFSET(pos))
#define VALUE_ROW(pos) (v_cache + CACHE_OFFSET(pos))
#define VISIBLE(pos, r) true
#define PART_ROW(r) (((b * query_heads + h * ROWS + (r)) * num_splits) + split)
    for (int i = tid; i < ROWS * KEY_DIM; i += THREADS) {
        const int r = i / KEY_DIM;
        const int d = i % KEY_DIM;
        q_s[r][d] = elem_to_float(QUERY_ROW(r)[d]) * scale_log2;
    }
    const int start = split * split_len;
    const int end = min(start + split_len, seq_len);
    float m_run[ROWS_PER_WARP];
    float l_run[ROWS_PER_WARP];
#pragma unroll
    for (int i = 0; i < ROWS_PER_WARP; ++i) {
        m_run[i] = NEG_BIG;
        l_run[i] = 0.0f;
    }
    const int dim_group = tid % DIM_GROUPS;
    const int row_group = tid / DIM_GROUPS;
    float acc[ROWS_PER_THREAD][4];
#pragma unroll
    for (int j = 0; j < ROWS_PER_THREAD; ++j) {
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    }
    __syncthreads();

    for (int tile = start; tile < end; tile += TILE) {
        const int count = min(TILE, end - tile);
        // Scores: thread tid dots cached row tile + tid with every query row (queries broadcast from shared).
        float s[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            s[r] = NEG_INF;
        }
        if (tid < count) {
            const int pos = tile + tid;
            const uint4* key = reinterpret_cast<const uint4*>(KEY_ROW(pos));
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                s[r] = 0.0f;
            }
#pragma unroll 2
            for (int c = 0; c < KEY_DIM / 8; ++c) {
                const uint4 word = key[c];
                const float k0 = low_half(word.x), k1 = high_half(word.x), k2 = low_half(word.y),
                            k3 = high_half(word.y), k4 = low_half(word.z), k5 = high_half(word.z),
                            k6 = low_half(word.w), k7 = high_half(word.w);
#pragma unroll
                for (int r = 0; r < ROWS; ++r) {
                    const float4 qa = *reinterpret_cast<const float4*>(&q_s[r][c * 8]);
                    const float4 qb = *reinterpret_cast<const float4*>(&q_s[r][c * 8 + 4]);
                    s[r] += qa.x * k0 + qa.y * k1 + qa.z * k2 + qa.w * k3 + qb.x * k4 + qb.y * k5 + qb.z * k6 +
                            qb.w * k7;
                }
            }
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                if (!VISIBLE(pos, r)) {
                    s[r] = NEG_INF;
                }
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            p_s[tid][r] = s[r];
        }
        __syncthreads();

        // Online softmax per row: tile max and sum by warp shuffles; p overwrites the scores in place.
#pragma unroll
        for (int i = 0; i < ROWS_PER_WARP; ++i) {
            const int r = warp + 4 * i;
            float v0 = p_s[lane][r], v1 = p_s[lane + 32][r], v2 = p_s[lane + 64][r], v3 = p_s[lane + 96][r];
            float tile_max = fmaxf(fmaxf(v0, v1), fmaxf(v2, v3));
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                tile_max = fmaxf(tile_max, __shfl_xor_sync(FULL_MASK, tile_max, offset));
            }
            const float m_new = fmaxf(m_run[i], tile_max);
            const float alpha = exp2f(m_run[i] - m_new);
            v0 = exp2f(v0 - m_new);
            v1 = exp2f(v1 - m_new);
            v2 = exp2f(v2 - m_new);
            v3 = exp2f(v3 - m_new);
            p_s[lane][r] = v0;
            p_s[lane + 32][r] = v1;
            p_s[lane + 64][r] = v2;
            p_s[lane + 96][r] = v3;
            float tile_sum = (v0 + v1) + (v2 + v3);
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                tile_sum += __shfl_xor_sync(FULL_MASK, tile_sum, offset);
            }
            l_run[i] = l_run[i] * alpha + tile_sum;
            m_run[i] = m_new;
            if (lane == 0) {
                alpha_s[r] = alpha;
            }
        }
        __syncthreads();

        // Weighted values: thread owns value dims [4 dim_group, 4 dim_group + 4) of ROWS_PER_THREAD rows.
#pragma unroll
        for (int j = 0; j < ROWS_PER_THREAD; ++j) {
            const float alpha = alpha_s[row_group * ROWS_PER_THREAD + j];
            acc[j][0] *= alpha;
            acc[j][1] *= alpha;
            acc[j][2] *= alpha;
            acc[j][3] *= alpha;
        }
#pragma unroll 4
        for (int n = 0; n < count; ++n) {
            const uint2 word = *reinterpret_cast<const uint2*>(VALUE_ROW(tile + n) + dim_group * 4);
            const float v0 = low_half(word.x), v1 = high_half(word.x), v2 = low_half(word.y), v3 = high_half(word.y);
#pragma unroll
            for (int j = 0; j < ROWS_PER_THREAD; ++j) {
                const float p = p_s[n][row_group * ROWS_PER_THREAD + j];
                acc[j][0] += p * v0;
                acc[j][1] += p * v1;
                acc[j][2] += p * v2;
                acc[j][3] += p * v3;
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int j = 0; j < ROWS_PER_THREAD; ++j) {
        const int r = row_group * ROWS_PER_THREAD + j;
        float4 out = make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
        *reinterpret_cast<float4*>(part_o + (long long)PART_ROW(r) * VAL_DIM + dim_group * 4) = out;
    }
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < ROWS_PER_WARP; ++i) {
            const int r = warp + 4 * i;
            part_m[PART_ROW(r)] = m_run[i];
            part_l[PART_ROW(r)] = l_run[i];
        }
    }
}

// One block per output row: merges the slices' partial outputs with weights 2^(m_s - max m).
extern "C" __global__ void merge_slices(const float* __restrict__ part_o, const float* __restrict__ part_m,
                                        const float* __restrict__ part_l, unsigned short* __restrict__ out,
                                        int num_splits) {
    const int row = blockIdx.x;
    const float* m = part_m + (long long)row * num_splits;
    const float* l = part_l + (long long)row * num_splits;
    float m_max = NEG_BIG;
    for (int s = 0; s < num_splits; ++s) {
        m_max = fmaxf(m_max, m[s]);
    }
    float total = 0.0f;
    for (int s = 0; s < num_splits; ++s) {
        total += l[s] * exp2f(m[s] - m_max);
    }
    const float inverse = 1.0f / total;
    for (int d = threadIdx.x; d < VAL_DIM; d += blockDim.x) {
        float value = 0.0f;
        for (int s = 0; s < num_splits; ++s) {
            value += part_o[((long long)row * num_splits + s) * VAL_DIM + d] * exp2f(m[s] - m_max);
        }
        out[(long long)row * VAL_DIM + d] = float_to_elem(value * inverse);
    }
}
"""

NUM_SPLITS = 16  # cache slices per (sequence, KV head)
THREADS = 128
_slice_kernel = mkb_cuda.compile(SOURCE, "paged_decode_slice")
_merge_kernel = mkb_cuda.compile(SOURCE, "merge_slices")


def solve(q, k_cache, v_cache, block_table, seq_lens):
    q = q.contiguous()
    k_cache = k_cache.contiguous()
    v_cache = v_cache.contiguous()
    block_table = block_table.contiguous()
    seq_lens = seq_lens.contiguous()
    batch, query_heads, dim = q.shape
    page_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    max_pages = block_table.shape[1]
    rows = batch * query_heads
    part_o = torch.empty(rows * NUM_SPLITS, dim, device=q.device, dtype=torch.float32)
    part_m = torch.empty(rows * NUM_SPLITS, device=q.device, dtype=torch.float32)
    part_l = torch.empty(rows * NUM_SPLITS, device=q.device, dtype=torch.float32)
    split_len = (max_pages * page_size + NUM_SPLITS - 1) // NUM_SPLITS
    _slice_kernel((NUM_SPLITS, batch * kv_heads), (THREADS,),
                  [q, k_cache, v_cache, block_table, seq_lens, query_heads, kv_heads, page_size, max_pages, part_o,
                   part_m, part_l, split_len, NUM_SPLITS, math.log2(math.e) / math.sqrt(dim)])
    out = torch.empty_like(q)
    _merge_kernel((rows,), (THREADS,), [part_o, part_m, part_l, out, NUM_SPLITS])
    return out
