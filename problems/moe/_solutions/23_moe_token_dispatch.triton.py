"""Triton solution for MoE token dispatch: per-chunk expert histograms, one scan, stable in-chunk ranks, then a row gather."""

import torch
import triton
import triton.language as tl

TOP_K = 4
NUM_EXPERTS = 60
EXPERTS_PAD = 64  # experts padded to a power of two
CHUNK = 256  # routing slots per chunk (one program each in the histogram and rank passes)
COPY_ROWS = 8  # permuted rows per program in the gather
COPY_COLS = 512  # hidden features per step of the gather


@triton.jit
def _chunk_histogram_kernel(ids_ptr, counts_ptr, num_slots, EXPERTS_PAD: tl.constexpr, CHUNK: tl.constexpr):
    chunk = tl.program_id(0)
    slots = chunk * CHUNK + tl.arange(0, CHUNK)
    ids = tl.load(ids_ptr + slots, mask=slots < num_slots, other=-1)
    experts = tl.arange(0, EXPERTS_PAD)
    one_hot = (ids[:, None] == experts[None, :]).to(tl.int32)
    tl.store(counts_ptr + chunk * EXPERTS_PAD + experts, tl.sum(one_hot, axis=0))


@triton.jit
def _scan_kernel(counts_ptr, bases_ptr, offsets_ptr, num_chunks, num_experts,
                 EXPERTS_PAD: tl.constexpr, CHUNKS_PAD: tl.constexpr):
    chunks = tl.arange(0, CHUNKS_PAD)
    experts = tl.arange(0, EXPERTS_PAD)
    grid_offsets = chunks[:, None] * EXPERTS_PAD + experts[None, :]
    counts = tl.load(counts_ptr + grid_offsets, mask=chunks[:, None] < num_chunks, other=0)
    totals = tl.sum(counts, axis=0)  # [EXPERTS_PAD]
    expert_starts = tl.cumsum(totals, axis=0) - totals  # exclusive scan over experts
    chunk_starts = tl.cumsum(counts, axis=0) - counts  # exclusive scan over chunks, per expert
    tl.store(bases_ptr + grid_offsets, expert_starts[None, :] + chunk_starts, mask=chunks[:, None] < num_chunks)
    tl.store(offsets_ptr + experts, expert_starts, mask=experts < num_experts)
    tl.store(offsets_ptr + num_experts + experts * 0, tl.sum(totals, axis=0) + experts * 0, mask=experts == 0)


@triton.jit
def _rank_kernel(ids_ptr, bases_ptr, sorted_ptr, num_slots, EXPERTS_PAD: tl.constexpr, CHUNK: tl.constexpr):
    chunk = tl.program_id(0)
    slots = chunk * CHUNK + tl.arange(0, CHUNK)
    slot_ok = slots < num_slots
    ids = tl.load(ids_ptr + slots, mask=slot_ok, other=-1)
    experts = tl.arange(0, EXPERTS_PAD)
    one_hot = ids[:, None] == experts[None, :]
    running = tl.cumsum(one_hot.to(tl.int32), axis=0)  # inclusive count of same-expert slots up to each slot
    rank = tl.sum(tl.where(one_hot, running, 0), axis=1) - 1
    bases = tl.load(bases_ptr + chunk * EXPERTS_PAD + experts)
    base = tl.sum(tl.where(one_hot, bases[None, :], 0), axis=1)
    tl.store(sorted_ptr + base + rank, slots, mask=slot_ok)


@triton.jit
def _gather_rows_kernel(hidden_ptr, sorted_ptr, out_ptr, num_rows, hidden_size, TOP_K: tl.constexpr,
                        ROWS: tl.constexpr, COLS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < num_rows
    tokens = tl.load(sorted_ptr + rows, mask=row_ok, other=0) // TOP_K
    cols = tl.arange(0, COLS)
    source = hidden_ptr + tokens[:, None].to(tl.int64) * hidden_size
    target = out_ptr + rows[:, None].to(tl.int64) * hidden_size
    for start in range(0, hidden_size, COLS):
        mask = row_ok[:, None] & ((start + cols) < hidden_size)[None, :]
        values = tl.load(source + (start + cols)[None, :], mask=mask)
        tl.store(target + (start + cols)[None, :], values, mask=mask)


def solve(hidden, topk_ids):
    hidden = hidden.contiguous()
    ids = topk_ids.contiguous().view(-1)
    num_slots = ids.numel()
    hidden_size = hidden.shape[1]
    device = hidden.device
    num_chunks = triton.cdiv(num_slots, CHUNK)
    counts = torch.empty(num_chunks, EXPERTS_PAD, dtype=torch.int32, device=device)
    bases = torch.empty(num_chunks, EXPERTS_PAD, dtype=torch.int32, device=device)
    offsets = torch.empty(NUM_EXPERTS + 1, dtype=torch.int32, device=device)
    sorted_slots = torch.empty(num_slots, dtype=torch.int32, device=device)
    permuted = torch.empty(num_slots, hidden_size, dtype=hidden.dtype, device=device)
    _chunk_histogram_kernel[(num_chunks,)](ids, counts, num_slots, EXPERTS_PAD=EXPERTS_PAD, CHUNK=CHUNK,
                                           num_warps=4)
    _scan_kernel[(1,)](counts, bases, offsets, num_chunks, NUM_EXPERTS, EXPERTS_PAD=EXPERTS_PAD,
                       CHUNKS_PAD=triton.next_power_of_2(num_chunks), num_warps=8)
    _rank_kernel[(num_chunks,)](ids, bases, sorted_slots, num_slots, EXPERTS_PAD=EXPERTS_PAD, CHUNK=CHUNK,
                                num_warps=4)
    _gather_rows_kernel[(triton.cdiv(num_slots, COPY_ROWS),)](hidden, sorted_slots, permuted, num_slots,
                                                             hidden_size, TOP_K=TOP_K, ROWS=COPY_ROWS,
                                                             COLS=COPY_COLS, num_warps=4)
    return permuted, sorted_slots, offsets
