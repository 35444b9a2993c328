"""CUDA C++ solution for 67_shared_expert_gate: a 256-thread block per token (one 16-byte vector of each tensor a thread), block-reduced gate dot product, one pass."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

__device__ __forceinline__ void unpack8(const uint4& raw, float* out) {
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(pairs[j]);
        out[2 * j] = f.x;
        out[2 * j + 1] = f.y;
    }
}

// blockDim.x == hidden / 8 (256 for hidden 2048).
extern "C" __global__ void shared_expert_gate(const uint4* __restrict__ x, const uint4* __restrict__ routed,
                                              const uint4* __restrict__ shared, const uint4* __restrict__ w,
                                              uint4* __restrict__ out) {
    __shared__ float partial[32];
    const long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float xv[8], wv[8];
    unpack8(x[index], xv);
    unpack8(w[threadIdx.x], wv);
    float dot = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) dot += xv[j] * wv[j];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = dot;
    __syncthreads();
    float total = 0.0f;
    for (int k = 0; k < (int)(blockDim.x >> 5); ++k) total += partial[k];
    const float gate = 1.0f / (1.0f + expf(-total));
    float rv[8], sv[8];
    unpack8(routed[index], rv);
    unpack8(shared[index], sv);
    uint4 out_raw;
    __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&out_raw);
#pragma unroll
    for (int j = 0; j < 4; ++j)
        o[j] = __floats2bfloat162_rn(rv[2 * j] + gate * sv[2 * j], rv[2 * j + 1] + gate * sv[2 * j + 1]);
    out[index] = out_raw;
}
"""

_kernel = mkb_cuda.compile(SOURCE, "shared_expert_gate")


def solve(x, routed, shared, w_gate):
    x, routed, shared, w_gate = x.contiguous(), routed.contiguous(), shared.contiguous(), w_gate.contiguous()
    tokens, hidden = x.shape
    out = torch.empty_like(routed)
    _kernel((tokens,), (hidden // 8,), [x, routed, shared, w_gate, out])
    return out
