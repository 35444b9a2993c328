"""Mamba-2 SSD scan as a CUDA C++ kernel in its recurrent form: each warp owns four head-dim rows of one head's
[64, 128] state (four state columns per lane, in registers) and walks the tokens, h = exp(dt A) h + dt x B^T,
y = h C + D x with a warp-shuffle sum; every 32 tokens the block stages B, C, the softplus steps, the decays and its
slice of x in shared memory."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define STATE 128
#define TILE 32
#define WARPS 4
#define DIMS_PER_WARP 4
#define BLOCK_DIMS (WARPS * DIMS_PER_WARP)
#define STATES_PER_LANE (STATE / 32)

__device__ __forceinline__ float warp_sum(float value) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
ssd_scan(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ dt_raw, const float* __restrict__ a,
         const __nv_bfloat16* __restrict__ b, const __nv_bfloat16* __restrict__ c, const float* __restrict__ d,
         const float* __restrict__ dt_bias, __nv_bfloat16* __restrict__ out, int heads, int seq_len, int head_dim) {
    __shared__ float b_tile[TILE][STATE];
    __shared__ float c_tile[TILE][STATE];
    __shared__ float x_tile[TILE][BLOCK_DIMS];
    __shared__ float dt_tile[TILE];
    __shared__ float decay_tile[TILE];
    const int bh = blockIdx.x;
    const int batch = bh / heads;
    const int head = bh % heads;
    const int dim0 = blockIdx.y * BLOCK_DIMS;
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const long long x_base = ((long long)batch * seq_len * heads + head) * head_dim;
    const long long x_stride = (long long)heads * head_dim;
    const long long dt_base = (long long)batch * seq_len * heads + head;
    const long long bc_base = (long long)batch * seq_len * STATE;
    const float a_head = a[head];
    const float d_skip = d[head];
    const float bias = dt_bias[head];
    float h[STATES_PER_LANE][DIMS_PER_WARP];
#pragma unroll
    for (int r = 0; r < STATES_PER_LANE; ++r)
#pragma unroll
        for (int p = 0; p < DIMS_PER_WARP; ++p) h[r][p] = 0.0f;

    for (int t0 = 0; t0 < seq_len; t0 += TILE) {
        __syncthreads();
#pragma unroll
        for (int i = threadIdx.x; i < TILE * STATE / 2; i += WARPS * 32) {
            const int step = i / (STATE / 2);
            const int n = (i % (STATE / 2)) * 2;
            const long long at = bc_base + (long long)(t0 + step) * STATE + n;
            const float2 bv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(b + at));
            const float2 cv = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(c + at));
            b_tile[step][n] = bv.x;
            b_tile[step][n + 1] = bv.y;
            c_tile[step][n] = cv.x;
            c_tile[step][n + 1] = cv.y;
        }
#pragma unroll
        for (int i = threadIdx.x; i < TILE * BLOCK_DIMS; i += WARPS * 32) {
            const int step = i / BLOCK_DIMS;
            const int p = i % BLOCK_DIMS;
            x_tile[step][p] = __bfloat162float(x[x_base + (long long)(t0 + step) * x_stride + dim0 + p]);
        }
        if (threadIdx.x < TILE) {
            const float raw = __bfloat162float(dt_raw[dt_base + (long long)(t0 + threadIdx.x) * heads]) + bias;
            const float dt = raw > 20.0f ? raw : log1pf(expf(raw));
            dt_tile[threadIdx.x] = dt;
            decay_tile[threadIdx.x] = expf(dt * a_head);
        }
        __syncthreads();
        for (int step = 0; step < TILE; ++step) {
            const float dt = dt_tile[step];
            const float decay = decay_tile[step];
            float xs[DIMS_PER_WARP], partial[DIMS_PER_WARP];
#pragma unroll
            for (int p = 0; p < DIMS_PER_WARP; ++p) {
                xs[p] = x_tile[step][warp * DIMS_PER_WARP + p];
                partial[p] = 0.0f;
            }
#pragma unroll
            for (int r = 0; r < STATES_PER_LANE; ++r) {
                const float bn = b_tile[step][r * 32 + lane];
                const float cn = c_tile[step][r * 32 + lane];
#pragma unroll
                for (int p = 0; p < DIMS_PER_WARP; ++p) {
                    h[r][p] = fmaf(decay, h[r][p], dt * xs[p] * bn);
                    partial[p] = fmaf(h[r][p], cn, partial[p]);
                }
            }
#pragma unroll
            for (int p = 0; p < DIMS_PER_WARP; ++p) {
                const float total = warp_sum(partial[p]);
                if (lane == p) {
                    out[x_base + (long long)(t0 + step) * x_stride + dim0 + warp * DIMS_PER_WARP + p] =
                        __float2bfloat16_rn(fmaf(d_skip, xs[p], total));
                }
            }
        }
    }
}
"""

BLOCK_DIMS = 16
THREADS = 128
_kernel = mkb_cuda.compile(SOURCE, "ssd_scan")


def solve(x, dt_raw, a, b, c, d, dt_bias):
    x = x.contiguous()
    dt_raw = dt_raw.contiguous()
    a = a.contiguous()
    b = b.contiguous()
    c = c.contiguous()
    d = d.contiguous()
    dt_bias = dt_bias.contiguous()
    batch, seq_len, heads, head_dim = x.shape
    out = torch.empty_like(x)
    _kernel((batch * heads, head_dim // BLOCK_DIMS, 1), (THREADS, 1, 1),
            [x, dt_raw, a, b, c, d, dt_bias, out, heads, seq_len, head_dim])
    return out
