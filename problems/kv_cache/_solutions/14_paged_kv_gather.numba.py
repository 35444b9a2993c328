"""numba-cuda solution for 14_paged_kv_gather: one block per output token finds its sequence in cu_seq_lens, its page
through the block table, and copies its key and value rows (heads x dim, as 64-bit words) out of the pool."""

import torch
from numba import cuda

THREADS = 128


@cuda.jit
def _gather(key_slots, value_slots, block_table, cu_seq_lens, keys, values, page_size):
    token = cuda.blockIdx.x
    sequence = 0
    while cu_seq_lens[sequence + 1] <= token:
        sequence += 1
    position = token - cu_seq_lens[sequence]
    slot = block_table[sequence, position // page_size] * page_size + position % page_size
    for i in range(cuda.threadIdx.x, keys.shape[1], cuda.blockDim.x):
        keys[token, i] = key_slots[slot, i]
        values[token, i] = value_slots[slot, i]


def solve(key_cache, value_cache, block_table, cu_seq_lens):
    pages, page_size, heads, dim = key_cache.shape
    total = int(cu_seq_lens[-1].item())
    keys = torch.empty(total, heads, dim, device=key_cache.device, dtype=key_cache.dtype)
    values = torch.empty_like(keys)
    slots = pages * page_size
    words = lambda t, rows: t.contiguous().view(rows, -1).view(torch.int64)  # noqa: E731
    _gather[total, THREADS](words(key_cache, slots), words(value_cache, slots), block_table.contiguous(),
                            cu_seq_lens.contiguous(), words(keys, total), words(values, total), page_size)
    return keys, values
