"""CUDA C++ solution for 21_decode_swiglu_mlp (v3): v1's engine with two smaller blocks per SM for gate/up.

Gate/up: 264 blocks of 9 warps (two per SM, so a block barrier stalls only half the SM's warps); a warp task is 8
intermediate columns (a gate and an up n8 tile), weights stream into registers 4 k-steps ahead
(ld.global.nc.L1::no_allocate), x moves through a 3-deep ring of 128-wide k chunks in padded shared memory
(cp.async); mma.sync m16n8k16, fp32 accumulation, silu(bf16 gate) * bf16 up rounded to bf16. Down: 32 column groups x
4 K splits = 128 blocks of 7 warps with two n8 tiles each, 4-deep x ring, fp32 partials, fixed-order reduction.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define HID 3584
#define INTER 18944
#define KC 128                 // k elements per staged x chunk (4 mma k-steps of 32)
#define XROW 320               // bytes per staged x row: 256 data + 64 pad (conflict-free 16-byte reads)
#define XBUF (32 * XROW)       // bytes per staged chunk (32 token rows)
#define UP_NBUF 3              // chunks in the gate/up shared-memory ring
#define DOWN_NBUF 4            // chunks in the down shared-memory ring
#define UP_WARPS 9
#define UP_MIN_BLOCKS 2
#define DOWN_WARPS 7
#define DOWN_SPLITS 4
#define DOWN_KSPLIT (INTER / DOWN_SPLITS)  // 4736 = 37 chunks

typedef __nv_bfloat16 bf16;

__device__ __forceinline__ void mma_bf16(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                         unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint4 ldg_stream(const bf16* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Stage x[0..32, k0 .. k0 + KC) (row stride ld elements) into ring slot `slot`: 512 pieces of 16 bytes.
__device__ __forceinline__ void stage_x(char* smem, const bf16* __restrict__ x, int ld, int k0, int slot) {
    char* buf = smem + slot * XBUF;
    for (int i = threadIdx.x; i < 32 * (KC / 8); i += blockDim.x) {
        const int row = i >> 4, piece = i & 15;
        cp_async16(buf + row * XROW + piece * 16, x + (long long)row * ld + k0 + piece * 8);
    }
}

// acc[j][m] += X[32 tokens, k_begin .. k_begin + nchunks * KC) * W_j^T for TILES n8 tiles.
// w[j] points at weight row (tile j base + g), element k_begin + 8 t. Within each 32-wide k-step lane (g, t) holds
// k = 8t .. 8t + 7 of its A rows and B row, the same permutation of k for A and B, so the dot products are exact.
// Weights for chunk c + NB are loaded into the registers that chunk c just consumed (NB * 4 k-steps in flight).
// Every thread of the block must call this (it stages x cooperatively and synchronises once per chunk).
template <int TILES, int NB, int NBUF>
__device__ __forceinline__ void stream_gemm(float (&acc)[TILES][2][4], char* smem, const bf16* __restrict__ x, int ld,
                                            int k_begin, int nchunks, const bf16* const (&w)[TILES]) {
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int c = 0; c < NBUF - 1; ++c) {
        if (c < nchunks) stage_x(smem, x, ld, k_begin + c * KC, c);
        cp_async_commit();
    }
    uint4 wb[NB][4][TILES];
#pragma unroll
    for (int h = 0; h < NB; ++h) {
        if (h < nchunks) {
#pragma unroll
            for (int d = 0; d < 4; ++d) {
#pragma unroll
                for (int j = 0; j < TILES; ++j) wb[h][d][j] = ldg_stream(w[j] + (h * 4 + d) * 32);
            }
        }
    }
    const char* xlane = smem + g * XROW + t * 16;
    for (int c0 = 0; c0 < nchunks; c0 += NB) {
#pragma unroll
        for (int h = 0; h < NB; ++h) {
            const int c = c0 + h;
            if (c < nchunks) {
                cp_async_wait<NBUF - 2>();  // this thread's copies of chunk c have landed
                __syncthreads();            // everyone's have, and everyone finished chunk c - 1
                {
                    const int cn = c + NBUF - 1;  // goes into the slot chunk c - 1 used
                    if (cn < nchunks) stage_x(smem, x, ld, k_begin + cn * KC, cn % NBUF);
                    cp_async_commit();
                }
                const char* xb = xlane + (c % NBUF) * XBUF;
                const bool more = c + NB < nchunks;
#pragma unroll
                for (int d = 0; d < 4; ++d) {
                    uint4 xa[4];  // token rows g, g + 8, g + 16, g + 24; k = 32 d + 8 t .. + 7 of the chunk
#pragma unroll
                    for (int r = 0; r < 4; ++r) xa[r] = *reinterpret_cast<const uint4*>(xb + r * 8 * XROW + d * 64);
#pragma unroll
                    for (int j = 0; j < TILES; ++j) {
                        const uint4 b = wb[h][d][j];
#pragma unroll
                        for (int m = 0; m < 2; ++m) {
                            const uint4 lo = xa[2 * m], hi = xa[2 * m + 1];
                            mma_bf16(acc[j][m], lo.x, hi.x, lo.y, hi.y, b.x, b.y);  // k = 8t .. 8t + 3
                            mma_bf16(acc[j][m], lo.z, hi.z, lo.w, hi.w, b.z, b.w);  // k = 8t + 4 .. 8t + 7
                        }
                    }
                    if (more) {
#pragma unroll
                        for (int j = 0; j < TILES; ++j) wb[h][d][j] = ldg_stream(w[j] + ((c + NB) * 4 + d) * 32);
                    }
                }
            }
        }
    }
    cp_async_wait<0>();
}

__device__ __forceinline__ float round_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

__device__ __forceinline__ float silu_mul(float gate, float up) {
    const float gq = round_bf16(gate), uq = round_bf16(up);  // the reference's bf16 gate_up
    return gq / (1.0f + expf(-gq)) * uq;
}

// Kernel 1: warp task = 8 intermediate columns n .. n + 7 (gate rows n + g, up rows INTER + n + g).
extern "C" __global__ void __launch_bounds__(UP_WARPS * 32, UP_MIN_BLOCKS)
gate_up_act(const bf16* __restrict__ x, const bf16* __restrict__ weight, bf16* __restrict__ hidden) {
    __shared__ __align__(16) char smem[UP_NBUF * XBUF];
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int groups = INTER / 8;
    int group = blockIdx.x * UP_WARPS + (threadIdx.x >> 5);
    const bool valid = group < groups;
    if (!valid) group = groups - 1;  // idle warps still stage x and meet the barriers
    const int n = group * 8;
    const bf16* const w[2] = {weight + (long long)(n + g) * HID + 8 * t,
                              weight + (long long)(INTER + n + g) * HID + 8 * t};
    float acc[2][2][4] = {};
    stream_gemm<2, 1, UP_NBUF>(acc, smem, x, HID, 0, HID / KC, w);
    if (!valid) return;
#pragma unroll
    for (int m = 0; m < 2; ++m) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = m * 16 + g + 8 * half;
            const float h0 = silu_mul(acc[0][m][2 * half], acc[1][m][2 * half]);
            const float h1 = silu_mul(acc[0][m][2 * half + 1], acc[1][m][2 * half + 1]);
            *reinterpret_cast<__nv_bfloat162*>(hidden + (long long)row * INTER + n + 2 * t) =
                __floats2bfloat162_rn(h0, h1);
        }
    }
}

// Kernel 2: block (column group, K split); warp w owns output columns n .. n + 15, n = group * 112 + 16 w.
extern "C" __global__ void __launch_bounds__(DOWN_WARPS * 32, 1)
down_partial(const bf16* __restrict__ hidden, const bf16* __restrict__ weight, float* __restrict__ partial) {
    __shared__ __align__(16) char smem[DOWN_NBUF * XBUF];
    const int lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int n = blockIdx.x * (DOWN_WARPS * 16) + (threadIdx.x >> 5) * 16;
    const int k_begin = blockIdx.y * DOWN_KSPLIT;
    const bf16* const w[2] = {weight + (long long)(n + g) * INTER + k_begin + 8 * t,
                              weight + (long long)(n + 8 + g) * INTER + k_begin + 8 * t};
    float acc[2][2][4] = {};
    stream_gemm<2, 2, DOWN_NBUF>(acc, smem, hidden, INTER, k_begin, DOWN_KSPLIT / KC, w);
    float* p = partial + (long long)blockIdx.y * 32 * HID;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
#pragma unroll
        for (int m = 0; m < 2; ++m) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = m * 16 + g + 8 * half;
                *reinterpret_cast<float2*>(p + row * HID + n + 8 * j + 2 * t) =
                    make_float2(acc[j][m][2 * half], acc[j][m][2 * half + 1]);
            }
        }
    }
}

// Kernel 3: out = bf16(((p0 + p1) + p2) + p3), four elements per thread.
extern "C" __global__ void down_reduce(const float* __restrict__ partial, bf16* __restrict__ out) {
    const int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i >= 32 * HID) return;
    float4 s = *reinterpret_cast<const float4*>(partial + i);
#pragma unroll
    for (int k = 1; k < DOWN_SPLITS; ++k) {
        const float4 v = *reinterpret_cast<const float4*>(partial + (long long)k * 32 * HID + i);
        s.x += v.x;
        s.y += v.y;
        s.z += v.z;
        s.w += v.w;
    }
    *reinterpret_cast<__nv_bfloat162*>(out + i) = __floats2bfloat162_rn(s.x, s.y);
    *reinterpret_cast<__nv_bfloat162*>(out + i + 2) = __floats2bfloat162_rn(s.z, s.w);
}
"""

NUM_TOKENS, HIDDEN, INTERMEDIATE = 32, 3584, 18944
UP_WARPS, DOWN_WARPS, DOWN_SPLITS = 9, 7, 4
_gate_up_act = mkb_cuda.compile(SOURCE, "gate_up_act")
_down_partial = mkb_cuda.compile(SOURCE, "down_partial")
_down_reduce = mkb_cuda.compile(SOURCE, "down_reduce")


def solve(x, gate_up_weight, down_weight):
    x, gate_up_weight, down_weight = x.contiguous(), gate_up_weight.contiguous(), down_weight.contiguous()
    assert tuple(x.shape) == (NUM_TOKENS, HIDDEN) and tuple(down_weight.shape) == (HIDDEN, INTERMEDIATE)
    assert tuple(gate_up_weight.shape) == (2 * INTERMEDIATE, HIDDEN)
    hidden = torch.empty(NUM_TOKENS, INTERMEDIATE, device=x.device, dtype=x.dtype)
    groups = INTERMEDIATE // 8
    _gate_up_act(((groups + UP_WARPS - 1) // UP_WARPS,), (32 * UP_WARPS,), [x, gate_up_weight, hidden])
    partial = torch.empty(DOWN_SPLITS, NUM_TOKENS, HIDDEN, device=x.device, dtype=torch.float32)
    _down_partial((HIDDEN // (16 * DOWN_WARPS), DOWN_SPLITS), (32 * DOWN_WARPS,), [hidden, down_weight, partial])
    out = torch.empty(NUM_TOKENS, HIDDEN, device=x.device, dtype=x.dtype)
    _down_reduce(((NUM_TOKENS * HIDDEN // 4 + 255) // 256,), (256,), [partial, out])
    return out
