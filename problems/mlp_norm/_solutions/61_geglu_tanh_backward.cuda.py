"""CUDA C++ solution for 61_geglu_tanh_backward: a thread per eight elements, 16-byte loads and stores, tanhf in float32."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define GELU_C 0.7978845608028654f
#define GELU_A 0.044715f

extern "C" __global__ void geglu_backward(const uint4* __restrict__ gate, const uint4* __restrict__ up,
                                          const uint4* __restrict__ dh, uint4* __restrict__ grad_gate,
                                          uint4* __restrict__ grad_up, long long vectors) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= vectors) return;
    uint4 g_raw = gate[i], u_raw = up[i], d_raw = dh[i];
    const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(&g_raw);
    const __nv_bfloat162* u2 = reinterpret_cast<const __nv_bfloat162*>(&u_raw);
    const __nv_bfloat162* d2 = reinterpret_cast<const __nv_bfloat162*>(&d_raw);
    uint4 gate_out, up_out;
    __nv_bfloat162* go = reinterpret_cast<__nv_bfloat162*>(&gate_out);
    __nv_bfloat162* uo = reinterpret_cast<__nv_bfloat162*>(&up_out);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float2 xs = __bfloat1622float2(g2[j]), us = __bfloat1622float2(u2[j]), ds = __bfloat1622float2(d2[j]);
        float gg[2], gu[2];
        const float xv[2] = {xs.x, xs.y}, uv[2] = {us.x, us.y}, dv[2] = {ds.x, ds.y};
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float x = xv[h];
            const float t = tanhf(GELU_C * (x + GELU_A * x * x * x));
            const float gelu = 0.5f * x * (1.0f + t);
            const float derivative =
                0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_C * (1.0f + 3.0f * GELU_A * x * x);
            gg[h] = dv[h] * uv[h] * derivative;
            gu[h] = dv[h] * gelu;
        }
        go[j] = __floats2bfloat162_rn(gg[0], gg[1]);
        uo[j] = __floats2bfloat162_rn(gu[0], gu[1]);
    }
    grad_gate[i] = gate_out;
    grad_up[i] = up_out;
}
"""

THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "geglu_backward")


def solve(gate, up, grad_h):
    gate, up, grad_h = gate.contiguous(), up.contiguous(), grad_h.contiguous()
    grad_gate = torch.empty_like(gate)
    grad_up = torch.empty_like(gate)
    vectors = gate.numel() // 8
    _kernel(((vectors + THREADS - 1) // THREADS,), (THREADS,),
            [gate, up, grad_h, grad_gate, grad_up, mkb_cuda.int64(vectors)])
    return grad_gate, grad_up
