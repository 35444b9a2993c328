"""CUDA C++ solution for 74_nvfp4_quantize: a thread per 16-value block (two 16-byte loads, one 8-byte store of codes and one e4m3 scale byte); the scale is rounded with the hardware's saturating e4m3 conversion and read back exactly through fp16."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

__device__ __forceinline__ unsigned int e2m1_code(float y) {
    const float a = fabsf(y);
    const unsigned int magnitude = (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) + (a >= 3.5f) +
                                   (a > 5.0f);
    return magnitude | (y < 0.0f ? 8u : 0u);
}

extern "C" __global__ void nvfp4_quantize(const uint4* __restrict__ x, const float* __restrict__ global_scale,
                                          uint2* __restrict__ packed, unsigned char* __restrict__ scales,
                                          long long blocks) {
    const long long block = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (block >= blocks) return;
    float v[16];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        const uint4 raw = x[block * 2 + q];
        const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float2 f = __bfloat1622float2(pairs[j]);
            v[q * 8 + 2 * j] = f.x;
            v[q * 8 + 2 * j + 1] = f.y;
        }
    }
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(v[j]));
    const float g = global_scale[0];
    const __nv_fp8_storage_t s8 = __nv_cvt_float_to_fp8(fminf(amax / 6.0f * g, 448.0f), __NV_SATFINITE, __NV_E4M3);
    const __half_raw back = __nv_cvt_fp8_to_halfraw(s8, __NV_E4M3);
    const float s = __half2float(__half(back));
    const float multiplier = s > 0.0f ? g / s : 0.0f;
    unsigned int words[2];
#pragma unroll
    for (int w = 0; w < 2; ++w) {
        unsigned int word = 0u;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const int e = w * 8 + b * 2;
            word |= (e2m1_code(v[e] * multiplier) | (e2m1_code(v[e + 1] * multiplier) << 4)) << (8 * b);
        }
        words[w] = word;
    }
    packed[block] = make_uint2(words[0], words[1]);
    scales[block] = (unsigned char)s8;
}
"""

NV_BLOCK = 16
THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "nvfp4_quantize")


def solve(x, global_scale):
    x, global_scale = x.contiguous(), global_scale.contiguous()
    tokens, hidden = x.shape
    packed = torch.empty(tokens, hidden // 2, dtype=torch.uint8, device=x.device)
    scales = torch.empty(tokens, hidden // NV_BLOCK, dtype=torch.float8_e4m3fn, device=x.device)
    blocks = tokens * hidden // NV_BLOCK
    _kernel(((blocks + THREADS - 1) // THREADS,), (THREADS,), [x, global_scale, packed, scales.view(torch.uint8),
                                                               mkb_cuda.int64(blocks)])
    return packed, scales
