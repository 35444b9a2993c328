"""numba-cuda solution for 46_streaming_sink_cache_compaction: one block per (sequence, kept row) finds the row's
original position (a sink, or one of the last 1020), its page and slot, and copies the key and value rows as 64-bit
words into the compacted caches; torch casts the gathered keys to float32 (numba reads no bfloat16), and a second
kernel re-rotates each key by (row - position) times the per-pair frequencies (half-split rotary)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
KEEP = 1024
SINKS = 4


@cuda.jit(device=True)
def _position(seq_lens, b, j):
    return j if j < SINKS else seq_lens[b] - (KEEP - SINKS) + (j - SINKS)


@cuda.jit
def _gather(k_words, v_words, block_table, seq_lens, keys, values):
    b = cuda.blockIdx.x // KEEP
    j = cuda.blockIdx.x % KEEP
    page_size = k_words.shape[1]
    position = _position(seq_lens, b, j)
    page = block_table[b, position // page_size]
    slot = position % page_size
    for i in range(cuda.threadIdx.x, k_words.shape[2], cuda.blockDim.x):
        keys[b, j, i] = k_words[page, slot, i]
        values[b, j, i] = v_words[page, slot, i]


@cuda.jit
def _rerotate(keys, seq_lens, inv_freq, rotated):
    b = cuda.blockIdx.x // KEEP
    j = cuda.blockIdx.x % KEEP
    heads, dim = keys.shape[2], keys.shape[3]
    half = dim // 2
    shift = float32(j - _position(seq_lens, b, j))
    for index in range(cuda.threadIdx.x, heads * half, cuda.blockDim.x):
        head = index // half
        i = index % half
        angle = shift * inv_freq[i]
        cos = math.cos(angle)
        sin = math.sin(angle)
        x1 = keys[b, j, head, i]
        x2 = keys[b, j, head, half + i]
        rotated[b, j, head, i] = x1 * cos - x2 * sin
        rotated[b, j, head, half + i] = x2 * cos + x1 * sin


def solve(k_cache, v_cache, block_table, seq_lens, inv_freq):
    pages, page_size, heads, dim = k_cache.shape
    batch = block_table.shape[0]
    gathered = torch.empty(batch, KEEP, heads, dim, device=k_cache.device, dtype=k_cache.dtype)
    values = torch.empty_like(gathered)
    words = lambda t, *shape: t.contiguous().view(*shape, -1).view(torch.int64)  # noqa: E731
    seq_lens = seq_lens.contiguous()
    _gather[batch * KEEP, THREADS](words(k_cache, pages, page_size), words(v_cache, pages, page_size),
                                   block_table.contiguous(), seq_lens, words(gathered, batch, KEEP),
                                   words(values, batch, KEEP))
    rotated = torch.empty(gathered.shape, device=k_cache.device, dtype=torch.float32)
    _rerotate[batch * KEEP, THREADS](gathered.float(), seq_lens, inv_freq.float().contiguous(), rotated)
    return rotated.to(k_cache.dtype), values
