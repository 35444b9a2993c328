"""Triton solution for 58_cross_entropy_fwd_bwd: a program per token reads its logits twice (online max and sum, then the gradient); the counted tokens and the mean loss come from two one-program kernels."""

import torch
import triton
import triton.language as tl

IGNORE_INDEX = -100
CHUNK = 4096


@triton.jit
def _count_kernel(labels_ptr, count_ptr, tokens, ignore_index, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    labels = tl.load(labels_ptr + offsets, mask=offsets < tokens, other=ignore_index)
    tl.store(count_ptr, tl.sum((labels != ignore_index).to(tl.int32), axis=0))


@triton.jit
def _row_kernel(logits_ptr, labels_ptr, count_ptr, row_loss_ptr, grad_ptr, vocab, ignore_index,
                CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * vocab
    label = tl.load(labels_ptr + row)
    counted = label != ignore_index
    count = tl.maximum(tl.load(count_ptr), 1).to(tl.float32)
    columns = tl.arange(0, CHUNK)
    # per-lane online (max, sum); vocab > CHUNK, so every lane holds a finite max after the first chunk
    lane_max = tl.full((CHUNK,), -float("inf"), tl.float32)
    lane_sum = tl.zeros((CHUNK,), dtype=tl.float32)
    for start in range(0, vocab, CHUNK):
        mask = start + columns < vocab
        x = tl.load(logits_ptr + base + start + columns, mask=mask, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(lane_max, x)
        lane_sum = lane_sum * tl.exp(lane_max - new_max) + tl.exp(x - new_max)
        lane_max = new_max
    row_max = tl.max(lane_max, axis=0)
    log_z = row_max + tl.log(tl.sum(lane_sum * tl.exp(lane_max - row_max), axis=0))
    safe_label = tl.where(counted, label, 0)
    picked = tl.load(logits_ptr + base + safe_label).to(tl.float32)
    tl.store(row_loss_ptr + row, tl.where(counted, log_z - picked, 0.0))
    scale = tl.where(counted, 1.0 / count, 0.0)
    for start in range(0, vocab, CHUNK):
        idx = start + columns
        mask = idx < vocab
        x = tl.load(logits_ptr + base + idx, mask=mask, other=0.0).to(tl.float32)
        g = tl.exp(x - log_z) - tl.where(idx == safe_label, 1.0, 0.0)
        tl.store(grad_ptr + base + idx, (g * scale).to(grad_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _mean_kernel(row_loss_ptr, count_ptr, loss_ptr, tokens, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    losses = tl.load(row_loss_ptr + offsets, mask=offsets < tokens, other=0.0)
    count = tl.maximum(tl.load(count_ptr), 1).to(tl.float32)
    tl.store(loss_ptr, tl.sum(losses, axis=0) / count)


def solve(logits, labels):
    logits, labels = logits.contiguous(), labels.contiguous()
    tokens, vocab = logits.shape
    block = triton.next_power_of_2(tokens)
    count = torch.empty(1, dtype=torch.int32, device=logits.device)
    row_loss = torch.empty(tokens, dtype=torch.float32, device=logits.device)
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    grad = torch.empty_like(logits)
    _count_kernel[(1,)](labels, count, tokens, IGNORE_INDEX, BLOCK=block, num_warps=4)
    _row_kernel[(tokens,)](logits, labels, count, row_loss, grad, vocab, IGNORE_INDEX, CHUNK=CHUNK, num_warps=8)
    _mean_kernel[(1,)](row_loss, count, loss, tokens, BLOCK=block, num_warps=4)
    return loss, grad
