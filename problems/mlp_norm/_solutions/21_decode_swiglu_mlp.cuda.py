"""CUDA C++ solution for 21_decode_swiglu_mlp: bf16 tensor-core GEMMs (mma.sync m16n8k16 through inline PTX).

Each warp multiplies all 32 tokens (two m16 tiles) by n8 tiles of weight rows, reading operands straight from global
memory with 16-byte loads: within every 32-wide k step a lane owns k = 8t..8t+7 of its rows, and the same
permutation of k is used for A and B, so the dot products are unchanged. Kernel 1 computes gate and up tiles of the
same columns and applies silu(gate) * up in registers; kernel 2 splits K over the eight warps of a block and sums
their partial tiles through shared memory in a fixed order.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define TOKENS 32

__device__ __forceinline__ void mma_bf16(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                         unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// acc[j][m][.] += X[32 tokens, k_begin..k_end) * W[row j of this lane]^T for TILES n8 tiles. X rows have k_dim
// elements; w_rows[j] points at the weight row (tile base + lane / 4) of tile j.
template <int TILES>
__device__ __forceinline__ void accumulate(float (&acc)[TILES][2][4], const __nv_bfloat16* __restrict__ x,
                                           const __nv_bfloat16* const (&w_rows)[TILES], int k_dim, int k_begin,
                                           int k_end) {
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
#pragma unroll 2
    for (int k0 = k_begin; k0 < k_end; k0 += 32) {
        const int k = k0 + 8 * t;
        uint4 w[TILES];
#pragma unroll
        for (int j = 0; j < TILES; ++j) {
            w[j] = __ldg(reinterpret_cast<const uint4*>(w_rows[j] + k));
        }
        uint4 xa[4];  // token rows g, g + 8, g + 16, g + 24
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            xa[r] = __ldg(reinterpret_cast<const uint4*>(x + (long long)(g + 8 * r) * k_dim + k));
        }
#pragma unroll
        for (int j = 0; j < TILES; ++j) {
#pragma unroll
            for (int m = 0; m < 2; ++m) {
                const uint4 lo = xa[2 * m], hi = xa[2 * m + 1];
                mma_bf16(acc[j][m], lo.x, hi.x, lo.y, hi.y, w[j].x, w[j].y);  // k = 8t .. 8t + 3
                mma_bf16(acc[j][m], lo.z, hi.z, lo.w, hi.w, w[j].z, w[j].w);  // k = 8t + 4 .. 8t + 7
            }
        }
    }
}

// Kernel 1: each warp owns 16 intermediate columns: gate rows n..n+15 and up rows I+n..I+n+15 of gate_up_weight.
extern "C" __global__ void gate_up_act(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ weight,
                                       __nv_bfloat16* __restrict__ hidden, int hidden_size, int intermediate) {
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int base = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * 16;
    const __nv_bfloat16* const w_rows[4] = {
        weight + (long long)(base + g) * hidden_size, weight + (long long)(base + 8 + g) * hidden_size,
        weight + (long long)(intermediate + base + g) * hidden_size,
        weight + (long long)(intermediate + base + 8 + g) * hidden_size};
    float acc[4][2][4] = {};
    accumulate<4>(acc, x, w_rows, hidden_size, 0, hidden_size);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
#pragma unroll
        for (int m = 0; m < 2; ++m) {
            const int column = base + j * 8 + 2 * t;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = m * 16 + g + 8 * half;
                const float g0 = acc[j][m][2 * half], g1 = acc[j][m][2 * half + 1];
                const float u0 = acc[j + 2][m][2 * half], u1 = acc[j + 2][m][2 * half + 1];
                const float h0 = g0 / (1.0f + expf(-g0)) * u0;
                const float h1 = g1 / (1.0f + expf(-g1)) * u1;
                *reinterpret_cast<__nv_bfloat162*>(hidden + (long long)row * intermediate + column) =
                    __floats2bfloat162_rn(h0, h1);
            }
        }
    }
}

// Kernel 2: a block of 8 warps owns 16 output columns; warp w covers K slice w; partial tiles meet in shared memory.
extern "C" __global__ void down_proj(const __nv_bfloat16* __restrict__ hidden, const __nv_bfloat16* __restrict__ weight,
                                     __nv_bfloat16* __restrict__ out, int hidden_size, int intermediate) {
    __shared__ float partial[8][512];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2;
    const int base = blockIdx.x * 16;
    const __nv_bfloat16* const w_rows[2] = {weight + (long long)(base + g) * intermediate,
                                            weight + (long long)(base + 8 + g) * intermediate};
    const int slice = intermediate / 8;
    float acc[2][2][4] = {};
    accumulate<2>(acc, hidden, w_rows, intermediate, warp * slice, (warp + 1) * slice);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
#pragma unroll
        for (int m = 0; m < 2; ++m) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                partial[warp][lane * 16 + j * 8 + m * 4 + r] = acc[j][m][r];
            }
        }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < 512; e += blockDim.x) {
        float total = 0.0f;
#pragma unroll
        for (int w = 0; w < 8; ++w) {
            total += partial[w][e];
        }
        const int owner = e >> 4, j = (e >> 3) & 1, m = (e >> 2) & 1, r = e & 3;
        const int row = m * 16 + (owner >> 2) + (r >= 2 ? 8 : 0);
        const int column = base + j * 8 + 2 * (owner & 3) + (r & 1);
        out[row * hidden_size + column] = __float2bfloat16_rn(total);
    }
}
"""

WARPS_PER_BLOCK = 4
_gate_up_act = mkb_cuda.compile(SOURCE, "gate_up_act")
_down_proj = mkb_cuda.compile(SOURCE, "down_proj")


def solve(x, gate_up_weight, down_weight):
    x, gate_up_weight, down_weight = x.contiguous(), gate_up_weight.contiguous(), down_weight.contiguous()
    tokens, hidden_size = x.shape  # 32 tokens: two m16 tiles per warp
    intermediate = down_weight.shape[1]
    hidden = torch.empty(tokens, intermediate, device=x.device, dtype=x.dtype)
    _gate_up_act((intermediate // (16 * WARPS_PER_BLOCK),), (32 * WARPS_PER_BLOCK,),
                 [x, gate_up_weight, hidden, hidden_size, intermediate])
    out = torch.empty(tokens, hidden_size, device=x.device, dtype=x.dtype)
    _down_proj((hidden_size // 16,), (256,), [hidden, down_weight, out, hidden_size, intermediate])
    return out
