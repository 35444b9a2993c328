"""numba-cuda solution for 23_moe_token_dispatch: a counting sort. One block per expert ranks its slots in slot order
(a block-wide prefix sum), one thread turns the counts into expert offsets, and one block per slot writes its place
in the expert-sorted order and copies its token's hidden row there (as 64-bit words)."""

import torch
from numba import cuda, int32

THREADS = 1024
TOP_K = 4
NUM_EXPERTS = 60


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
def _offsets(counts, offsets):
    if cuda.grid(1) == 0:
        total = 0
        offsets[0] = 0
        for expert in range(counts.shape[0]):
            total += counts[expert]
            offsets[expert + 1] = total


@cuda.jit
def _place(ids, ranks, offsets, hidden_words, sorted_slots, permuted_words):
    slot = cuda.blockIdx.x
    row = offsets[ids[slot]] + ranks[slot]
    if cuda.threadIdx.x == 0:
        sorted_slots[row] = slot
    token = slot // TOP_K
    for i in range(cuda.threadIdx.x, hidden_words.shape[1], cuda.blockDim.x):
        permuted_words[row, i] = hidden_words[token, i]


def solve(hidden, topk_ids):
    tokens, top_k = topk_ids.shape
    assert top_k == TOP_K
    experts = NUM_EXPERTS
    slots = tokens * top_k
    device = hidden.device
    ids = topk_ids.contiguous().view(slots)
    ranks = torch.empty(slots, device=device, dtype=torch.int32)
    counts = torch.empty(experts, device=device, dtype=torch.int32)
    offsets = torch.empty(experts + 1, device=device, dtype=torch.int32)
    sorted_slots = torch.empty(slots, device=device, dtype=torch.int32)
    permuted = torch.empty(slots, hidden.shape[1], device=device, dtype=hidden.dtype)
    _rank_within_expert[experts, THREADS](ids, ranks, counts)
    _offsets[1, 1](counts, offsets)
    _place[slots, 128](ids, ranks, offsets, hidden.contiguous().view(torch.int64), sorted_slots,
                       permuted.view(torch.int64))
    return permuted, sorted_slots, offsets
