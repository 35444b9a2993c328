"""CUDA C++ solution: one block per (kept row, sequence), one warp per KV head; a lane re-rotates 2 of the head's 64
rotary pairs (sincosf in fp32 on the position delta) and moves 4 of its value dims, all with 4- and 8-byte accesses.
"""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define KEEP 1024
#define SINKS 4
#define PAGE_SIZE 16
#define KV_HEADS 8
#define HEAD_DIM 128
#define HALF (HEAD_DIM / 2)

__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned int pack_bf16(float lo, float hi) {
    return (unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           ((unsigned int)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
}

extern "C" __global__ void __launch_bounds__(KV_HEADS * 32)
compact(const unsigned short* __restrict__ k_cache, const unsigned short* __restrict__ v_cache,
        const int* __restrict__ block_table, const int* __restrict__ seq_lens, const float* __restrict__ inv_freq,
        unsigned short* __restrict__ k_out, unsigned short* __restrict__ v_out, int pages_per_seq) {
    const int j = blockIdx.x;
    const int b = blockIdx.y;
    const int h = threadIdx.x >> 5;
    const int lane = threadIdx.x & 31;
    const int seq_len = seq_lens[b];
    const int pos = j < SINKS ? j : seq_len - (KEEP - SINKS) + (j - SINKS);
    const long long page = block_table[(long long)b * pages_per_seq + pos / PAGE_SIZE];
    const long long src = ((page * PAGE_SIZE + pos % PAGE_SIZE) * KV_HEADS + h) * HEAD_DIM;
    const long long dst = (((long long)b * KEEP + j) * KV_HEADS + h) * HEAD_DIM;
    const float delta = (float)(j - pos);
    const int i = lane * 2;  // rotary pairs i and i + 1
    const unsigned int w1 = *reinterpret_cast<const unsigned int*>(k_cache + src + i);
    const unsigned int w2 = *reinterpret_cast<const unsigned int*>(k_cache + src + HALF + i);
    float s0, c0, s1, c1;
    sincosf(delta * inv_freq[i], &s0, &c0);
    sincosf(delta * inv_freq[i + 1], &s1, &c1);
    const float a0 = bf16_bits_to_float(w1 & 0xffffu), a1 = bf16_bits_to_float(w1 >> 16);
    const float b0 = bf16_bits_to_float(w2 & 0xffffu), b1 = bf16_bits_to_float(w2 >> 16);
    *reinterpret_cast<unsigned int*>(k_out + dst + i) = pack_bf16(a0 * c0 - b0 * s0, a1 * c1 - b1 * s1);
    *reinterpret_cast<unsigned int*>(k_out + dst + HALF + i) = pack_bf16(b0 * c0 + a0 * s0, b1 * c1 + a1 * s1);
    *reinterpret_cast<uint2*>(v_out + dst + lane * 4) = *reinterpret_cast<const uint2*>(v_cache + src + lane * 4);
}
"""

KEEP = 1024
_kernel = mkb_cuda.compile(SOURCE, "compact")


def solve(k_cache, v_cache, block_table, seq_lens, inv_freq):
    k_cache, v_cache, block_table = k_cache.contiguous(), v_cache.contiguous(), block_table.contiguous()
    num_pages, page_size, kv_heads, head_dim = k_cache.shape
    assert (page_size, kv_heads, head_dim) == (16, 8, 128), "written for Llama-3-8B's cache layout"
    batch = block_table.shape[0]
    keys = torch.empty(batch, KEEP, kv_heads, head_dim, device=k_cache.device, dtype=k_cache.dtype)
    values = torch.empty_like(keys)
    _kernel((KEEP, batch), (kv_heads * 32,), [k_cache, v_cache, block_table, seq_lens.contiguous(),
                                              inv_freq.contiguous(), keys, values, block_table.shape[1]])
    return keys, values
