"""numba-cuda solution for 13_fp8_kv_cache_write: one block per token divides its key and value heads by their
per-head scales and saturates them to +-448 in float32; torch rounds them to fp8 e4m3 (a cast: numba has no fp8
type); a second kernel copies each token's fp8 rows, as 64-bit words, into its slot of the copied caches."""

import torch
from numba import cuda

THREADS = 256
FP8_MAX = 448.0


@cuda.jit
def _scale_saturate(key, value, key_scale, value_scale, scaled_key, scaled_value):
    token = cuda.blockIdx.x
    dim = key.shape[2]
    for index in range(cuda.threadIdx.x, key.shape[1] * dim, cuda.blockDim.x):
        head = index // dim
        d = index % dim
        scaled_key[token, head, d] = min(max(key[token, head, d] / key_scale[head], -FP8_MAX), FP8_MAX)
        scaled_value[token, head, d] = min(max(value[token, head, d] / value_scale[head], -FP8_MAX), FP8_MAX)


@cuda.jit
def _scatter_rows(key_rows, value_rows, key_cache, value_cache, slot_mapping):
    token = cuda.blockIdx.x
    slot = slot_mapping[token]
    for i in range(cuda.threadIdx.x, key_rows.shape[1], cuda.blockDim.x):
        key_cache[slot, i] = key_rows[token, i]
        value_cache[slot, i] = value_rows[token, i]


def _words(rows, count):
    return rows.contiguous().view(count, -1).view(torch.int64)


def solve(key, value, key_cache, value_cache, slot_mapping, key_scale, value_scale):
    tokens = key.shape[0]
    scaled_key = torch.empty(key.shape, device=key.device, dtype=torch.float32)
    scaled_value = torch.empty(value.shape, device=key.device, dtype=torch.float32)
    _scale_saturate[tokens, THREADS](key.float(), value.float(), key_scale.contiguous(), value_scale.contiguous(),
                                     scaled_key, scaled_value)
    new_keys = key_cache.clone()
    new_values = value_cache.clone()
    slots = key_cache.shape[0] * key_cache.shape[1]
    _scatter_rows[tokens, 128](_words(scaled_key.to(key_cache.dtype), tokens),
                               _words(scaled_value.to(value_cache.dtype), tokens), _words(new_keys, slots),
                               _words(new_values, slots), slot_mapping.contiguous())
    return new_keys, new_values
