"""numba-cuda solution for 16_sliding_window_kv_write: the head-major ring caches are copied, then one block per
(sequence, token) writes each head's key and value row (as 64-bit words) into ring slot (start + token) % window."""

import torch
from numba import cuda

THREADS = 256


@cuda.jit
def _ring_write(key, value, key_cache, value_cache, start_positions):
    chunk = key.shape[1]
    b = cuda.blockIdx.x // chunk
    t = cuda.blockIdx.x % chunk
    window = key_cache.shape[2]
    slot = (start_positions[b] + t) % window
    words = key.shape[3]
    for index in range(cuda.threadIdx.x, key.shape[2] * words, cuda.blockDim.x):
        head = index // words
        w = index % words
        key_cache[b, head, slot, w] = key[b, t, head, w]
        value_cache[b, head, slot, w] = value[b, t, head, w]


def solve(key, value, key_cache, value_cache, start_positions):
    batch, chunk = key.shape[:2]
    new_keys = key_cache.clone()
    new_values = value_cache.clone()
    words = lambda t: t.contiguous().view(torch.int64)  # noqa: E731  (last dim of bf16 pairs -> 64-bit words)
    _ring_write[batch * chunk, THREADS](words(key), words(value), new_keys.view(torch.int64),
                                        new_values.view(torch.int64), start_positions.contiguous())
    return new_keys, new_values
