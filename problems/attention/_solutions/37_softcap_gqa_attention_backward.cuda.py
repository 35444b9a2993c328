"""CUDA C++ solution: FlashAttention-2-style backward with the softcap folded in, on tensor cores (mma.sync
m16n8k16, bf16 in, fp32 accumulators), in three kernels.

1. delta = rowsum(do * o), one warp per (token, head).
2. dK/dV: one warp per (16 keys, half of the 256 dims, sequence and KV head) walks both query heads of its group and
   every causal 16-query tile: S^T = K Q^T and dP^T = V dO^T are recomputed in full, the capped logits give
   P^T = exp(c - lse) and dS^T = P^T (dP^T - delta) (1 - (c / 50)^2), and dV += P^T dO, dK += dS^T Q accumulate the
   warp's 128 dims.
3. dQ: one block of 2 warps per 32 queries of one head: S = Q K^T and dP = dO V^T per 16-key tile, then dQ += dS K.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define HEAD_DIM 256
#define STRIDE (HEAD_DIM + 8)   // padded shared row (bf16 elements)
#define TILE 16                 // rows of a K/V or Q/dO tile
#define QK_STEPS (HEAD_DIM / 16)
#define LOG2E 1.4426950408889634f

__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned int pack_bf16(float low, float high) {
    return (unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(low)) |
           ((unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(high)) << 16);
}

__device__ __forceinline__ void mma_bf16_16x8x16(float* c, unsigned int a0, unsigned int a1, unsigned int a2,
                                                 unsigned int a3, unsigned int b0, unsigned int b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned int shared_word(const unsigned short* p) {
    return *reinterpret_cast<const unsigned int*>(p);
}

// Copies 16 rows of HEAD_DIM bf16 (row r at base + r * row_stride) into shared memory with `threads` threads.
__device__ __forceinline__ void load_rows(unsigned short* dst, const unsigned short* base, long long row_stride,
                                          int rows, int threads) {
    for (int i = threadIdx.x; i < rows * (HEAD_DIM / 8); i += threads) {
        const int r = i / (HEAD_DIM / 8);
        const int c = (i % (HEAD_DIM / 8)) * 8;
        *reinterpret_cast<uint4*>(dst + r * STRIDE + c) = *reinterpret_cast<const uint4*>(base + r * row_stride + c);
    }
}

// s (16 x 16 as two 16 x 8 fragments) = A (16 rows of a_s) x B^T (16 rows of b_s), over all HEAD_DIM.
__device__ __forceinline__ void tile_products(float s[2][4], const unsigned short* a_s, const unsigned short* b_s,
                                              int g, int t) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
    }
#pragma unroll
    for (int step = 0; step < QK_STEPS; ++step) {
        const int k0 = step * 16 + 2 * t;
        const unsigned int a0 = shared_word(a_s + g * STRIDE + k0);
        const unsigned int a1 = shared_word(a_s + (g + 8) * STRIDE + k0);
        const unsigned int a2 = shared_word(a_s + g * STRIDE + k0 + 8);
        const unsigned int a3 = shared_word(a_s + (g + 8) * STRIDE + k0 + 8);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const unsigned short* row = b_s + (j * 8 + g) * STRIDE + k0;
            mma_bf16_16x8x16(s[j], a0, a1, a2, a3, shared_word(row), shared_word(row + 8));
        }
    }
}

// acc (16 x 8 fragments over `tiles` column tiles starting at column col0) += P (16 x 16 from two fragments) x
// B (16 rows of b_s, columns col0 ...).
template <int TILES>
__device__ __forceinline__ void accumulate(float acc[][4], const float p[2][4], const unsigned short* b_s, int col0,
                                           int g, int t) {
    const unsigned int a0 = pack_bf16(p[0][0], p[0][1]);
    const unsigned int a1 = pack_bf16(p[0][2], p[0][3]);
    const unsigned int a2 = pack_bf16(p[1][0], p[1][1]);
    const unsigned int a3 = pack_bf16(p[1][2], p[1][3]);
    const unsigned short* rows = b_s + (2 * t) * STRIDE + col0 + g;
#pragma unroll
    for (int j = 0; j < TILES; ++j) {
        const unsigned short* column = rows + j * 8;
        const unsigned int b0 = (unsigned int)column[0] | ((unsigned int)column[STRIDE] << 16);
        const unsigned int b1 = (unsigned int)column[8 * STRIDE] | ((unsigned int)column[9 * STRIDE] << 16);
        mma_bf16_16x8x16(acc[j], a0, a1, a2, a3, b0, b1);
    }
}

__device__ __forceinline__ float capped(float score, float scale, float softcap) {
    return softcap * tanhf(score * (scale / softcap));
}

// One warp per (token, head) row of the [B, T, H, D] layout: delta[b, h, t] = sum(do * o).
extern "C" __global__ void row_delta(const unsigned short* __restrict__ o, const unsigned short* __restrict__ dout,
                                     float* __restrict__ delta, int seq_len, int heads, long long rows) {
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows) {
        return;
    }
    const uint4 x = *reinterpret_cast<const uint4*>(o + row * HEAD_DIM + lane * 8);
    const uint4 y = *reinterpret_cast<const uint4*>(dout + row * HEAD_DIM + lane * 8);
    const unsigned int xs[4] = {x.x, x.y, x.z, x.w};
    const unsigned int ys[4] = {y.x, y.y, y.z, y.w};
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        sum += bf16_bits_to_float(xs[i] & 0xffffu) * bf16_bits_to_float(ys[i] & 0xffffu) +
               bf16_bits_to_float(xs[i] >> 16) * bf16_bits_to_float(ys[i] >> 16);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    }
    if (lane == 0) {
        const long long b = row / ((long long)seq_len * heads);
        const int t = (int)((row / heads) % seq_len);
        const int h = (int)(row % heads);
        delta[(b * heads + h) * seq_len + t] = sum;
    }
}

// grid: (seq_len / 16, 2 dim halves, batch * kv_heads); one warp.
extern "C" __global__ void __launch_bounds__(32)
dkdv(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k, const unsigned short* __restrict__ v,
     const unsigned short* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,
     unsigned short* __restrict__ dk, unsigned short* __restrict__ dv, int seq_len, int query_heads, int kv_heads,
     float scale, float softcap) {
    __shared__ __align__(16) unsigned short k_s[TILE * STRIDE];
    __shared__ __align__(16) unsigned short v_s[TILE * STRIDE];
    __shared__ __align__(16) unsigned short q_s[TILE * STRIDE];
    __shared__ __align__(16) unsigned short do_s[TILE * STRIDE];
    __shared__ float lse_s[TILE];
    __shared__ float delta_s[TILE];
    const int lane = threadIdx.x;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int n0 = blockIdx.x * TILE;
    const int col0 = blockIdx.y * (HEAD_DIM / 2);
    const int b = blockIdx.z / kv_heads;
    const int kv_h = blockIdx.z % kv_heads;
    const int group = query_heads / kv_heads;
    const long long q_stride = (long long)query_heads * HEAD_DIM;
    const long long kv_stride = (long long)kv_heads * HEAD_DIM;
    const long long kv_offset = ((long long)b * seq_len + n0) * kv_stride + kv_h * HEAD_DIM;
    load_rows(k_s, k + kv_offset, kv_stride, TILE, 32);
    load_rows(v_s, v + kv_offset, kv_stride, TILE, 32);
    float acc_k[HEAD_DIM / 16][4];  // 16 fragments of 16 x 8: this warp's 128 dims
    float acc_v[HEAD_DIM / 16][4];
#pragma unroll
    for (int j = 0; j < HEAD_DIM / 16; ++j) {
        acc_k[j][0] = acc_k[j][1] = acc_k[j][2] = acc_k[j][3] = 0.0f;
        acc_v[j][0] = acc_v[j][1] = acc_v[j][2] = acc_v[j][3] = 0.0f;
    }
    for (int member = 0; member < group; ++member) {
        const int h = kv_h * group + member;
        for (int m0 = n0; m0 < seq_len; m0 += TILE) {  // causal: queries at or after the keys
            __syncwarp();
            const long long q_offset = ((long long)b * seq_len + m0) * q_stride + h * HEAD_DIM;
            load_rows(q_s, q + q_offset, q_stride, TILE, 32);
            load_rows(do_s, dout + q_offset, q_stride, TILE, 32);
            if (lane < TILE) {
                lse_s[lane] = lse[((long long)b * query_heads + h) * seq_len + m0 + lane];
                delta_s[lane] = delta[((long long)b * query_heads + h) * seq_len + m0 + lane];
            }
            __syncwarp();
            float st[2][4];   // S^T: rows = keys, columns = queries
            float dpt[2][4];  // dP^T
            tile_products(st, k_s, q_s, g, t);
            tile_products(dpt, v_s, do_s, g, t);
            float pt[2][4];
            float dst[2][4];
#pragma unroll
            for (int j = 0; j < 2; ++j) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int key = n0 + g + 8 * (e >> 1);
                    const int query_local = j * 8 + 2 * t + (e & 1);
                    const float c = capped(st[j][e], scale, softcap);
                    const float ratio = c / softcap;
                    const float p = m0 + query_local >= key ? exp2f((c - lse_s[query_local]) * LOG2E) : 0.0f;
                    pt[j][e] = p;
                    dst[j][e] = p * (dpt[j][e] - delta_s[query_local]) * (1.0f - ratio * ratio);
                }
            }
            accumulate<HEAD_DIM / 16>(acc_v, pt, do_s, col0, g, t);
            accumulate<HEAD_DIM / 16>(acc_k, dst, q_s, col0, g, t);
        }
    }
#pragma unroll
    for (int j = 0; j < HEAD_DIM / 16; ++j) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const long long row = (((long long)b * seq_len + n0 + g + 8 * half) * kv_heads + kv_h) * HEAD_DIM;
            const int d = col0 + j * 8 + 2 * t;
            *reinterpret_cast<unsigned int*>(dk + row + d) =
                pack_bf16(acc_k[j][2 * half] * scale, acc_k[j][2 * half + 1] * scale);
            *reinterpret_cast<unsigned int*>(dv + row + d) = pack_bf16(acc_v[j][2 * half], acc_v[j][2 * half + 1]);
        }
    }
}

#define DQ_WARPS 2
#define DQ_ROWS (16 * DQ_WARPS)

// grid: (seq_len / 32, batch * query_heads); two warps, 16 query rows each.
extern "C" __global__ void __launch_bounds__(DQ_WARPS * 32)
dq_kernel(const unsigned short* __restrict__ q, const unsigned short* __restrict__ k,
          const unsigned short* __restrict__ v, const unsigned short* __restrict__ dout,
          const float* __restrict__ lse, const float* __restrict__ delta, unsigned short* __restrict__ dq,
          int seq_len, int query_heads, int kv_heads, float scale, float softcap) {
    __shared__ __align__(16) unsigned short q_s[DQ_ROWS * STRIDE];
    __shared__ __align__(16) unsigned short do_s[DQ_ROWS * STRIDE];
    __shared__ __align__(16) unsigned short kv_s[TILE * STRIDE];
    const int warp = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int m0 = blockIdx.x * DQ_ROWS;
    const int b = blockIdx.y / query_heads;
    const int h = blockIdx.y % query_heads;
    const int kv_h = h / (query_heads / kv_heads);
    const long long q_stride = (long long)query_heads * HEAD_DIM;
    const long long kv_stride = (long long)kv_heads * HEAD_DIM;
    const long long q_offset = ((long long)b * seq_len + m0) * q_stride + h * HEAD_DIM;
    load_rows(q_s, q + q_offset, q_stride, DQ_ROWS, DQ_WARPS * 32);
    load_rows(do_s, dout + q_offset, q_stride, DQ_ROWS, DQ_WARPS * 32);
    const unsigned short* q_warp = q_s + warp * 16 * STRIDE;
    const unsigned short* do_warp = do_s + warp * 16 * STRIDE;
    const int rows[2] = {m0 + warp * 16 + g, m0 + warp * 16 + g + 8};
    const long long stats = ((long long)b * query_heads + h) * seq_len;
    const float row_lse[2] = {lse[stats + rows[0]], lse[stats + rows[1]]};
    const float row_delta[2] = {delta[stats + rows[0]], delta[stats + rows[1]]};
    float acc[HEAD_DIM / 8][4];
#pragma unroll
    for (int j = 0; j < HEAD_DIM / 8; ++j) {
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    }
    const long long kv_base = (long long)b * seq_len * kv_stride + kv_h * HEAD_DIM;
    for (int n0 = 0; n0 < m0 + DQ_ROWS; n0 += TILE) {
        __syncthreads();
        load_rows(kv_s, k + kv_base + (long long)n0 * kv_stride, kv_stride, TILE, DQ_WARPS * 32);
        __syncthreads();
        float s[2][4];
        tile_products(s, q_warp, kv_s, g, t);
        __syncthreads();
        load_rows(kv_s, v + kv_base + (long long)n0 * kv_stride, kv_stride, TILE, DQ_WARPS * 32);
        __syncthreads();
        float dp[2][4];
        tile_products(dp, do_warp, kv_s, g, t);
        float ds[2][4];
#pragma unroll
        for (int j = 0; j < 2; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int half = e >> 1;
                const int key = n0 + j * 8 + 2 * t + (e & 1);
                const float c = capped(s[j][e], scale, softcap);
                const float ratio = c / softcap;
                const float p = key <= rows[half] ? exp2f((c - row_lse[half]) * LOG2E) : 0.0f;
                ds[j][e] = p * (dp[j][e] - row_delta[half]) * (1.0f - ratio * ratio);
            }
        }
        __syncthreads();
        load_rows(kv_s, k + kv_base + (long long)n0 * kv_stride, kv_stride, TILE, DQ_WARPS * 32);
        __syncthreads();
        accumulate<HEAD_DIM / 8>(acc, ds, kv_s, 0, g, t);
    }
#pragma unroll
    for (int j = 0; j < HEAD_DIM / 8; ++j) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const long long row = ((long long)b * seq_len + rows[half]) * q_stride + h * HEAD_DIM;
            *reinterpret_cast<unsigned int*>(dq + row + j * 8 + 2 * t) =
                pack_bf16(acc[j][2 * half] * scale, acc[j][2 * half + 1] * scale);
        }
    }
}
"""

SOFTCAP = 50.0
SCALE = 256**-0.5
_delta = mkb_cuda.compile(SOURCE, "row_delta")
_dkdv = mkb_cuda.compile(SOURCE, "dkdv")
_dq = mkb_cuda.compile(SOURCE, "dq_kernel")


def solve(q, k, v, out, dout, lse):
    q, k, v, out, dout, lse = (t.contiguous() for t in (q, k, v, out, dout, lse))
    batch, seq_len, query_heads, dim = q.shape
    kv_heads = k.shape[2]
    assert dim == 256 and seq_len % 32 == 0, "written for head dim 256 and whole 32-token tiles"
    delta = torch.empty_like(lse)
    rows = batch * seq_len * query_heads
    _delta(((rows + 7) // 8,), (256,), [out, dout, delta, seq_len, query_heads, rows])
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    _dkdv((seq_len // 16, 2, batch * kv_heads), (32,),
          [q, k, v, dout, lse, delta, dk, dv, seq_len, query_heads, kv_heads, SCALE, SOFTCAP])
    _dq((seq_len // 32, batch * query_heads), (64,),
        [q, k, v, dout, lse, delta, dq, seq_len, query_heads, kv_heads, SCALE, SOFTCAP])
    return dq, dk, dv
