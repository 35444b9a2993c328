"""numba-cuda solution for 15_mla_latent_cache_write: one block per token RMS-normalises its 512-wide compressed KV
(squares reduced through shared memory) and rotates its 64-wide key with interleaved (GPT-J) pairs, writing the
576-wide entry in float32; torch rounds it to bf16, and a second kernel copies each entry, as 64-bit words, into its
slot of the copied cache. bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
KV_LORA_RANK = 512
EPS = 1e-6


@cuda.jit
def _norm_rope(latent, weight, positions, cos_sin, entry):
    token = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    partial = cuda.shared.array(THREADS, float32)
    squares = float32(0.0)
    for col in range(tid, KV_LORA_RANK, THREADS):
        squares += latent[token, col] * latent[token, col]
    partial[tid] = squares
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    inverse_rms = float32(1.0) / math.sqrt(partial[0] / float32(KV_LORA_RANK) + float32(EPS))
    for col in range(tid, KV_LORA_RANK, THREADS):
        entry[token, col] = latent[token, col] * inverse_rms * weight[col]
    half = cos_sin.shape[1] // 2
    if tid < half:  # pair tid: rotary dims 2 tid (even) and 2 tid + 1 (odd)
        position = positions[token]
        cos = cos_sin[position, tid]
        sin = cos_sin[position, half + tid]
        even = latent[token, KV_LORA_RANK + 2 * tid]
        odd = latent[token, KV_LORA_RANK + 2 * tid + 1]
        entry[token, KV_LORA_RANK + 2 * tid] = even * cos - odd * sin
        entry[token, KV_LORA_RANK + 2 * tid + 1] = odd * cos + even * sin


@cuda.jit
def _scatter_rows(rows, cache, slot_mapping):
    token = cuda.blockIdx.x
    slot = slot_mapping[token]
    for i in range(cuda.threadIdx.x, rows.shape[1], cuda.blockDim.x):
        cache[slot, i] = rows[token, i]


def solve(kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping):
    tokens, width = kv_latent.shape
    entry = torch.empty(tokens, width, device=kv_latent.device, dtype=torch.float32)
    _norm_rope[tokens, THREADS](kv_latent.float(), norm_weight.float(), positions.contiguous(),
                                cos_sin_cache.contiguous(), entry)
    new_cache = kv_cache.clone()
    slots = kv_cache.shape[0] * kv_cache.shape[1]
    _scatter_rows[tokens, 160](entry.to(kv_cache.dtype).view(tokens, -1).view(torch.int64),
                               new_cache.view(slots, -1).view(torch.int64), slot_mapping.contiguous())
    return new_cache
