"""Triton solution for 64_qwen3_moe_decode: bucket the slots by expert, then per (expert, column tile) a gate/up GEMM with the SwiGLU epilogue and a down GEMM scaled by the routing weight (tl.dot on bf16, each weight tile read once per 16 slots), and a fixed-order combine."""

import torch
import triton
import triton.language as tl

BLOCK_M = 16
GATE_BLOCK_N = 64
DOWN_BLOCK_N = 64
BLOCK_K = 128


@triton.jit
def _bucket_kernel(ids_ptr, bucket_ptr, counts_ptr, slots, BLOCK: tl.constexpr):
    expert = tl.program_id(0)
    index = tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + index, mask=index < slots, other=-1)
    hit = (ids == expert).to(tl.int32)
    tl.store(bucket_ptr + expert * slots + tl.cumsum(hit, axis=0) - 1, index, mask=hit == 1)
    tl.store(counts_ptr + expert, tl.sum(hit, axis=0))


@triton.jit
def _gate_up_kernel(x_ptr, w13_ptr, bucket_ptr, counts_ptr, h_ptr, slots, hidden, intermediate,
                    TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    expert = tl.program_id(0)
    n0 = tl.program_id(1) * BLOCK_N
    count = tl.load(counts_ptr + expert)
    ns = n0 + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    gate_rows = (expert.to(tl.int64) * 2 * intermediate + ns) * hidden
    up_rows = gate_rows + intermediate * hidden
    for m0 in range(0, count, BLOCK_M):
        ms = m0 + tl.arange(0, BLOCK_M)
        row_ok = ms < count
        slot = tl.load(bucket_ptr + expert * slots + ms, mask=row_ok, other=0)
        x_rows = (slot // TOP_K).to(tl.int64) * hidden
        acc_gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        acc_up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, hidden, BLOCK_K):
            a = tl.load(x_ptr + x_rows[:, None] + k0 + ks[None, :], mask=row_ok[:, None], other=0.0)
            w_gate = tl.load(w13_ptr + gate_rows[:, None] + k0 + ks[None, :])
            w_up = tl.load(w13_ptr + up_rows[:, None] + k0 + ks[None, :])
            acc_gate = tl.dot(a, tl.trans(w_gate), acc_gate)
            acc_up = tl.dot(a, tl.trans(w_up), acc_up)
        h = acc_gate * tl.sigmoid(acc_gate) * acc_up
        tl.store(h_ptr + slot.to(tl.int64)[:, None] * intermediate + ns[None, :], h.to(h_ptr.dtype.element_ty),
                 mask=row_ok[:, None])


@triton.jit
def _down_kernel(h_ptr, w2_ptr, bucket_ptr, counts_ptr, weights_ptr, partial_ptr, slots, hidden, intermediate,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    expert = tl.program_id(0)
    n0 = tl.program_id(1) * BLOCK_N
    count = tl.load(counts_ptr + expert)
    ns = n0 + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    w_rows = (expert.to(tl.int64) * hidden + ns) * intermediate
    for m0 in range(0, count, BLOCK_M):
        ms = m0 + tl.arange(0, BLOCK_M)
        row_ok = ms < count
        slot = tl.load(bucket_ptr + expert * slots + ms, mask=row_ok, other=0)
        h_rows = slot.to(tl.int64) * intermediate
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, intermediate, BLOCK_K):
            a = tl.load(h_ptr + h_rows[:, None] + k0 + ks[None, :], mask=row_ok[:, None], other=0.0)
            w = tl.load(w2_ptr + w_rows[:, None] + k0 + ks[None, :])
            acc = tl.dot(a, tl.trans(w), acc)
        weight = tl.load(weights_ptr + slot, mask=row_ok, other=0.0)
        tl.store(partial_ptr + slot.to(tl.int64)[:, None] * hidden + ns[None, :], acc * weight[:, None],
                 mask=row_ok[:, None])


@triton.jit
def _combine_kernel(partial_ptr, out_ptr, hidden, TOP_K: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < hidden
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in tl.static_range(TOP_K):
        acc += tl.load(partial_ptr + (token * TOP_K + k) * hidden + columns, mask=mask, other=0.0)
    tl.store(out_ptr + token * hidden + columns, acc.to(out_ptr.dtype.element_ty), mask=mask)


def solve(x, w13, w2, topk_weights, topk_ids):
    x, w13, w2 = x.contiguous(), w13.contiguous(), w2.contiguous()
    topk_weights, topk_ids = topk_weights.contiguous(), topk_ids.contiguous()
    tokens, top_k = topk_ids.shape
    experts, _, hidden = w13.shape
    intermediate = w2.shape[2]
    slots = tokens * top_k
    device = x.device
    bucket = torch.empty(experts, slots, dtype=torch.int32, device=device)
    counts = torch.empty(experts, dtype=torch.int32, device=device)
    h = torch.empty(slots, intermediate, dtype=x.dtype, device=device)
    partial = torch.empty(slots, hidden, dtype=torch.float32, device=device)
    out = torch.empty(tokens, hidden, dtype=x.dtype, device=device)
    _bucket_kernel[(experts,)](topk_ids, bucket, counts, slots, BLOCK=triton.next_power_of_2(slots), num_warps=4)
    _gate_up_kernel[(experts, intermediate // GATE_BLOCK_N)](x, w13, bucket, counts, h, slots, hidden, intermediate,
                                                              TOP_K=top_k, BLOCK_M=BLOCK_M, BLOCK_N=GATE_BLOCK_N,
                                                              BLOCK_K=BLOCK_K, num_warps=4, num_stages=4)
    _down_kernel[(experts, hidden // DOWN_BLOCK_N)](h, w2, bucket, counts, topk_weights, partial, slots, hidden,
                                                    intermediate, BLOCK_M=BLOCK_M, BLOCK_N=DOWN_BLOCK_N,
                                                    BLOCK_K=BLOCK_K, num_warps=4, num_stages=4)
    _combine_kernel[(tokens,)](partial, out, hidden, TOP_K=top_k, BLOCK=triton.next_power_of_2(hidden), num_warps=8)
    return out
