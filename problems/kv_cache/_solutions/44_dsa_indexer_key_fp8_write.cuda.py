"""CUDA C++ solution: a 16-byte vector copy of both caches, then one warp per token: each lane holds 4 of the 128
key values, the amax is a warp-shuffle max, the UE8M0 scale is exact, and the lane stores its 4 fp8 codes at once.

The outputs are whole caches, so the pool copy (the same traffic as the reference's clone) bounds the speedup.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_fp8.h>

#define HEAD_DIM 128
#define FP8_MAX 448.0f
#define AMAX_FLOOR 1e-4f
#define FULL_MASK 0xffffffffu
#define WARPS 8

__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

extern "C" __global__ void copy_vectors(const uint4* __restrict__ src, uint4* __restrict__ dst, long long vectors) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < vectors;
         i += (long long)gridDim.x * blockDim.x) {
        dst[i] = src[i];
    }
}

extern "C" __global__ void copy_words(const float* __restrict__ src, float* __restrict__ dst, long long count) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        dst[i] = src[i];
    }
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
quantize_write(const unsigned short* __restrict__ keys, unsigned char* __restrict__ cache, float* __restrict__ scales,
               const long long* __restrict__ slot_mapping, int num_tokens) {
    const int token = blockIdx.x * WARPS + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (token >= num_tokens) {
        return;
    }
    const uint2 word = *reinterpret_cast<const uint2*>(keys + (long long)token * HEAD_DIM + lane * 4);
    float x[4] = {bf16_bits_to_float(word.x & 0xffffu), bf16_bits_to_float(word.x >> 16),
                  bf16_bits_to_float(word.y & 0xffffu), bf16_bits_to_float(word.y >> 16)};
    float amax = fmaxf(fmaxf(fabsf(x[0]), fabsf(x[1])), fmaxf(fabsf(x[2]), fabsf(x[3])));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        amax = fmaxf(amax, __shfl_xor_sync(FULL_MASK, amax, o));
    }
    amax = fmaxf(amax, AMAX_FLOOR);
    const float scale = exp2f(ceilf(log2f(amax / FP8_MAX)));
    unsigned int packed = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float q = fminf(fmaxf(x[i] / scale, -FP8_MAX), FP8_MAX);
        packed |= (unsigned int)__nv_cvt_float_to_fp8(q, __NV_SATFINITE, __NV_E4M3) << (8 * i);
    }
    const long long slot = slot_mapping[token];
    *reinterpret_cast<unsigned int*>(cache + slot * HEAD_DIM + lane * 4) = packed;
    if (lane == 0) {
        scales[slot] = scale;
    }
}
"""

THREADS = 256
WARPS = 8
_copy_vectors = mkb_cuda.compile(SOURCE, "copy_vectors")
_copy_words = mkb_cuda.compile(SOURCE, "copy_words")
_quantize_write = mkb_cuda.compile(SOURCE, "quantize_write")


def solve(keys, key_cache, scale_cache, slot_mapping):
    keys = keys.contiguous()
    key_cache, scale_cache = key_cache.contiguous(), scale_cache.contiguous()
    assert keys.shape[1] == 128, "written for 128-dim indexer keys"
    new_keys = torch.empty_like(key_cache)
    new_scales = torch.empty_like(scale_cache)
    vectors = key_cache.numel() // 16
    _copy_vectors((min((vectors + THREADS - 1) // THREADS, 132 * 32),), (THREADS,), [key_cache, new_keys, vectors])
    count = scale_cache.numel()
    _copy_words((min((count + THREADS - 1) // THREADS, 132 * 8),), (THREADS,), [scale_cache, new_scales, count])
    num_tokens = keys.shape[0]
    _quantize_write(((num_tokens + WARPS - 1) // WARPS,), (WARPS * 32,),
                    [keys, new_keys, new_scales, slot_mapping.contiguous(), num_tokens])
    return new_keys, new_scales
