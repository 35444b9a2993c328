"""numba-cuda solution for 66_moe_contiguous_layout_permute: one block per expert ranks its slots in slot order (a
block-wide prefix sum); one thread turns the counts into starts of 128-row-aligned segments; one block per slot
writes its row, the row's expert id and copies its token's row there (as 64-bit words) into the zero-filled buffer
(rows past a segment's count stay zero, with expert id -1)."""

import torch
from numba import cuda, int32

THREADS = 1024
NUM_EXPERTS = 256
ALIGN = 128


@cuda.jit
def _rank_within_expert(ids, ranks, counts):
    """One block per expert walks the slots in order; a block-wide prefix sum of 'is mine' flags gives each of its
    slots its stable rank, and the last running total is the expert's count."""
    expert = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    scan = cuda.shared.array(THREADS, int32)
    base = 0
    for start in range(0, ids.shape[0], THREADS):
        slot = start + tid
        flag = 1 if slot < ids.shape[0] and ids[slot] == expert else 0
        scan[tid] = flag
        cuda.syncthreads()
        offset = 1
        while offset < THREADS:
            value = scan[tid - offset] if tid >= offset else 0
            cuda.syncthreads()
            scan[tid] += value
            cuda.syncthreads()
            offset *= 2
        if flag == 1:
            ranks[slot] = base + scan[tid] - 1
        base += scan[THREADS - 1]
        cuda.syncthreads()
    if tid == 0:
        counts[expert] = base


@cuda.jit
def _segment_starts(counts, starts):
    if cuda.grid(1) == 0:
        total = 0
        for expert in range(counts.shape[0]):
            starts[expert] = total
            total += (counts[expert] + ALIGN - 1) // ALIGN * ALIGN


@cuda.jit
def _place(ids, ranks, starts, x_words, top_k, row_of, m_indices, permuted_words):
    slot = cuda.blockIdx.x
    expert = ids[slot]
    row = starts[expert] + ranks[slot]
    if cuda.threadIdx.x == 0:
        row_of[slot] = row
        m_indices[row] = expert
    token = slot // top_k
    for i in range(cuda.threadIdx.x, x_words.shape[1], cuda.blockDim.x):
        permuted_words[row, i] = x_words[token, i]


def solve(x, topk_ids):
    tokens, top_k = topk_ids.shape
    slots = tokens * top_k
    capacity = slots + NUM_EXPERTS * (ALIGN - 1)
    device = x.device
    ids = topk_ids.contiguous().view(slots)
    ranks = torch.empty(slots, device=device, dtype=torch.int32)
    counts = torch.empty(NUM_EXPERTS, device=device, dtype=torch.int32)
    starts = torch.empty(NUM_EXPERTS, device=device, dtype=torch.int32)
    row_of = torch.empty(slots, device=device, dtype=torch.int32)
    m_indices = torch.full((capacity,), -1, device=device, dtype=torch.int32)
    permuted = torch.zeros(capacity, x.shape[1], device=device, dtype=x.dtype)
    _rank_within_expert[NUM_EXPERTS, THREADS](ids, ranks, counts)
    _segment_starts[1, 1](counts, starts)
    _place[slots, 128](ids, ranks, starts, x.contiguous().view(torch.int64), top_k, row_of, m_indices,
                       permuted.view(torch.int64))
    return permuted, m_indices, row_of.view(tokens, top_k)
