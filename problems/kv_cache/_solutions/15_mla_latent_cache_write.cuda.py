"""CUDA C++ solution for 15_mla_latent_cache_write: 16-byte cache copy, then one 64-thread block per token.

Each thread normalises eight of the 512 compressed values (16-byte loads, shuffle + shared-memory sum of squares);
threads 0..31 rotate one interleaved pair of the 64-wide rotary key each.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

extern "C" __global__ void copy_vectors(const int4* __restrict__ source, int4* __restrict__ target, long long vectors) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < vectors; i += stride) {
        target[i] = source[i];
    }
}

// Entry layout: 512 normalised compressed values, then 64 rotated rotary values; cos|sin rows of 32 + 32 floats.
extern "C" __global__ void latent_write(const __nv_bfloat16* __restrict__ latent,
                                        const __nv_bfloat16* __restrict__ weight,
                                        const long long* __restrict__ positions, const float* __restrict__ cos_sin,
                                        __nv_bfloat16* __restrict__ cache, const long long* __restrict__ slot_mapping,
                                        float eps) {
    __shared__ float warp_sums[2];
    const long long token = blockIdx.x;
    const long long slot = slot_mapping[token];
    const __nv_bfloat16* source = latent + token * 576;
    __nv_bfloat16* target = cache + slot * 576;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    uint4 raw = *reinterpret_cast<const uint4*>(source + threadIdx.x * 8);
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
    float values[8];
    float squares = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float2 f = __bfloat1622float2(pairs[j]);
        values[2 * j] = f.x;
        values[2 * j + 1] = f.y;
        squares += f.x * f.x + f.y * f.y;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        squares += __shfl_xor_sync(0xffffffffu, squares, offset);
    }
    if (lane == 0) {
        warp_sums[warp] = squares;
    }
    __syncthreads();
    const float inverse_rms = rsqrtf((warp_sums[0] + warp_sums[1]) / 512.0f + eps);
    uint4 weight_raw = *reinterpret_cast<const uint4*>(weight + threadIdx.x * 8);
    const __nv_bfloat162* weight_pairs = reinterpret_cast<const __nv_bfloat162*>(&weight_raw);
    uint4 out;
    __nv_bfloat162* out_pairs = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float2 w = __bfloat1622float2(weight_pairs[j]);
        out_pairs[j] = __floats2bfloat162_rn(values[2 * j] * inverse_rms * w.x, values[2 * j + 1] * inverse_rms * w.y);
    }
    *reinterpret_cast<uint4*>(target + threadIdx.x * 8) = out;

    if (threadIdx.x < 32) {
        const int pair = threadIdx.x;
        const float* row = cos_sin + positions[token] * 64;
        const float c = row[pair], s = row[32 + pair];
        float2 x = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(source + 512 + 2 * pair));
        *reinterpret_cast<__nv_bfloat162*>(target + 512 + 2 * pair) =
            __floats2bfloat162_rn(x.x * c - x.y * s, x.y * c + x.x * s);
    }
}
"""

THREADS = 256
EPS = 1e-6
_copy_vectors = mkb_cuda.compile(SOURCE, "copy_vectors")
_latent_write = mkb_cuda.compile(SOURCE, "latent_write")


def solve(kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping):
    kv_latent, kv_cache = kv_latent.contiguous(), kv_cache.contiguous()
    new_cache = torch.empty_like(kv_cache)
    vectors = kv_cache.numel() * kv_cache.element_size() // 16
    blocks = min((vectors + THREADS - 1) // THREADS, 132 * 32)
    _copy_vectors((blocks,), (THREADS,), [kv_cache, new_cache, vectors])
    _latent_write((kv_latent.shape[0],), (64,), [kv_latent, norm_weight.contiguous(), positions.contiguous(),
                                                 cos_sin_cache.contiguous(), new_cache, slot_mapping.contiguous(), EPS])
    return new_cache
