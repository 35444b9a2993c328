"""CUDA C++ solution for 02_paged_kv_write: 16-byte copies of both caches, then one block per new token's rows."""

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

extern "C" __global__ void scatter_rows(const int4* __restrict__ key, const int4* __restrict__ value,
                                        int4* __restrict__ key_cache, int4* __restrict__ value_cache,
                                        const long long* __restrict__ slot_mapping, int row_vectors) {
    long long token = blockIdx.x;
    long long slot = slot_mapping[token];
    for (int i = threadIdx.x; i < row_vectors; i += blockDim.x) {
        key_cache[slot * row_vectors + i] = key[token * row_vectors + i];
        value_cache[slot * row_vectors + i] = value[token * row_vectors + i];
    }
}
"""

THREADS = 256
_copy_pair = mkb_cuda.compile(SOURCE, "copy_pair")
_scatter_rows = mkb_cuda.compile(SOURCE, "scatter_rows")


def solve(key, value, key_cache, value_cache, slot_mapping):
    key, value = key.contiguous(), value.contiguous()
    key_cache, value_cache = key_cache.contiguous(), value_cache.contiguous()
    new_keys = torch.empty_like(key_cache)
    new_values = torch.empty_like(value_cache)
    vectors = key_cache.numel() * key_cache.element_size() // 16
    blocks = min((vectors + THREADS - 1) // THREADS, 132 * 32)
    _copy_pair((blocks,), (THREADS,), [key_cache, new_keys, value_cache, new_values, vectors])
    row_vectors = key.shape[1] * key.shape[2] * key.element_size() // 16
    _scatter_rows((key.shape[0],), (128,), [key, value, new_keys, new_values, slot_mapping.contiguous(), row_vectors])
    return new_keys, new_values
