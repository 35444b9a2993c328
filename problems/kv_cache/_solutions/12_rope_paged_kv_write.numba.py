"""numba-cuda solution for 12_rope_paged_kv_write: one block per token rotates its query and key heads (neox halves,
cos|sin read at the token's position) in float32; the caches are copied as 64-bit words and one block per token
writes its rotated key and value rows into their slot. bfloat16 tensors are cast with torch (numba reads no
bfloat16) and moved as int16 bit patterns."""

import torch
from numba import cuda

THREADS = 256


@cuda.jit
def _rope(positions, query, key, cos_sin, rotated_query, rotated_key):
    token = cuda.blockIdx.x
    position = positions[token]
    half = query.shape[2] // 2
    heads_q = query.shape[1]
    for index in range(cuda.threadIdx.x, (heads_q + key.shape[1]) * half, cuda.blockDim.x):
        head = index // half
        d = index % half
        cos = cos_sin[position, d]
        sin = cos_sin[position, half + d]
        if head < heads_q:
            x1, x2 = query[token, head, d], query[token, head, half + d]
            rotated_query[token, head, d] = x1 * cos - x2 * sin
            rotated_query[token, head, half + d] = x2 * cos + x1 * sin
        else:
            h = head - heads_q
            x1, x2 = key[token, h, d], key[token, h, half + d]
            rotated_key[token, h, d] = x1 * cos - x2 * sin
            rotated_key[token, h, half + d] = x2 * cos + x1 * sin


@cuda.jit
def _copy_kernel(source, target):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, source.shape[0], stride):
        target[i] = source[i]


@cuda.jit
def _scatter_kernel(key, value, key_cache, value_cache, slot_mapping):
    token = cuda.blockIdx.x
    slot = slot_mapping[token]
    for i in range(cuda.threadIdx.x, key.shape[1], cuda.blockDim.x):
        key_cache[slot, i] = key[token, i]
        value_cache[slot, i] = value[token, i]


def _copy(source):
    target = torch.empty_like(source)
    _copy_kernel[132 * 16, THREADS](source.view(-1).view(torch.int64), target.view(-1).view(torch.int64))
    return target


def _words(rows, count):
    return rows.contiguous().view(count, -1).view(torch.int64)


def solve(positions, query, key, value, cos_sin_cache, key_cache, value_cache, slot_mapping):
    tokens = query.shape[0]
    rotated_query = torch.empty(query.shape, device=query.device, dtype=torch.float32)
    rotated_key = torch.empty(key.shape, device=key.device, dtype=torch.float32)
    _rope[tokens, THREADS](positions.contiguous(), query.float(), key.float(), cos_sin_cache.contiguous(),
                           rotated_query, rotated_key)
    new_keys = _copy(key_cache.contiguous())
    new_values = _copy(value_cache.contiguous())
    slots = key_cache.shape[0] * key_cache.shape[1]
    _scatter_kernel[tokens, THREADS](_words(rotated_key.to(key.dtype), tokens), _words(value, tokens),
                                     _words(new_keys, slots), _words(new_values, slots), slot_mapping.contiguous())
    return rotated_query.to(query.dtype), new_keys, new_values
