"""CUDA C++ solution for 72_fp8_cast_transpose: 32x32 tiles through shared memory (coalesced reads of x, coalesced writes of both fp8 layouts), saturating e4m3 conversion, a per-block amax and a one-block max over them."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define TILE 32
#define ROWS_PER_PASS 8

// block (32, 8): tile (blockIdx.y, blockIdx.x) of x [rows, cols]
extern "C" __global__ void cast_transpose(const __nv_bfloat16* __restrict__ x, const float* __restrict__ scale,
                                          unsigned char* __restrict__ q, unsigned char* __restrict__ qt,
                                          float* __restrict__ amax_partial, int rows, int cols) {
    __shared__ unsigned char tile[TILE][TILE + 4];
    __shared__ float warp_max[ROWS_PER_PASS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * TILE + tx;
    const float s = scale[0];
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < TILE; i += ROWS_PER_PASS) {
        const int r = blockIdx.y * TILE + ty + i;
        const float v = __bfloat162float(x[(long long)r * cols + c]);
        amax = fmaxf(amax, fabsf(v));
        const float y = fminf(fmaxf(v * s, -448.0f), 448.0f);
        const unsigned char code = (unsigned char)__nv_cvt_float_to_fp8(y, __NV_SATFINITE, __NV_E4M3);
        q[(long long)r * cols + c] = code;
        tile[ty + i][tx] = code;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    if (tx == 0) warp_max[ty] = amax;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE; i += ROWS_PER_PASS) {
        const int out_row = blockIdx.x * TILE + ty + i;  // a column of x
        qt[(long long)out_row * rows + blockIdx.y * TILE + tx] = tile[tx][ty + i];
    }
    if (tx == 0 && ty == 0) {
        float best = warp_max[0];
        for (int w = 1; w < ROWS_PER_PASS; ++w) best = fmaxf(best, warp_max[w]);
        amax_partial[(long long)blockIdx.y * gridDim.x + blockIdx.x] = best;
    }
}

extern "C" __global__ void max_of(const float* __restrict__ partial, float* __restrict__ amax, long long count) {
    __shared__ float warp_max[32];
    float best = 0.0f;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) best = fmaxf(best, partial[i]);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) best = fmaxf(best, __shfl_xor_sync(0xffffffffu, best, offset));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = best;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) best = fmaxf(best, warp_max[w]);
        best = fmaxf(best, warp_max[0]);
        amax[0] = best;
    }
}
"""

TILE = 32
_cast = mkb_cuda.compile(SOURCE, "cast_transpose")
_max = mkb_cuda.compile(SOURCE, "max_of")


def solve(x, scale):
    x, scale = x.contiguous(), scale.contiguous()
    rows, cols = x.shape  # both multiples of 32
    q = torch.empty(rows, cols, dtype=torch.float8_e4m3fn, device=x.device)
    qt = torch.empty(cols, rows, dtype=torch.float8_e4m3fn, device=x.device)
    grid = (cols // TILE, rows // TILE)
    partial = torch.empty(grid[0] * grid[1], dtype=torch.float32, device=x.device)
    amax = torch.empty(1, dtype=torch.float32, device=x.device)
    _cast(grid, (32, 8), [x, scale, q.view(torch.uint8), qt.view(torch.uint8), partial, rows, cols])
    _max((1,), (1024,), [partial, amax, mkb_cuda.int64(partial.numel())])
    return q, qt, amax
