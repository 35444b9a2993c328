"""CUDA C++ W8A8 GEMM: int8 mma.sync tensor-core tiles accumulated exactly in int32, both scales in the epilogue."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_fp16.h>

#define BM 64
#define BN 64
#define BK 128            // bytes of K a tile holds
#define LDS 144           // padded shared row (bytes): fragment loads of 8 rows x 4 bytes hit distinct banks
#define THREADS 128       // 4 warps: 2 along M x 2 along N, a 32 x 32 warp tile
#define MI 2              // m16 tiles a warp
#define NI 4              // n8 tiles a warp
#define A_LOADS ((BM * BK / 16) / THREADS)  // 16-byte vectors a thread copies of the A tile
#define B_LOADS ((BN * BK / 16) / THREADS)  // and of the B tile

__device__ __forceinline__ void mma_s8(int* d, const unsigned int* a, const unsigned int* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// a: [m, k] int8 activations, w: [n, k] int8 weights, a_scales: [m] float32, w_scales: [n] float32,
// out: [m, n] fp16 = (a . w^T) * a_scale[row] * w_scale[column]. m, n multiples of 64, k a multiple of 128.
extern "C" __global__ void __launch_bounds__(THREADS) w8a8_gemm(const unsigned char* __restrict__ a,
                                                               const unsigned char* __restrict__ w,
                                                               const float* __restrict__ a_scales,
                                                               const float* __restrict__ w_scales,
                                                               __half* __restrict__ out, int m, int n, int k) {
    __shared__ __align__(16) unsigned char a_tile[BM * LDS];
    __shared__ __align__(16) unsigned char b_tile[BN * LDS];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int group = lane >> 2, quad = lane & 3;
    const int warp_m = (warp & 1) * 32, warp_n = (warp >> 1) * 32;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
    const int k_tiles = k / BK;

    int total[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) total[i][j][r] = 0;

    uint4 a_next[A_LOADS], b_next[B_LOADS];
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
        const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
        a_next[i] = *reinterpret_cast<const uint4*>(a + (long long)(m0 + row) * k + chunk * 16);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
        const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
        b_next[i] = *reinterpret_cast<const uint4*>(w + (long long)(n0 + row) * k + chunk * 16);
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
        __syncthreads();  // everyone is done reading the previous tiles
#pragma unroll
        for (int i = 0; i < A_LOADS; ++i) {
            const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
            *reinterpret_cast<uint4*>(a_tile + row * LDS + chunk * 16) = a_next[i];
        }
#pragma unroll
        for (int i = 0; i < B_LOADS; ++i) {
            const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
            *reinterpret_cast<uint4*>(b_tile + row * LDS + chunk * 16) = b_next[i];
        }
        __syncthreads();
        if (kt + 1 < k_tiles) {  // the next tiles travel while this one is multiplied
#pragma unroll
            for (int i = 0; i < A_LOADS; ++i) {
                const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
                const long long column = (long long)(kt + 1) * BK + chunk * 16;
                a_next[i] = *reinterpret_cast<const uint4*>(a + (long long)(m0 + row) * k + column);
            }
#pragma unroll
            for (int i = 0; i < B_LOADS; ++i) {
                const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
                const long long column = (long long)(kt + 1) * BK + chunk * 16;
                b_next[i] = *reinterpret_cast<const uint4*>(w + (long long)(n0 + row) * k + column);
            }
        }
#pragma unroll
        for (int ks = 0; ks < BK / 32; ++ks) {
            const int column = ks * 32 + quad * 4;
            unsigned int a_frag[MI][4];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const unsigned char* base = a_tile + (warp_m + i * 16 + group) * LDS + column;
                a_frag[i][0] = *reinterpret_cast<const unsigned int*>(base);
                a_frag[i][1] = *reinterpret_cast<const unsigned int*>(base + 8 * LDS);
                a_frag[i][2] = *reinterpret_cast<const unsigned int*>(base + 16);
                a_frag[i][3] = *reinterpret_cast<const unsigned int*>(base + 8 * LDS + 16);
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const unsigned char* base = b_tile + (warp_n + j * 8 + group) * LDS + column;
                unsigned int b_frag[2];
                b_frag[0] = *reinterpret_cast<const unsigned int*>(base);
                b_frag[1] = *reinterpret_cast<const unsigned int*>(base + 16);
#pragma unroll
                for (int i = 0; i < MI; ++i) mma_s8(total[i][j], a_frag[i], b_frag);
            }
        }
    }

#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const int row = m0 + warp_m + i * 16 + group;
        const float scale_top = a_scales[row], scale_bottom = a_scales[row + 8];
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const int column = n0 + warp_n + j * 8 + quad * 2;
            const float w0 = w_scales[column], w1 = w_scales[column + 1];
            *reinterpret_cast<__half2*>(out + (long long)row * n + column) =
                __floats2half2_rn((float)total[i][j][0] * scale_top * w0, (float)total[i][j][1] * scale_top * w1);
            *reinterpret_cast<__half2*>(out + (long long)(row + 8) * n + column) = __floats2half2_rn(
                (float)total[i][j][2] * scale_bottom * w0, (float)total[i][j][3] * scale_bottom * w1);
        }
    }
}
"""

TILE = 64
K_TILE = 128
THREADS = 128
_kernel = mkb_cuda.compile(SOURCE, "w8a8_gemm")


def solve(activations, weights, activation_scales, weight_scales):
    activations = activations.contiguous()
    weights = weights.contiguous()
    activation_scales = activation_scales.contiguous()
    weight_scales = weight_scales.contiguous()
    m, k = activations.shape
    n = weights.shape[0]
    assert m % TILE == 0 and n % TILE == 0 and k % K_TILE == 0, "m, n multiples of 64 and k of 128"
    out = torch.empty((m, n), dtype=torch.float16, device=activations.device)
    _kernel((n // TILE, m // TILE, 1), (THREADS, 1, 1),
            [activations, weights, activation_scales, weight_scales, out, m, n, k])
    return out
