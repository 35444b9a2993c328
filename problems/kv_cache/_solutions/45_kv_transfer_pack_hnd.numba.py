"""numba-cuda solution for 45_kv_transfer_pack_hnd: one block per packed token finds its sequence in cu_seq_lens and
its page through the block table, and copies each head's key and value row out of the head-major pages (as 64-bit
words) into the token-major send buffer."""

import torch
from numba import cuda

THREADS = 256


@cuda.jit
def _pack(k_cache, v_cache, block_table, cu_seq_lens, send):
    token = cuda.blockIdx.x
    sequence = 0
    while cu_seq_lens[sequence + 1] <= token:
        sequence += 1
    page_size = k_cache.shape[2]
    position = token - cu_seq_lens[sequence]
    page = block_table[sequence, position // page_size]
    slot = position % page_size
    words = k_cache.shape[3]
    for index in range(cuda.threadIdx.x, k_cache.shape[1] * words, cuda.blockDim.x):
        head = index // words
        w = index % words
        send[0, token, head, w] = k_cache[page, head, slot, w]
        send[1, token, head, w] = v_cache[page, head, slot, w]


def solve(k_cache, v_cache, block_table, cu_seq_lens):
    pages, heads, page_size, dim = k_cache.shape
    total = int(cu_seq_lens[-1].item())
    send = torch.empty(2, total, heads, dim, device=k_cache.device, dtype=k_cache.dtype)
    _pack[total, THREADS](k_cache.contiguous().view(torch.int64), v_cache.contiguous().view(torch.int64),
                          block_table.contiguous(), cu_seq_lens.contiguous(), send.view(torch.int64))
    return send
