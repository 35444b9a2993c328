"""numba-cuda solution for 68_capacity_token_dispatch: one block per expert ranks its slots in slot order (a
block-wide prefix sum); one block per slot keeps it when its rank is below the capacity, records its packed slot (or
-1) and copies its token's row there (as 64-bit words) into the zero-filled dispatch buffer."""

import torch
from numba import cuda, int32

THREADS = 1024
NUM_EXPERTS = 8


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
def _place(ids, ranks, x_words, top_k, capacity, slot_of, dispatched_words):
    slot = cuda.blockIdx.x
    rank = ranks[slot]
    kept = rank < capacity
    target = ids[slot] * capacity + rank
    if cuda.threadIdx.x == 0:
        slot_of[slot] = target if kept else -1
    if kept:
        token = slot // top_k
        for i in range(cuda.threadIdx.x, x_words.shape[1], cuda.blockDim.x):
            dispatched_words[target, i] = x_words[token, i]


def solve(x, topk_ids):
    tokens, top_k = topk_ids.shape
    slots = tokens * top_k
    capacity = tokens * top_k // NUM_EXPERTS
    device = x.device
    ids = topk_ids.contiguous().view(slots)
    ranks = torch.empty(slots, device=device, dtype=torch.int32)
    counts = torch.empty(NUM_EXPERTS, device=device, dtype=torch.int32)
    slot_of = torch.empty(slots, device=device, dtype=torch.int32)
    dispatched = torch.zeros(NUM_EXPERTS * capacity, x.shape[1], device=device, dtype=x.dtype)
    _rank_within_expert[NUM_EXPERTS, THREADS](ids, ranks, counts)
    _place[slots, 128](ids, ranks, x.contiguous().view(torch.int64), top_k, capacity, slot_of,
                       dispatched.view(torch.int64))
    return dispatched.view(NUM_EXPERTS, capacity, x.shape[1]), slot_of.view(tokens, top_k)
