"""CUDA C++ solution for 63_moe_permute_backward: a block per token, one 16-byte vector of each of its 8 gradient rows a thread, summed in slot order in float32."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

// blockDim.x * 8 >= hidden; thread v owns columns 8v .. 8v + 7.
extern "C" __global__ void permute_backward(const uint4* __restrict__ grad, const int* __restrict__ positions,
                                            uint4* __restrict__ out, int row_vectors, int top_k) {
    const long long token = blockIdx.x;
    const int v = threadIdx.x;
    if (v >= row_vectors) return;
    float acc[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = 0.0f;
    for (int k = 0; k < top_k; ++k) {
        const long long row = positions[token * top_k + k];
        uint4 raw = grad[row * row_vectors + v];
        const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float2 f = __bfloat1622float2(pairs[j]);
            acc[2 * j] += f.x;
            acc[2 * j + 1] += f.y;
        }
    }
    uint4 out_raw;
    __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&out_raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) o[j] = __floats2bfloat162_rn(acc[2 * j], acc[2 * j + 1]);
    out[token * row_vectors + v] = out_raw;
}
"""

_kernel = mkb_cuda.compile(SOURCE, "permute_backward")


def solve(grad_permuted, positions):
    grad_permuted, positions = grad_permuted.contiguous(), positions.contiguous()
    tokens, top_k = positions.shape
    hidden = grad_permuted.shape[1]  # 2048: 256 vectors of eight bf16
    out = torch.empty(tokens, hidden, dtype=grad_permuted.dtype, device=grad_permuted.device)
    row_vectors = hidden // 8
    _kernel((tokens,), (row_vectors,), [grad_permuted, positions, out, row_vectors, top_k])
    return out
