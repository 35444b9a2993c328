"""CUDA C++ solution for 12_rope_paged_kv_write: 16-byte cache copies, then one block per token for rotary and stores.

Each thread rotates eight (x1, x2) pairs of one head with 16-byte bf16 loads and float32 math.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

extern "C" __global__ void copy_pair(const int4* __restrict__ source_a, int4* __restrict__ target_a,
                                     const int4* __restrict__ source_b, int4* __restrict__ target_b,
                                     long long vectors) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < vectors; i += stride) {
        int4 a = source_a[i];
        int4 b = source_b[i];
        target_a[i] = a;
        target_b[i] = b;
    }
}

// Rotates pairs (x[c..c+7], x[64+c..64+c+7]) of one 128-wide head: out1 = x1 cos - x2 sin, out2 = x2 cos + x1 sin.
__device__ __forceinline__ void rotate_eight(const __nv_bfloat16* source, __nv_bfloat16* target, int chunk,
                                             const float* cos_row, const float* sin_row) {
    const int first = chunk * 8;
    uint4 raw1 = *reinterpret_cast<const uint4*>(source + first);
    uint4 raw2 = *reinterpret_cast<const uint4*>(source + first + 64);
    const __nv_bfloat162* x1 = reinterpret_cast<const __nv_bfloat162*>(&raw1);
    const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(&raw2);
    float4 cos_lo = *reinterpret_cast<const float4*>(cos_row + first);
    float4 cos_hi = *reinterpret_cast<const float4*>(cos_row + first + 4);
    float4 sin_lo = *reinterpret_cast<const float4*>(sin_row + first);
    float4 sin_hi = *reinterpret_cast<const float4*>(sin_row + first + 4);
    float c[8] = {cos_lo.x, cos_lo.y, cos_lo.z, cos_lo.w, cos_hi.x, cos_hi.y, cos_hi.z, cos_hi.w};
    float s[8] = {sin_lo.x, sin_lo.y, sin_lo.z, sin_lo.w, sin_hi.x, sin_hi.y, sin_hi.z, sin_hi.w};
    uint4 out1, out2;
    __nv_bfloat162* o1 = reinterpret_cast<__nv_bfloat162*>(&out1);
    __nv_bfloat162* o2 = reinterpret_cast<__nv_bfloat162*>(&out2);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float2 a = __bfloat1622float2(x1[j]);
        float2 b = __bfloat1622float2(x2[j]);
        o1[j] = __floats2bfloat162_rn(a.x * c[2 * j] - b.x * s[2 * j], a.y * c[2 * j + 1] - b.y * s[2 * j + 1]);
        o2[j] = __floats2bfloat162_rn(b.x * c[2 * j] + a.x * s[2 * j], b.y * c[2 * j + 1] + a.y * s[2 * j + 1]);
    }
    *reinterpret_cast<uint4*>(target + first) = out1;
    *reinterpret_cast<uint4*>(target + first + 64) = out2;
}

// One block of 256 threads per token; head dim 128, 32 query heads, 8 KV heads.
extern "C" __global__ void rope_write(const long long* __restrict__ positions, const __nv_bfloat16* __restrict__ query,
                                      const __nv_bfloat16* __restrict__ key, const uint4* __restrict__ value,
                                      const float* __restrict__ cos_sin, __nv_bfloat16* __restrict__ query_out,
                                      __nv_bfloat16* __restrict__ key_cache, uint4* __restrict__ value_cache,
                                      const long long* __restrict__ slot_mapping) {
    const long long token = blockIdx.x;
    const long long slot = slot_mapping[token];
    const float* cos_row = cos_sin + positions[token] * 128;
    const float* sin_row = cos_row + 64;
    const int unit = threadIdx.x;  // 32 heads x 8 chunks
    const int head = unit >> 3, chunk = unit & 7;
    rotate_eight(query + (token * 32 + head) * 128, query_out + (token * 32 + head) * 128, chunk, cos_row, sin_row);
    if (unit < 64) {
        rotate_eight(key + (token * 8 + head) * 128, key_cache + (slot * 8 + head) * 128, chunk, cos_row, sin_row);
    }
    if (unit < 128) {  // 8 heads x 128 bf16 = 128 vectors of 16 bytes
        value_cache[slot * 128 + unit] = value[token * 128 + unit];
    }
}
"""

THREADS = 256
_copy_pair = mkb_cuda.compile(SOURCE, "copy_pair")
_rope_write = mkb_cuda.compile(SOURCE, "rope_write")


def solve(positions, query, key, value, cos_sin_cache, key_cache, value_cache, slot_mapping):
    query, key, value = query.contiguous(), key.contiguous(), value.contiguous()
    key_cache, value_cache = key_cache.contiguous(), value_cache.contiguous()
    new_keys = torch.empty_like(key_cache)
    new_values = torch.empty_like(value_cache)
    vectors = key_cache.numel() * key_cache.element_size() // 16
    blocks = min((vectors + THREADS - 1) // THREADS, 132 * 32)
    _copy_pair((blocks,), (THREADS,), [key_cache, new_keys, value_cache, new_values, vectors])
    rotated_query = torch.empty_like(query)
    _rope_write((query.shape[0],), (THREADS,), [positions.contiguous(), query, key, value, cos_sin_cache.contiguous(),
                                                rotated_query, new_keys, new_values, slot_mapping.contiguous()])
    return rotated_query, new_keys, new_values
