"""CUDA C++ solution for 20_qk_rmsnorm_rope: one 320-thread block per token, eight threads per head (32 query + 8 key).

A thread holds elements c..c+7 and 64+c..64+c+7 of its head (two 16-byte loads), so each rotary pair stays in one
thread; the per-head sum of squares is reduced over the eight threads with shuffles.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

__device__ __forceinline__ void widen(uint4 raw, float* out) {
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(pairs[j]);
        out[2 * j] = f.x;
        out[2 * j + 1] = f.y;
    }
}

__device__ __forceinline__ uint4 narrow(const float* values) {
    uint4 raw;
    __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        pairs[j] = __floats2bfloat162_rn(values[2 * j], values[2 * j + 1]);
    }
    return raw;
}

// Head dim 128; qkv rows hold 32 query heads, 8 key heads, 8 value heads.
extern "C" __global__ void qk_norm_rope(const __nv_bfloat16* __restrict__ qkv,
                                        const __nv_bfloat16* __restrict__ q_weight,
                                        const __nv_bfloat16* __restrict__ k_weight,
                                        const long long* __restrict__ positions, const float* __restrict__ cos_sin,
                                        __nv_bfloat16* __restrict__ query_out, __nv_bfloat16* __restrict__ key_out,
                                        int row, float eps) {
    const long long token = blockIdx.x;
    const int head = threadIdx.x >> 3;  // 0..39
    const int first = (threadIdx.x & 7) * 8;
    const bool is_query = head < 32;
    const __nv_bfloat16* source = qkv + token * row + head * 128;
    const __nv_bfloat16* weight = is_query ? q_weight : k_weight;
    __nv_bfloat16* target = is_query ? query_out + (token * 32 + head) * 128 : key_out + (token * 8 + head - 32) * 128;

    float x1[8], x2[8], w1[8], w2[8];
    widen(*reinterpret_cast<const uint4*>(source + first), x1);
    widen(*reinterpret_cast<const uint4*>(source + first + 64), x2);
    widen(*reinterpret_cast<const uint4*>(weight + first), w1);
    widen(*reinterpret_cast<const uint4*>(weight + first + 64), w2);
    float squares = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        squares += x1[j] * x1[j] + x2[j] * x2[j];
    }
#pragma unroll
    for (int offset = 1; offset < 8; offset <<= 1) {  // the eight threads of a head are consecutive lanes
        squares += __shfl_xor_sync(0xffffffffu, squares, offset);
    }
    const float inverse_rms = rsqrtf(squares / 128.0f + eps);
    const float* cos_row = cos_sin + positions[token] * 128;
    float out1[8], out2[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const float c = cos_row[first + j], s = cos_row[64 + first + j];
        const float n1 = x1[j] * inverse_rms * w1[j];
        const float n2 = x2[j] * inverse_rms * w2[j];
        out1[j] = n1 * c - n2 * s;
        out2[j] = n2 * c + n1 * s;
    }
    *reinterpret_cast<uint4*>(target + first) = narrow(out1);
    *reinterpret_cast<uint4*>(target + first + 64) = narrow(out2);
}
"""

EPS = 1e-6
QUERY_HEADS = 32
KV_HEADS = 8
_qk_norm_rope = mkb_cuda.compile(SOURCE, "qk_norm_rope")


def solve(qkv, q_norm_weight, k_norm_weight, positions, cos_sin_cache):
    qkv = qkv.contiguous()
    tokens, row = qkv.shape
    head_dim = q_norm_weight.shape[0]
    query = torch.empty(tokens, QUERY_HEADS, head_dim, device=qkv.device, dtype=qkv.dtype)
    key = torch.empty(tokens, KV_HEADS, head_dim, device=qkv.device, dtype=qkv.dtype)
    threads = (QUERY_HEADS + KV_HEADS) * 8  # eight threads per head
    _qk_norm_rope((tokens,), (threads,), [qkv, q_norm_weight.contiguous(), k_norm_weight.contiguous(),
                                          positions.contiguous(), cos_sin_cache.contiguous(), query, key, row, EPS])
    return query, key
