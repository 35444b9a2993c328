"""Gated delta rule decode step as one CUDA C++ kernel: a block per (sequence, value head) reads the [128, 128] bf16
state once (each of 8 warps 16 rows, each lane four adjacent columns with 8-byte loads), normalises q and k, decays,
recalls k S and reads q S through shared-memory sums across warps, and writes the state back in the same layout."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define KEY_DIM 128
#define VALUE_DIM 128
#define WARPS 8
#define ROWS_PER_WARP (KEY_DIM / WARPS)

__device__ __forceinline__ float warp_sum(float value) {
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

__device__ __forceinline__ float2 unpack_bf16x2(unsigned int bits) {
    __nv_bfloat162 pair = *reinterpret_cast<__nv_bfloat162*>(&bits);
    return __bfloat1622float2(pair);
}

__device__ __forceinline__ unsigned int pack_bf16x2(float lo, float hi) {
    __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned int*>(&pair);
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
gated_delta_decode(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                   const __nv_bfloat16* __restrict__ v, const __nv_bfloat16* __restrict__ a,
                   const __nv_bfloat16* __restrict__ b, const float* __restrict__ a_log,
                   const float* __restrict__ dt_bias, const __nv_bfloat16* __restrict__ state,
                   __nv_bfloat16* __restrict__ out, __nv_bfloat16* __restrict__ new_state, int key_heads,
                   int value_heads, float scale, float eps) {
    __shared__ float k_shared[KEY_DIM];
    __shared__ float q_shared[KEY_DIM];
    __shared__ float partial[WARPS][VALUE_DIM];
    __shared__ float factors[4];  // q factor, k factor, decay, beta
    const int bh = blockIdx.x;
    const int batch = bh / value_heads;
    const int head = bh % value_heads;
    const int key_head = head / (value_heads / key_heads);
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int col = lane * 4;
    const long long state_base = (long long)bh * KEY_DIM * VALUE_DIM;
    const long long key_base = ((long long)batch * key_heads + key_head) * KEY_DIM;

    uint2 raw[ROWS_PER_WARP];
#pragma unroll
    for (int i = 0; i < ROWS_PER_WARP; ++i) {
        const int row = warp * ROWS_PER_WARP + i;
        raw[i] = *reinterpret_cast<const uint2*>(state + state_base + (long long)row * VALUE_DIM + col);
    }
    if (threadIdx.x < KEY_DIM) {
        k_shared[threadIdx.x] = __bfloat162float(k[key_base + threadIdx.x]);
    } else if (threadIdx.x < 2 * KEY_DIM) {
        q_shared[threadIdx.x - KEY_DIM] = __bfloat162float(q[key_base + threadIdx.x - KEY_DIM]);
    }
    __syncthreads();
    if (warp < 2) {
        const float* source = warp == 0 ? k_shared : q_shared;
        float squares = 0.0f;
        for (int d = lane; d < KEY_DIM; d += 32) squares = fmaf(source[d], source[d], squares);
        squares = warp_sum(squares);
        if (lane == 0) factors[1 - warp] = (warp == 0 ? 1.0f : scale) / sqrtf(squares + eps);
    } else if (warp == 2 && lane == 0) {
        const float x = __bfloat162float(a[bh]) + dt_bias[head];
        const float softplus = x > 20.0f ? x : log1pf(expf(x));
        factors[2] = expf(-expf(a_log[head]) * softplus);
        factors[3] = 1.0f / (1.0f + expf(-__bfloat162float(b[bh])));
    }
    __syncthreads();
    const float q_factor = factors[0];
    const float k_factor = factors[1];
    const float decay = factors[2];
    const float beta = factors[3];

    float s[ROWS_PER_WARP][4];
    float recalled[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < ROWS_PER_WARP; ++i) {
        const float2 lo = unpack_bf16x2(raw[i].x);
        const float2 hi = unpack_bf16x2(raw[i].y);
        s[i][0] = lo.x * decay;
        s[i][1] = lo.y * decay;
        s[i][2] = hi.x * decay;
        s[i][3] = hi.y * decay;
        const float kd = k_shared[warp * ROWS_PER_WARP + i] * k_factor;
#pragma unroll
        for (int c = 0; c < 4; ++c) recalled[c] = fmaf(kd, s[i][c], recalled[c]);
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) partial[warp][col + c] = recalled[c];
    __syncthreads();
    float written[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        float total = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) total += partial[w][col + c];
        written[c] = (__bfloat162float(v[(long long)bh * VALUE_DIM + col + c]) - total) * beta;
    }
    __syncthreads();
    float readout[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < ROWS_PER_WARP; ++i) {
        const int row = warp * ROWS_PER_WARP + i;
        const float kd = k_shared[row] * k_factor;
        const float qd = q_shared[row] * q_factor;
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            s[i][c] = fmaf(kd, written[c], s[i][c]);
            readout[c] = fmaf(qd, s[i][c], readout[c]);
        }
        uint2 packed;
        packed.x = pack_bf16x2(s[i][0], s[i][1]);
        packed.y = pack_bf16x2(s[i][2], s[i][3]);
        *reinterpret_cast<uint2*>(new_state + state_base + (long long)row * VALUE_DIM + col) = packed;
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) partial[warp][col + c] = readout[c];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            float total = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) total += partial[w][col + c];
            out[(long long)bh * VALUE_DIM + col + c] = __float2bfloat16_rn(total);
        }
    }
}
"""

THREADS = 256
NORM_EPS = 1e-6
_kernel = mkb_cuda.compile(SOURCE, "gated_delta_decode")


def solve(q, k, v, a, b, a_log, dt_bias, state):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    a = a.contiguous()
    b = b.contiguous()
    a_log = a_log.contiguous()
    dt_bias = dt_bias.contiguous()
    state = state.contiguous()
    batch, key_heads, key_dim = q.shape
    value_heads = v.shape[1]
    out = torch.empty_like(v)
    new_state = torch.empty_like(state)
    _kernel((batch * value_heads, 1, 1), (THREADS, 1, 1),
            [q, k, v, a, b, a_log, dt_bias, state, out, new_state, key_heads, value_heads, float(key_dim**-0.5),
             NORM_EPS])
    return out, new_state
