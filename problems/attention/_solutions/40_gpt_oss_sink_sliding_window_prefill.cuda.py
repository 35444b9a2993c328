"""CUDA C++ solution: banded attention on CUDA cores. A block takes 32 queries of one head and stages the band's
keys and values (up to 159 rows of 64 bf16) in shared memory; 4 threads share a query row (16 dims each, a 4-lane
shuffle completes each score). Every thread walks the whole band and masks keys outside its row's window, so the
shuffles never diverge; the online softmax starts from the sink (max = sink, sum = 1), fp32 throughout.
"""

import math

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define HEAD_DIM 64
#define WINDOW 128
#define QUERIES 32
#define LANES_PER_ROW 4
#define DIMS_PER_LANE (HEAD_DIM / LANES_PER_ROW)
#define THREADS (QUERIES * LANES_PER_ROW)
#define BAND (QUERIES + WINDOW - 1)
#define LOG2E 1.4426950408889634f
#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned int pack_bf16(float lo, float hi) {
    return (unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           ((unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
}

// grid: (query tiles, batch * query heads)
extern "C" __global__ void __launch_bounds__(THREADS)
banded_attention(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k,
                 const unsigned short* __restrict__ v, const float* __restrict__ sinks,
                 unsigned short* __restrict__ out, int seq_len, int query_heads, int kv_heads, float scale_log2) {
    __shared__ __align__(16) unsigned short k_s[BAND][HEAD_DIM];
    __shared__ __align__(16) unsigned short v_s[BAND][HEAD_DIM];
    const int start_m = blockIdx.x * QUERIES;
    const int b = blockIdx.y / query_heads;
    const int h = blockIdx.y % query_heads;
    const int kv_h = h / (query_heads / kv_heads);
    const int band_start = max(start_m - (WINDOW - 1), 0);
    const int band_end = min(start_m + QUERIES, seq_len);  // exclusive
    const int band_rows = band_end - band_start;
    for (int i = threadIdx.x; i < band_rows * (HEAD_DIM / 8); i += THREADS) {  // 16-byte vectors
        const int r = i / (HEAD_DIM / 8);
        const int c = (i % (HEAD_DIM / 8)) * 8;
        const long long src = (((long long)b * seq_len + band_start + r) * kv_heads + kv_h) * HEAD_DIM + c;
        *reinterpret_cast<uint4*>(&k_s[r][c]) = *reinterpret_cast<const uint4*>(k + src);
        *reinterpret_cast<uint4*>(&v_s[r][c]) = *reinterpret_cast<const uint4*>(v + src);
    }
    const int row = start_m + threadIdx.x / LANES_PER_ROW;
    const int part = threadIdx.x % LANES_PER_ROW;
    const int d0 = part * DIMS_PER_LANE;
    const bool live = row < seq_len;
    float qv[DIMS_PER_LANE];
    const long long q_off = (((long long)b * seq_len + (live ? row : 0)) * query_heads + h) * HEAD_DIM + d0;
#pragma unroll
    for (int d = 0; d < DIMS_PER_LANE; ++d) {
        qv[d] = bf16_bits_to_float(q[q_off + d]) * scale_log2;
    }
    __syncthreads();
    float m = sinks[h] * LOG2E;
    float l = 1.0f;
    float acc[DIMS_PER_LANE];
#pragma unroll
    for (int d = 0; d < DIMS_PER_LANE; ++d) {
        acc[d] = 0.0f;
    }
    // Every thread walks the whole band so the 4-lane shuffles always see all lanes; keys outside a row's window
    // score -inf (p = 0, alpha = 1).
    for (int j = band_start; j < band_end; ++j) {
        const unsigned short* key = &k_s[j - band_start][d0];
        float s = 0.0f;
#pragma unroll
        for (int d = 0; d < DIMS_PER_LANE; ++d) {
            s += qv[d] * bf16_bits_to_float(key[d]);
        }
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        s += __shfl_xor_sync(0xffffffffu, s, 2);
        if (!live || j > row || row - j >= WINDOW) {
            s = NEG_INF;
        }
        const float m_new = fmaxf(m, s);
        const float alpha = exp2f(m - m_new);
        const float p = exp2f(s - m_new);
        l = l * alpha + p;
        const unsigned short* value = &v_s[j - band_start][d0];
#pragma unroll
        for (int d = 0; d < DIMS_PER_LANE; ++d) {
            acc[d] = acc[d] * alpha + p * bf16_bits_to_float(value[d]);
        }
        m = m_new;
    }
    if (live) {
        const float inverse = 1.0f / l;
        unsigned int packed[DIMS_PER_LANE / 2];
#pragma unroll
        for (int d = 0; d < DIMS_PER_LANE; d += 2) {
            packed[d / 2] = pack_bf16(acc[d] * inverse, acc[d + 1] * inverse);
        }
        uint4* target = reinterpret_cast<uint4*>(out + q_off);
        target[0] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
        target[1] = make_uint4(packed[4], packed[5], packed[6], packed[7]);
    }
}
"""

QUERIES = 32
THREADS = 128
_kernel = mkb_cuda.compile(SOURCE, "banded_attention")


def solve(q, k, v, sinks):
    q, k, v, sinks = q.contiguous(), k.contiguous(), v.contiguous(), sinks.contiguous()
    batch, seq_len, query_heads, dim = q.shape
    assert dim == 64, "written for GPT-OSS's head dim 64"
    out = torch.empty_like(q)
    _kernel(((seq_len + QUERIES - 1) // QUERIES, batch * query_heads), (THREADS,),
            [q, k, v, sinks, out, seq_len, query_heads, k.shape[2], math.log2(math.e) / math.sqrt(dim)])
    return out
