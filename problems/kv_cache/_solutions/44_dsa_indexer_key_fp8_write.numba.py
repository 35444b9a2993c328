"""numba-cuda solution for 44_dsa_indexer_key_fp8_write: one block of 128 threads per token reduces the key's amax
through shared memory, takes the UE8M0 scale 2^ceil(log2(amax / 448)) and writes the scaled, saturated key in float32
and the scale into its slot of the copied scale cache; torch rounds the keys to fp8 e4m3 (numba has no fp8 type) and a
second kernel copies each token's fp8 row, as 64-bit words, into its slot of the copied key cache."""

import math

import torch
from numba import cuda, float32

HEAD_DIM = 128
FP8_MAX = 448.0
AMAX_FLOOR = 1e-4


@cuda.jit
def _quantize(keys, scaled, scale_slots, slot_mapping):
    token = cuda.blockIdx.x
    d = cuda.threadIdx.x
    x = keys[token, d]
    partial = cuda.shared.array(HEAD_DIM, float32)
    partial[d] = abs(x)
    cuda.syncthreads()
    stride = HEAD_DIM // 2
    while stride > 0:
        if d < stride:
            partial[d] = max(partial[d], partial[d + stride])
        cuda.syncthreads()
        stride //= 2
    amax = max(partial[0], float32(AMAX_FLOOR))
    scale = float32(2.0) ** math.ceil(math.log2(amax / float32(FP8_MAX)))
    scaled[token, d] = min(max(x / scale, -FP8_MAX), FP8_MAX)
    if d == 0:
        scale_slots[slot_mapping[token]] = scale


@cuda.jit
def _scatter_rows(rows, cache, slot_mapping):
    token = cuda.blockIdx.x
    slot = slot_mapping[token]
    for i in range(cuda.threadIdx.x, rows.shape[1], cuda.blockDim.x):
        cache[slot, i] = rows[token, i]


def solve(keys, key_cache, scale_cache, slot_mapping):
    tokens = keys.shape[0]
    slots = key_cache.shape[0] * key_cache.shape[1]
    slot_mapping = slot_mapping.contiguous()
    scaled = torch.empty(tokens, HEAD_DIM, device=keys.device, dtype=torch.float32)
    new_scales = scale_cache.clone()
    _quantize[tokens, HEAD_DIM](keys.float(), scaled, new_scales.view(slots), slot_mapping)
    new_keys = key_cache.clone()
    _scatter_rows[tokens, 16](scaled.to(key_cache.dtype).view(torch.int64), new_keys.view(slots, -1).view(torch.int64),
                              slot_mapping)
    return new_keys, new_scales
