"""CUDA C++ solution for 69_mxfp4_moe_expert_gemv: a warp per weight row of the slot's expert, four packed bytes (eight e2m1 values, one e8m0 scale) a lane per step, the token's activations in shared memory, a shared-memory decode table."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define WARPS 8
#define MAX_HIDDEN 2880

// grid (out_rows / WARPS, tokens * top_k); warp w of block b computes row b * WARPS + w of the slot's expert.
extern "C" __global__ void __launch_bounds__(WARPS * 32) mxfp4_gemv(
    const __nv_bfloat16* __restrict__ x, const unsigned char* __restrict__ blocks,
    const unsigned char* __restrict__ scales, const __nv_bfloat16* __restrict__ bias, const int* __restrict__ ids,
    __nv_bfloat16* __restrict__ out, int out_rows, int hidden, int top_k) {
    __shared__ __align__(16) float xs[MAX_HIDDEN];
    __shared__ float table[16];
    const int pair = blockIdx.y, token = pair / top_k;
    const long long expert = ids[pair];
    if (threadIdx.x < 16) {
        const float magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
        table[threadIdx.x] = threadIdx.x < 8 ? magnitudes[threadIdx.x] : -magnitudes[threadIdx.x - 8];
    }
    for (int k = threadIdx.x; k < hidden; k += blockDim.x) xs[k] = __bfloat162float(x[(long long)token * hidden + k]);
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int n = blockIdx.x * WARPS + warp;
    const long long row = expert * out_rows + n;
    const int packed_row = hidden / 2, scale_row = hidden / 32;
    const unsigned char* row_bytes = blocks + row * packed_row;
    const unsigned char* row_scales = scales + row * scale_row;
    float acc = 0.0f;
    for (int offset = lane * 4; offset < packed_row; offset += 128) {
        const unsigned int word = *reinterpret_cast<const unsigned int*>(row_bytes + offset);
        const float scale = __int_as_float((int)row_scales[offset / 16] << 23);  // 2^(byte - 127)
        const float4 xa = *reinterpret_cast<const float4*>(&xs[2 * offset]);
        const float4 xb = *reinterpret_cast<const float4*>(&xs[2 * offset + 4]);
        const float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
        float partial = 0.0f;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const unsigned int byte = (word >> (8 * b)) & 0xffu;
            partial += table[byte & 15u] * xv[2 * b] + table[byte >> 4] * xv[2 * b + 1];
        }
        acc += partial * scale;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if (lane == 0) out[(long long)pair * out_rows + n] = __float2bfloat16_rn(acc + __bfloat162float(bias[row]));
}
"""

WARPS = 8
_kernel = mkb_cuda.compile(SOURCE, "mxfp4_gemv")


def solve(x, w_blocks, w_scales, bias, topk_ids):
    x, w_blocks, w_scales = x.contiguous(), w_blocks.contiguous(), w_scales.contiguous()
    bias, topk_ids = bias.contiguous(), topk_ids.contiguous()
    tokens, top_k = topk_ids.shape
    _, out_rows, packed_row = w_blocks.shape
    hidden = packed_row * 2  # 2880: a row is 1440 bytes, a multiple of 4
    out = torch.empty(tokens, top_k, out_rows, dtype=x.dtype, device=x.device)
    _kernel((out_rows // WARPS, tokens * top_k), (WARPS * 32,), [x, w_blocks, w_scales, bias, topk_ids, out, out_rows,
                                                                 hidden, top_k])
    return out
