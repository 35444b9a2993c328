"""CUDA C++ solution for 16_sliding_window_kv_write: 16-byte cache copies, then one block per new token."""

import torch

import mkb_cuda

SOURCE = r"""
extern "C" __global__ void copy_pair(const int4* __restrict__ source_a, int4* __restrict__ target_a,
                                     const int4* __restrict__ source_b, int4* __restrict__ target_b,
                                     long long vectors) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < vectors; i += stride) {
        int4 a = source_a[i];
        int4 b = source_b[i];
        target_a[i] = a;
        target_b[i] = b;
    }
}

// Block (b * chunk + t) moves token t of sequence b: [H, D] token-major rows into ring slot (start[b] + t) % window of
// the head-major cache [B, H, W, D]. Each thread moves 16 bytes (eight bf16) of the key and of the value.
extern "C" __global__ void ring_write(const int4* __restrict__ key, const int4* __restrict__ value,
                                     int4* __restrict__ key_cache, int4* __restrict__ value_cache,
                                     const long long* __restrict__ start_positions, int chunk, int kv_heads,
                                     int window, int head_vectors) {
    const long long program = blockIdx.x;
    const long long sequence = program / chunk;
    const long long slot = (start_positions[sequence] + program % chunk) % window;
    const int row_vectors = kv_heads * head_vectors;
    for (int i = threadIdx.x; i < row_vectors; i += blockDim.x) {
        const int head = i / head_vectors, part = i % head_vectors;
        const long long target = ((sequence * kv_heads + head) * window + slot) * head_vectors + part;
        key_cache[target] = key[program * row_vectors + i];
        value_cache[target] = value[program * row_vectors + i];
    }
}
"""

THREADS = 256
_copy_pair = mkb_cuda.compile(SOURCE, "copy_pair")
_ring_write = mkb_cuda.compile(SOURCE, "ring_write")


def solve(key, value, key_cache, value_cache, start_positions):
    key, value = key.contiguous(), value.contiguous()
    key_cache, value_cache = key_cache.contiguous(), value_cache.contiguous()
    new_keys = torch.empty_like(key_cache)
    new_values = torch.empty_like(value_cache)
    vectors = key_cache.numel() * key_cache.element_size() // 16
    blocks = min((vectors + THREADS - 1) // THREADS, 132 * 32)
    _copy_pair((blocks,), (THREADS,), [key_cache, new_keys, value_cache, new_values, vectors])
    batch, chunk, kv_heads, head_dim = key.shape
    head_vectors = head_dim * key.element_size() // 16
    _ring_write((batch * chunk,), (128,), [key, value, new_keys, new_values, start_positions.contiguous(), chunk,
                                           kv_heads, key_cache.shape[2], head_vectors])
    return new_keys, new_values
