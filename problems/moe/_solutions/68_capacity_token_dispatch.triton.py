"""Triton solution for 68_capacity_token_dispatch: per-expert stable ranks by a chunked prefix sum, a program per token copying its kept slots, and a pass that zero-fills each expert's unused capacity."""

import torch
import triton
import triton.language as tl

NUM_EXPERTS = 8
RANK_CHUNK = 4096
PAD_ROWS = 16
COPY_COLUMNS = 1024


@triton.jit
def _rank_kernel(ids_ptr, rank_ptr, counts_ptr, slots, CHUNK: tl.constexpr):
    expert = tl.program_id(0)
    offsets = tl.arange(0, CHUNK)
    base = expert * 0
    for start in range(0, slots, CHUNK):
        index = start + offsets
        ids = tl.load(ids_ptr + index, mask=index < slots, other=-1)
        hit = (ids == expert).to(tl.int32)
        tl.store(rank_ptr + index, base + tl.cumsum(hit, axis=0) - 1, mask=hit == 1)
        base += tl.sum(hit, axis=0)
    tl.store(counts_ptr + expert, base)


@triton.jit
def _dispatch_kernel(x_ptr, ids_ptr, rank_ptr, dispatched_ptr, slot_of_ptr, hidden, capacity, TOP_K: tl.constexpr,
                     BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < hidden
    x = tl.load(x_ptr + token * hidden + columns, mask=mask)
    for k in tl.static_range(TOP_K):
        slot = token * TOP_K + k
        expert = tl.load(ids_ptr + slot)
        rank = tl.load(rank_ptr + slot)
        kept = rank < capacity
        destination = expert * capacity + rank
        tl.store(slot_of_ptr + slot, tl.where(kept, destination, -1))
        tl.store(dispatched_ptr + destination.to(tl.int64) * hidden + columns, x, mask=mask & kept)


@triton.jit
def _zero_fill_kernel(counts_ptr, dispatched_ptr, hidden, capacity, ROWS: tl.constexpr, COLUMNS: tl.constexpr):
    expert = tl.program_id(0)
    ranks = tl.program_id(1) * ROWS + tl.arange(0, ROWS)
    unused = (ranks >= tl.load(counts_ptr + expert)) & (ranks < capacity)
    rows = (expert * capacity + ranks).to(tl.int64)
    columns = tl.arange(0, COLUMNS)
    zeros = tl.zeros((ROWS, COLUMNS), dtype=dispatched_ptr.dtype.element_ty)
    for start in range(0, hidden, COLUMNS):
        tl.store(dispatched_ptr + rows[:, None] * hidden + start + columns[None, :], zeros,
                 mask=unused[:, None] & (start + columns < hidden)[None, :])


def solve(x, topk_ids):
    x, topk_ids = x.contiguous(), topk_ids.contiguous()
    tokens, top_k = topk_ids.shape
    hidden = x.shape[1]
    slots = tokens * top_k
    capacity = slots // NUM_EXPERTS
    device = x.device
    rank = torch.empty(slots, dtype=torch.int32, device=device)
    counts = torch.empty(NUM_EXPERTS, dtype=torch.int32, device=device)
    dispatched = torch.empty(NUM_EXPERTS, capacity, hidden, dtype=x.dtype, device=device)
    slot_of = torch.empty(tokens, top_k, dtype=torch.int32, device=device)
    _rank_kernel[(NUM_EXPERTS,)](topk_ids, rank, counts, slots, CHUNK=RANK_CHUNK, num_warps=8)
    _dispatch_kernel[(tokens,)](x, topk_ids, rank, dispatched, slot_of, hidden, capacity, TOP_K=top_k,
                                BLOCK=triton.next_power_of_2(hidden), num_warps=4)
    _zero_fill_kernel[(NUM_EXPERTS, triton.cdiv(capacity, PAD_ROWS))](counts, dispatched, hidden, capacity,
                                                                      ROWS=PAD_ROWS, COLUMNS=COPY_COLUMNS,
                                                                      num_warps=8)
    return dispatched, slot_of
