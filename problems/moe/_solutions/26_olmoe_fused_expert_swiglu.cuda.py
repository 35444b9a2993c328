"""CUDA C++ solution for the fused expert gate/up GEMM + SwiGLU: 128-row tiles found from the expert offsets, 64 gate + 64 up weight rows interleaved per block so each thread holds matching gate/up accumulators; ldmatrix + bf16 mma.sync (inline PTX), SiLU(gate) * up epilogue."""

import torch

import mkb_cuda

SOURCE = r"""
#define BM 128
#define BN 128
#define BK 32
#define LDS 40          // shared row stride in bf16 (80 bytes): 16-byte aligned rows, conflict-free fragment reads
#define THREADS 256     // 8 warps: 2 (rows) x 4 (columns), each warp owns a 64 x 32 sub-tile

__device__ __forceinline__ void cp_async16(void* shared, const void* global, bool valid) {
    unsigned address = (unsigned)__cvta_generic_to_shared(shared);
    int bytes = valid ? 16 : 0;  // 0 source bytes: the 16 shared bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_one() { asm volatile("cp.async.wait_group 1;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }

// four 8x8 b16 matrices from shared memory; lanes 8m .. 8m+7 give the row addresses of matrix m (register m)
__device__ __forceinline__ void ldmatrix_x4(unsigned* r, const unsigned short* shared_row) {
    unsigned address = (unsigned)__cvta_generic_to_shared(shared_row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void mma_bf16_16816(float* c, const unsigned* a, const unsigned* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ float silu(float value) { return value / (1.0f + expf(-value)); }

__device__ __forceinline__ unsigned short float_to_bf16(float value) {
    unsigned int bits = __float_as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((bits >> 16) | 0x0040u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (unsigned short)(bits >> 16);
}

// gate_up[r, :] = x[r, :] @ w13[e].T for the rows r of expert e; out[r, n] = silu(gate_up[r, n]) * gate_up[r, I + n].
// The block's 128 weight rows interleave 8 gate rows and the 8 matching up rows: tile row q holds weight row
// ((q / 8) % 2) * I + n0 + (q / 16) * 8 + q % 8, so n8 fragment j (even) is gate and j + 1 the same columns of up.
// intermediate % 64 == 0, k_size % BK == 0. blockIdx.x walks the experts' row tiles, blockIdx.y 64 output columns.
extern "C" __global__ void __launch_bounds__(THREADS) grouped_gate_up_swiglu(
    const unsigned short* __restrict__ x, const unsigned short* __restrict__ w, const int* __restrict__ offsets,
    unsigned short* __restrict__ out, int intermediate, int k_size, int num_experts) {
    __shared__ __align__(16) unsigned short a_tile[2][BM * LDS];
    __shared__ __align__(16) unsigned short b_tile[2][BN * LDS];

    int tiles_before = 0, expert = -1, row_start = 0, row_end = 0;
    for (int e = 0; e < num_experts; ++e) {
        const int start = offsets[e], end = offsets[e + 1];
        const int tiles = (end - start + BM - 1) / BM;
        if (expert < 0 && (int)blockIdx.x < tiles_before + tiles) {
            expert = e;
            row_start = start + ((int)blockIdx.x - tiles_before) * BM;
            row_end = end;
        }
        tiles_before += tiles;
    }
    if (expert < 0) return;  // uniform over the block
    const int n0 = blockIdx.y * (BN / 2);
    const unsigned short* w_expert = w + (long long)expert * 2 * intermediate * k_size;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp >> 2, warp_n = warp & 3;
    const int g = lane >> 2, t = lane & 3;

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

    const int k_tiles = k_size / BK;
    // each thread copies two 16-byte pieces of each tile per stage: piece c -> row c / 4, columns (c % 4) * 8
#define LOAD_STAGE(stage, k0)                                                                              \
    do {                                                                                                   \
        _Pragma("unroll") for (int p = 0; p < 2; ++p) {                                                    \
            const int piece = tid + p * THREADS;                                                           \
            const int r = piece >> 2, col = (piece & 3) * 8;                                               \
            const int row = row_start + r;                                                                 \
            const bool valid = row < row_end;                                                              \
            cp_async16(&a_tile[stage][r * LDS + col], x + (long long)(valid ? row : row_start) * k_size + (k0) + col, \
                       valid);                                                                             \
            const int w_row = ((r >> 3) & 1) * intermediate + n0 + (r >> 4) * 8 + (r & 7);                   \
            cp_async16(&b_tile[stage][r * LDS + col], w_expert + (long long)w_row * k_size + (k0) + col, true); \
        }                                                                                                  \
    } while (0)

    LOAD_STAGE(0, 0);
    cp_async_commit();
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int stage = kt & 1;
        if (kt + 1 < k_tiles) {
            LOAD_STAGE(stage ^ 1, (kt + 1) * BK);
            cp_async_commit();
            cp_async_wait_one();
        } else {
            cp_async_wait_all();
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a_frag[4][4], b_frag[4][2];
            // ldmatrix.x4: lane l addresses row l % 16, column (l / 16) * 8 of the 16x16 A sub-tile
#pragma unroll
            for (int i = 0; i < 4; ++i)
                ldmatrix_x4(a_frag[i], &a_tile[stage][(warp_m * 64 + i * 16 + (lane & 15)) * LDS + kk + (lane >> 4) * 8]);
            // one ldmatrix.x4 covers two n8 fragments: lane l addresses n row (l & 7) + (l / 16) * 8, k ((l / 8) & 1) * 8
#pragma unroll
            for (int j = 0; j < 4; j += 2) {
                unsigned pair[4];
                ldmatrix_x4(pair, &b_tile[stage][(warp_n * 32 + j * 8 + (lane & 7) + (lane >> 4) * 8) * LDS + kk +
                                                 ((lane >> 3) & 1) * 8]);
                b_frag[j][0] = pair[0];
                b_frag[j][1] = pair[1];
                b_frag[j + 1][0] = pair[2];
                b_frag[j + 1][1] = pair[3];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) mma_bf16_16816(acc[i][j], a_frag[i], b_frag[j]);
        }
        __syncthreads();
    }
#undef LOAD_STAGE

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int row0 = row_start + warp_m * 64 + i * 16 + g;
#pragma unroll
        for (int jj = 0; jj < 2; ++jj) {
            const float* gate = acc[i][2 * jj];
            const float* up = acc[i][2 * jj + 1];
            const int col = n0 + (warp_n * 2 + jj) * 8 + t * 2;
            if (row0 < row_end) {
                const unsigned packed = (unsigned)float_to_bf16(silu(gate[0]) * up[0]) |
                                        ((unsigned)float_to_bf16(silu(gate[1]) * up[1]) << 16);
                *reinterpret_cast<unsigned*>(out + (long long)row0 * intermediate + col) = packed;
            }
            if (row0 + 8 < row_end) {
                const unsigned packed = (unsigned)float_to_bf16(silu(gate[2]) * up[2]) |
                                        ((unsigned)float_to_bf16(silu(gate[3]) * up[3]) << 16);
                *reinterpret_cast<unsigned*>(out + (long long)(row0 + 8) * intermediate + col) = packed;
            }
        }
    }
}
"""

BLOCK_M = 128
OUT_COLUMNS = 64  # output columns per block (64 gate + 64 up weight rows)
THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "grouped_gate_up_swiglu")


def solve(hidden, w13, expert_offsets):
    hidden = hidden.contiguous()
    w13 = w13.contiguous()
    expert_offsets = expert_offsets.contiguous()
    num_rows, k_size = hidden.shape
    num_experts = w13.shape[0]
    intermediate = w13.shape[1] // 2
    out = torch.empty(num_rows, intermediate, dtype=hidden.dtype, device=hidden.device)
    row_tiles = (num_rows + BLOCK_M - 1) // BLOCK_M + num_experts  # each expert wastes at most one partial tile
    _kernel((row_tiles, intermediate // OUT_COLUMNS, 1), (THREADS, 1, 1),
            [hidden, w13, expert_offsets, out, intermediate, k_size, num_experts])
    return out
