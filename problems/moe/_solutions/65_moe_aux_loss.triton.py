"""Triton solution for 65_moe_aux_loss: a program per 64 tokens computes softmax and top-8 and writes partial counts and probability sums; one program folds them in float64 into the loss."""

import torch
import triton
import triton.language as tl

TOP_K = 8
AUX_COEF = 0.001
ROWS = 64
FOLD_CHUNK = 32  # partial rows folded per step; the block count is a multiple of it


@triton.jit
def _partials_kernel(logits_ptr, counts_ptr, probs_ptr, EXPERTS: tl.constexpr, TOP_K: tl.constexpr,
                     ROWS: tl.constexpr):
    block = tl.program_id(0)
    rows = block.to(tl.int64) * ROWS + tl.arange(0, ROWS)
    experts = tl.arange(0, EXPERTS)
    x = tl.load(logits_ptr + rows[:, None] * EXPERTS + experts[None, :])
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = e / tl.sum(e, axis=1)[:, None]
    selected = tl.zeros((ROWS, EXPERTS), dtype=tl.int32)
    remaining = x
    for _ in tl.static_range(TOP_K):
        best = tl.max(remaining, axis=1)
        first = tl.min(tl.where(remaining == best[:, None], experts[None, :], EXPERTS), axis=1)
        hit = experts[None, :] == first[:, None]
        selected = tl.where(hit, 1, selected)
        remaining = tl.where(hit, -float("inf"), remaining)
    tl.store(counts_ptr + block * EXPERTS + experts, tl.sum(selected, axis=0))
    tl.store(probs_ptr + block * EXPERTS + experts, tl.sum(p, axis=0))


@triton.jit
def _fold_kernel(counts_ptr, probs_ptr, loss_ptr, blocks, tokens, coef, EXPERTS: tl.constexpr, TOP_K: tl.constexpr,
                 CHUNK: tl.constexpr):
    experts = tl.arange(0, EXPERTS)
    chunk = tl.arange(0, CHUNK)
    count = tl.zeros((EXPERTS,), dtype=tl.float64)
    prob = tl.zeros((EXPERTS,), dtype=tl.float64)
    for b0 in range(0, blocks, CHUNK):
        offsets = (b0 + chunk)[:, None] * EXPERTS + experts[None, :]
        count += tl.sum(tl.load(counts_ptr + offsets).to(tl.float64), axis=0)
        prob += tl.sum(tl.load(probs_ptr + offsets).to(tl.float64), axis=0)
    total = tl.sum((count / (tokens * TOP_K)) * (prob / tokens), axis=0)
    tl.store(loss_ptr, (coef * EXPERTS * total).to(tl.float32))


def solve(logits):
    logits = logits.contiguous()
    tokens, experts = logits.shape
    blocks = tokens // ROWS  # 524288 / 64 = 8192
    counts = torch.empty(blocks, experts, dtype=torch.int32, device=logits.device)
    probs = torch.empty(blocks, experts, dtype=torch.float32, device=logits.device)
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    _partials_kernel[(blocks,)](logits, counts, probs, EXPERTS=experts, TOP_K=TOP_K, ROWS=ROWS, num_warps=4)
    _fold_kernel[(1,)](counts, probs, loss, blocks, tokens, AUX_COEF, EXPERTS=experts, TOP_K=TOP_K, CHUNK=FOLD_CHUNK,
                       num_warps=8)
    return loss
