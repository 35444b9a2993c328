"""CUDA C++ solution for 57_swiglu_backward: a thread per eight columns (16-byte loads of gate, up and grad_h), float32 math, both gradients stored as 16-byte vectors."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

// gate_up [rows, 2 * I], dh [rows, I], out like gate_up; I % 8 == 0. Thread i owns columns 8i .. 8i + 7 of a row.
extern "C" __global__ void swiglu_backward(const uint4* __restrict__ gate_up, const uint4* __restrict__ dh,
                                           uint4* __restrict__ out, long long total_vectors, int row_vectors) {
    const long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= total_vectors) return;
    const long long row = index / row_vectors;
    const int v = (int)(index - row * row_vectors);
    const long long gate_index = row * 2 * row_vectors + v;
    uint4 g_raw = gate_up[gate_index], u_raw = gate_up[gate_index + row_vectors], d_raw = dh[index];
    const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(&g_raw);
    const __nv_bfloat162* u2 = reinterpret_cast<const __nv_bfloat162*>(&u_raw);
    const __nv_bfloat162* d2 = reinterpret_cast<const __nv_bfloat162*>(&d_raw);
    uint4 gate_out, up_out;
    __nv_bfloat162* go = reinterpret_cast<__nv_bfloat162*>(&gate_out);
    __nv_bfloat162* uo = reinterpret_cast<__nv_bfloat162*>(&up_out);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float2 g = __bfloat1622float2(g2[j]), u = __bfloat1622float2(u2[j]), d = __bfloat1622float2(d2[j]);
        const float sa = 1.0f / (1.0f + expf(-g.x)), sb = 1.0f / (1.0f + expf(-g.y));
        go[j] = __floats2bfloat162_rn(d.x * u.x * sa * (1.0f + g.x * (1.0f - sa)),
                                      d.y * u.y * sb * (1.0f + g.y * (1.0f - sb)));
        uo[j] = __floats2bfloat162_rn(d.x * g.x * sa, d.y * g.y * sb);
    }
    out[gate_index] = gate_out;
    out[gate_index + row_vectors] = up_out;
}
"""

THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "swiglu_backward")


def solve(gate_up, grad_h):
    gate_up, grad_h = gate_up.contiguous(), grad_h.contiguous()
    rows, intermediate = grad_h.shape
    out = torch.empty_like(gate_up)
    row_vectors = intermediate // 8
    total = rows * row_vectors
    _kernel(((total + THREADS - 1) // THREADS,), (THREADS,), [gate_up, grad_h, out, mkb_cuda.int64(total), row_vectors])
    return out
