"""CUDA C++ fp8 block-scaled GEMM: e4m3 mma.sync tensor-core tiles per 128-wide K block, scaled into fp32 totals."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define BM 128
#define BN 64             // half a weight scale block along N
#define BK 128            // one scale block along K
#define LDS 144           // padded shared row (bytes): fragment loads of 8 rows x 4 bytes hit distinct banks
#define THREADS 256       // 8 warps: 4 along M x 2 along N, a 32 x 32 warp tile
#define MI 2              // m16 tiles a warp
#define NI 4              // n8 tiles a warp
#define A_LOADS ((BM * BK / 16) / THREADS)  // 16-byte vectors a thread copies of the A tile
#define B_LOADS ((BN * BK / 16) / THREADS)  // and of the B tile

__device__ __forceinline__ void mma_e4m3(float* d, const unsigned int* a, const unsigned int* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// a: [m, k] e4m3, a_scales: [m, k / 128] float32, b: [n, k] e4m3, b_scales: [n / 128, k / 128] float32,
// out: [m, n] bf16. m, n, k are multiples of 128; a block covers 128 rows and 64 columns of out.
extern "C" __global__ void __launch_bounds__(THREADS) fp8_block_gemm(const unsigned char* __restrict__ a,
                                                                    const float* __restrict__ a_scales,
                                                                    const unsigned char* __restrict__ b,
                                                                    const float* __restrict__ b_scales,
                                                                    __nv_bfloat16* __restrict__ out, int m, int n,
                                                                    int k) {
    __shared__ __align__(16) unsigned char a_tile[BM * LDS];
    __shared__ __align__(16) unsigned char b_tile[BN * LDS];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int group = lane >> 2, quad = lane & 3;
    const int warp_m = (warp & 3) * 32, warp_n = (warp >> 2) * 32;
    const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;
    const int k_blocks = k / BK;

    float total[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) total[i][j][r] = 0.0f;

    uint4 a_next[A_LOADS], b_next[B_LOADS];
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
        const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
        a_next[i] = *reinterpret_cast<const uint4*>(a + (long long)(m0 + row) * k + chunk * 16);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
        const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
        b_next[i] = *reinterpret_cast<const uint4*>(b + (long long)(n0 + row) * k + chunk * 16);
    }

    for (int kb = 0; kb < k_blocks; ++kb) {
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
        if (kb + 1 < k_blocks) {  // the next tiles travel while this one is multiplied
#pragma unroll
            for (int i = 0; i < A_LOADS; ++i) {
                const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
                const long long column = (long long)(kb + 1) * BK + chunk * 16;
                a_next[i] = *reinterpret_cast<const uint4*>(a + (long long)(m0 + row) * k + column);
            }
#pragma unroll
            for (int i = 0; i < B_LOADS; ++i) {
                const int index = tid + i * THREADS, row = index >> 3, chunk = index & 7;
                const long long column = (long long)(kb + 1) * BK + chunk * 16;
                b_next[i] = *reinterpret_cast<const uint4*>(b + (long long)(n0 + row) * k + column);
            }
        }
        const float b_scale = b_scales[(long long)(n0 / 128) * k_blocks + kb];
        float row_scale[MI][2];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const int row = m0 + warp_m + i * 16 + group;
            row_scale[i][0] = a_scales[(long long)row * k_blocks + kb] * b_scale;
            row_scale[i][1] = a_scales[(long long)(row + 8) * k_blocks + kb] * b_scale;
        }

        float part[MI][NI][4];
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) part[i][j][r] = 0.0f;
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
                for (int i = 0; i < MI; ++i) mma_e4m3(part[i][j], a_frag[i], b_frag);
            }
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                total[i][j][0] += part[i][j][0] * row_scale[i][0];
                total[i][j][1] += part[i][j][1] * row_scale[i][0];
                total[i][j][2] += part[i][j][2] * row_scale[i][1];
                total[i][j][3] += part[i][j][3] * row_scale[i][1];
            }
    }

#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const int row = m0 + warp_m + i * 16 + group;
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const int column = n0 + warp_n + j * 8 + quad * 2;
            *reinterpret_cast<__nv_bfloat162*>(out + (long long)row * n + column) =
                __floats2bfloat162_rn(total[i][j][0], total[i][j][1]);
            *reinterpret_cast<__nv_bfloat162*>(out + (long long)(row + 8) * n + column) =
                __floats2bfloat162_rn(total[i][j][2], total[i][j][3]);
        }
    }
}
"""

BLOCK = 128
TILE_N = 64
THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "fp8_block_gemm")


def solve(a, a_scales, b, b_scales):
    a = a.contiguous()
    b = b.contiguous()
    a_scales = a_scales.contiguous()
    b_scales = b_scales.contiguous()
    m, k = a.shape
    n = b.shape[0]
    assert m % BLOCK == 0 and n % BLOCK == 0 and k % BLOCK == 0, "shapes must be whole 128 blocks"
    out = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    _kernel((n // TILE_N, m // BLOCK, 1), (THREADS, 1, 1), [a, a_scales, b, b_scales, out, m, n, k])
    return out
