"""CUDA C++ solution for 18_swiglu_concat: each thread reads eight gate and eight up values (16-byte loads)."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

extern "C" __global__ void silu_and_mul(const uint4* __restrict__ gate_up, uint4* __restrict__ out,
                                        int row_vectors) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;  // vector index within the output row
    if (i >= row_vectors) {
        return;
    }
    const long long row = blockIdx.y;
    uint4 g_raw = gate_up[row * 2 * row_vectors + i];
    uint4 u_raw = gate_up[row * 2 * row_vectors + row_vectors + i];
    const __nv_bfloat162* g = reinterpret_cast<const __nv_bfloat162*>(&g_raw);
    const __nv_bfloat162* u = reinterpret_cast<const __nv_bfloat162*>(&u_raw);
    uint4 o_raw;
    __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&o_raw);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        float2 gf = __bfloat1622float2(g[j]);
        float2 uf = __bfloat1622float2(u[j]);
        float a = gf.x / (1.0f + expf(-gf.x)) * uf.x;
        float b = gf.y / (1.0f + expf(-gf.y)) * uf.y;
        o[j] = __floats2bfloat162_rn(a, b);
    }
    out[row * row_vectors + i] = o_raw;
}
"""

THREADS = 256
_silu_and_mul = mkb_cuda.compile(SOURCE, "silu_and_mul")


def solve(gate_up):
    gate_up = gate_up.contiguous()
    rows, width = gate_up.shape
    intermediate = width // 2
    out = torch.empty(rows, intermediate, device=gate_up.device, dtype=gate_up.dtype)
    row_vectors = intermediate // 8
    _silu_and_mul(((row_vectors + THREADS - 1) // THREADS, rows), (THREADS,), [gate_up, out, row_vectors])
    return out
