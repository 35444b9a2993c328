"""CUDA C++ SiLU-mul with 1x128 fp8 group quantisation: one warp per group, 4 channels a lane, shuffle absmax."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_fp8.h>

#define GROUP_SIZE 128
#define WARPS_PER_BLOCK 8
#define FP8_MAX 448.0f
#define MIN_AMAX 1e-10f

__device__ __forceinline__ float bf16_low(unsigned int pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float bf16_high(unsigned int pair) { return __uint_as_float(pair & 0xffff0000u); }
__device__ __forceinline__ float silu_mul(float gate, float up) { return gate / (1.0f + expf(-gate)) * up; }

__device__ __forceinline__ unsigned short to_fp8x2(float a, float b) {
    float2 pair = make_float2(fminf(fmaxf(a, -FP8_MAX), FP8_MAX), fminf(fmaxf(b, -FP8_MAX), FP8_MAX));
    return (unsigned short)__nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, __NV_E4M3);  // nearest, ties to even
}

// gate_up: [tokens, 2 * intermediate] bf16 (gate then up); q: [tokens, intermediate] e4m3;
// scale: [tokens, intermediate / 128] float32. One warp quantises one 128-channel group.
extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * 32) silu_mul_group_fp8(
    const unsigned int* __restrict__ gate_up, unsigned int* __restrict__ q, float* __restrict__ scale,
    int intermediate, long long total_groups) {
    const long long group = (long long)blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    if (group >= total_groups) return;
    const int lane = threadIdx.x & 31;
    const int groups_per_row = intermediate / GROUP_SIZE;
    const long long row = group / groups_per_row;
    const int column = (int)(group % groups_per_row) * GROUP_SIZE + lane * 4;
    // bf16 pairs: the gate at row * 2I + column, the up projection I channels later.
    const uint2 gate = *reinterpret_cast<const uint2*>(gate_up + (row * 2 * intermediate + column) / 2);
    const uint2 up = *reinterpret_cast<const uint2*>(gate_up + (row * 2 * intermediate + intermediate + column) / 2);
    float h0 = silu_mul(bf16_low(gate.x), bf16_low(up.x));
    float h1 = silu_mul(bf16_high(gate.x), bf16_high(up.x));
    float h2 = silu_mul(bf16_low(gate.y), bf16_low(up.y));
    float h3 = silu_mul(bf16_high(gate.y), bf16_high(up.y));
    float amax = fmaxf(fmaxf(fabsf(h0), fabsf(h1)), fmaxf(fabsf(h2), fabsf(h3)));
    for (int offset = 16; offset > 0; offset >>= 1) {
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    }
    const float s = fmaxf(amax, MIN_AMAX) / FP8_MAX;
    unsigned int packed = (unsigned int)to_fp8x2(h0 / s, h1 / s) | ((unsigned int)to_fp8x2(h2 / s, h3 / s) << 16);
    q[(row * intermediate + column) / 4] = packed;
    if (lane == 0) scale[group] = s;
}
"""

WARPS_PER_BLOCK = 8
GROUP_SIZE = 128
_kernel = mkb_cuda.compile(SOURCE, "silu_mul_group_fp8")


def solve(gate_up):
    gate_up = gate_up.contiguous()
    tokens, width = gate_up.shape
    intermediate = width // 2
    assert intermediate % GROUP_SIZE == 0, "the intermediate size must be whole 128-channel groups"
    groups_per_row = intermediate // GROUP_SIZE
    q = torch.empty((tokens, intermediate), dtype=torch.float8_e4m3fn, device=gate_up.device)
    scale = torch.empty((tokens, groups_per_row), dtype=torch.float32, device=gate_up.device)
    total_groups = tokens * groups_per_row
    blocks = (total_groups + WARPS_PER_BLOCK - 1) // WARPS_PER_BLOCK
    _kernel((blocks, 1, 1), (WARPS_PER_BLOCK * 32, 1, 1), [gate_up, q, scale, intermediate, total_groups])
    return q, scale
