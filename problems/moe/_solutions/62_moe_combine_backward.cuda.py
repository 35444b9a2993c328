"""CUDA C++ solution for 62_moe_combine_backward: a 256-thread block per token keeps grad_out's row in registers (16-byte vectors), scatters the weighted gradient to each slot's row and block-reduces the slot's dot product."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define THREADS 256
#define MAX_VECTORS 4  // hidden / 8 / THREADS, rounded up: 7168 / 8 = 896 vectors

__device__ __forceinline__ void unpack8(const uint4& raw, float* out) {
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(pairs[j]);
        out[2 * j] = f.x;
        out[2 * j + 1] = f.y;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) combine_backward(
    const uint4* __restrict__ dy, const uint4* __restrict__ expert, const float* __restrict__ weights,
    const int* __restrict__ positions, uint4* __restrict__ grad_expert, float* __restrict__ grad_weights,
    int row_vectors, int top_k) {
    __shared__ float partial[THREADS / 32];
    const long long token = blockIdx.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float d[MAX_VECTORS][8];
#pragma unroll
    for (int i = 0; i < MAX_VECTORS; ++i) {
        const int v = threadIdx.x + i * THREADS;
        if (v < row_vectors) unpack8(dy[token * row_vectors + v], d[i]);
    }
    for (int k = 0; k < top_k; ++k) {
        const long long slot = token * top_k + k;
        const long long row = positions[slot];
        const float w = weights[slot];
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < MAX_VECTORS; ++i) {
            const int v = threadIdx.x + i * THREADS;
            if (v < row_vectors) {
                uint4 out_raw;
                __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(&out_raw);
#pragma unroll
                for (int j = 0; j < 4; ++j) out[j] = __floats2bfloat162_rn(w * d[i][2 * j], w * d[i][2 * j + 1]);
                grad_expert[row * row_vectors + v] = out_raw;
                float e[8];
                unpack8(expert[row * row_vectors + v], e);
#pragma unroll
                for (int j = 0; j < 8; ++j) dot += d[i][j] * e[j];
            }
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        if (lane == 0) partial[warp] = dot;
        __syncthreads();
        if (threadIdx.x == 0) {
            float total = 0.0f;
            for (int w8 = 0; w8 < THREADS / 32; ++w8) total += partial[w8];
            grad_weights[slot] = total;
        }
        __syncthreads();
    }
}
"""

_kernel = mkb_cuda.compile(SOURCE, "combine_backward")


def solve(grad_out, expert_outputs, routing_weights, positions):
    grad_out, expert_outputs = grad_out.contiguous(), expert_outputs.contiguous()
    routing_weights, positions = routing_weights.contiguous(), positions.contiguous()
    tokens, hidden = grad_out.shape  # hidden <= 8 * 256 * 4 and a multiple of 8
    top_k = positions.shape[1]
    grad_expert = torch.empty_like(expert_outputs)
    grad_weights = torch.empty(tokens, top_k, dtype=torch.float32, device=grad_out.device)
    _kernel((tokens,), (256,), [grad_out, expert_outputs, routing_weights, positions, grad_expert, grad_weights,
                                hidden // 8, top_k])
    return grad_expert, grad_weights
