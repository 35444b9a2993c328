"""CUDA C++ solution for 17_parallel_residual_layernorm: one 256-thread block per row, up to three 16-byte vectors
per thread (4544 = 568 vectors of eight bf16), two-pass mean and variance from registers, fixed-order reductions.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define VECTORS_PER_THREAD 3

// Sums a value over the block in a fixed order (warp shuffles, then the warp totals one by one).
__device__ float block_sum(float value, float* scratch) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        value += __shfl_xor_sync(0xffffffffu, value, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        scratch[threadIdx.x >> 5] = value;
    }
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
        total += scratch[w];
    }
    __syncthreads();  // scratch may be reused by the next call
    return total;
}

extern "C" __global__ void residual_layernorm(const uint4* __restrict__ attention, const uint4* __restrict__ mlp,
                                              const uint4* __restrict__ residual, const uint4* __restrict__ weight,
                                              const uint4* __restrict__ bias, uint4* __restrict__ out,
                                              uint4* __restrict__ residual_out, int row_vectors, float eps) {
    __shared__ float scratch[32];
    const long long base = (long long)blockIdx.x * row_vectors;
    float values[VECTORS_PER_THREAD][8];
    float sum = 0.0f;
#pragma unroll
    for (int v = 0; v < VECTORS_PER_THREAD; ++v) {
        const int i = threadIdx.x + v * blockDim.x;
        if (i < row_vectors) {
            uint4 a_raw = attention[base + i], m_raw = mlp[base + i], r_raw = residual[base + i];
            const __nv_bfloat162* a = reinterpret_cast<const __nv_bfloat162*>(&a_raw);
            const __nv_bfloat162* m = reinterpret_cast<const __nv_bfloat162*>(&m_raw);
            const __nv_bfloat162* r = reinterpret_cast<const __nv_bfloat162*>(&r_raw);
            uint4 s_raw;
            __nv_bfloat162* s = reinterpret_cast<__nv_bfloat162*>(&s_raw);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                float2 af = __bfloat1622float2(a[j]), mf = __bfloat1622float2(m[j]), rf = __bfloat1622float2(r[j]);
                values[v][2 * j] = rf.x + af.x + mf.x;
                values[v][2 * j + 1] = rf.y + af.y + mf.y;
                sum += values[v][2 * j] + values[v][2 * j + 1];
                s[j] = __floats2bfloat162_rn(values[v][2 * j], values[v][2 * j + 1]);
            }
            residual_out[base + i] = s_raw;
        }
    }
    const float hidden_size = (float)(row_vectors * 8);
    const float mean = block_sum(sum, scratch) / hidden_size;
    float squares = 0.0f;
#pragma unroll
    for (int v = 0; v < VECTORS_PER_THREAD; ++v) {
        const int i = threadIdx.x + v * blockDim.x;
        if (i < row_vectors) {
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                values[v][j] -= mean;
                squares += values[v][j] * values[v][j];
            }
        }
    }
    const float inverse_std = rsqrtf(block_sum(squares, scratch) / hidden_size + eps);
#pragma unroll
    for (int v = 0; v < VECTORS_PER_THREAD; ++v) {
        const int i = threadIdx.x + v * blockDim.x;
        if (i < row_vectors) {
            uint4 w_raw = weight[i], b_raw = bias[i];
            const __nv_bfloat162* w = reinterpret_cast<const __nv_bfloat162*>(&w_raw);
            const __nv_bfloat162* b = reinterpret_cast<const __nv_bfloat162*>(&b_raw);
            uint4 o_raw;
            __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&o_raw);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                float2 wf = __bfloat1622float2(w[j]), bf = __bfloat1622float2(b[j]);
                o[j] = __floats2bfloat162_rn(values[v][2 * j] * inverse_std * wf.x + bf.x,
                                             values[v][2 * j + 1] * inverse_std * wf.y + bf.y);
            }
            out[base + i] = o_raw;
        }
    }
}
"""

EPS = 1e-5
THREADS = 256  # 3 * 256 >= 568 vectors per 4544-wide row
_residual_layernorm = mkb_cuda.compile(SOURCE, "residual_layernorm")


def solve(attention_out, mlp_out, residual, weight, bias):
    attention_out, mlp_out, residual = attention_out.contiguous(), mlp_out.contiguous(), residual.contiguous()
    rows, hidden_size = residual.shape
    out = torch.empty_like(residual)
    residual_out = torch.empty_like(residual)
    _residual_layernorm((rows,), (THREADS,), [attention_out, mlp_out, residual, weight.contiguous(), bias.contiguous(),
                                              out, residual_out, hidden_size // 8, EPS])
    return out, residual_out
