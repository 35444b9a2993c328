"""Triton solution for 66_moe_contiguous_layout_permute: per-expert stable ranks by a chunked prefix sum, segment starts by one prefix sum, then a scatter of each token's rows and a pass that zero-fills the padding rows."""

import torch
import triton
import triton.language as tl

ALIGN = 128
RANK_CHUNK = 4096
PAD_ROWS = 32
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
def _starts_kernel(counts_ptr, starts_ptr, EXPERTS: tl.constexpr, ALIGN: tl.constexpr):
    experts = tl.arange(0, EXPERTS)
    padded = (tl.load(counts_ptr + experts) + ALIGN - 1) // ALIGN * ALIGN
    tl.store(starts_ptr + experts, tl.cumsum(padded, axis=0) - padded)


@triton.jit
def _scatter_kernel(x_ptr, ids_ptr, rank_ptr, starts_ptr, permuted_ptr, m_indices_ptr, row_of_ptr, hidden,
                    TOP_K: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < hidden
    x = tl.load(x_ptr + token * hidden + columns, mask=mask)
    for k in tl.static_range(TOP_K):
        slot = token * TOP_K + k
        expert = tl.load(ids_ptr + slot)
        row = tl.load(starts_ptr + expert) + tl.load(rank_ptr + slot)
        tl.store(row_of_ptr + slot, row)
        tl.store(m_indices_ptr + row, expert)
        tl.store(permuted_ptr + row.to(tl.int64) * hidden + columns, x, mask=mask)


@triton.jit
def _pad_kernel(starts_ptr, counts_ptr, permuted_ptr, m_indices_ptr, capacity, hidden, EXPERTS: tl.constexpr,
                ROWS: tl.constexpr, COLUMNS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    in_range = rows < capacity
    starts = tl.load(starts_ptr + tl.arange(0, EXPERTS))
    # the segment a row falls in: the last expert whose start is <= row (empty segments share the next start)
    expert = tl.sum((starts[None, :] <= rows[:, None]).to(tl.int32), axis=1) - 1
    offset = rows - tl.load(starts_ptr + expert)
    padding = in_range & (offset >= tl.load(counts_ptr + expert))
    tl.store(m_indices_ptr + rows, tl.full((ROWS,), -1, tl.int32), mask=padding)
    columns = tl.arange(0, COLUMNS)
    zeros = tl.zeros((ROWS, COLUMNS), dtype=permuted_ptr.dtype.element_ty)
    for start in range(0, hidden, COLUMNS):
        offsets = rows[:, None].to(tl.int64) * hidden + start + columns[None, :]
        tl.store(permuted_ptr + offsets, zeros, mask=padding[:, None] & (start + columns < hidden)[None, :])


def solve(x, topk_ids):
    x, topk_ids = x.contiguous(), topk_ids.contiguous()
    tokens, top_k = topk_ids.shape
    hidden = x.shape[1]
    experts = 256  # DeepSeek-V3's routed experts
    slots = tokens * top_k
    capacity = slots + experts * (ALIGN - 1)
    device = x.device
    rank = torch.empty(slots, dtype=torch.int32, device=device)
    counts = torch.empty(experts, dtype=torch.int32, device=device)
    starts = torch.empty(experts, dtype=torch.int32, device=device)
    permuted = torch.empty(capacity, hidden, dtype=x.dtype, device=device)
    m_indices = torch.empty(capacity, dtype=torch.int32, device=device)
    row_of = torch.empty(tokens, top_k, dtype=torch.int32, device=device)
    _rank_kernel[(experts,)](topk_ids, rank, counts, slots, CHUNK=RANK_CHUNK, num_warps=8)
    _starts_kernel[(1,)](counts, starts, EXPERTS=experts, ALIGN=ALIGN, num_warps=4)
    _scatter_kernel[(tokens,)](x, topk_ids, rank, starts, permuted, m_indices, row_of, hidden, TOP_K=top_k,
                               BLOCK=triton.next_power_of_2(hidden), num_warps=8)
    _pad_kernel[(triton.cdiv(capacity, PAD_ROWS),)](starts, counts, permuted, m_indices, capacity, hidden,
                                                    EXPERTS=experts, ROWS=PAD_ROWS, COLUMNS=COPY_COLUMNS,
                                                    num_warps=8)
    return permuted, m_indices, row_of
