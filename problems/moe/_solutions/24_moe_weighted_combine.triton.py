"""Triton solution for the MoE combine: each program gathers its tokens' expert rows and sums them with their weights in fp32."""

import torch
import triton
import triton.language as tl

BLOCK_T = 4  # tokens per program
BLOCK_H = 1024  # hidden features per program


@triton.jit
def _combine_kernel(expert_ptr, weights_ptr, positions_ptr, out_ptr, num_tokens, hidden_size,
                    TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr):
    tokens = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    token_ok = tokens < num_tokens
    mask = token_ok[:, None] & (cols < hidden_size)[None, :]
    acc = tl.zeros((BLOCK_T, BLOCK_H), dtype=tl.float32)
    for k in tl.static_range(TOP_K):  # same k order as the reference
        row = tl.load(positions_ptr + tokens * TOP_K + k, mask=token_ok, other=0)
        weight = tl.load(weights_ptr + tokens * TOP_K + k, mask=token_ok, other=0.0).to(tl.float32)
        values = tl.load(expert_ptr + row[:, None].to(tl.int64) * hidden_size + cols[None, :], mask=mask, other=0.0)
        acc += weight[:, None] * values.to(tl.float32)
    tl.store(out_ptr + tokens[:, None].to(tl.int64) * hidden_size + cols[None, :],
             acc.to(out_ptr.dtype.element_ty), mask=mask)


def solve(expert_outputs, routing_weights, positions):
    expert_outputs = expert_outputs.contiguous()
    routing_weights = routing_weights.contiguous()
    positions = positions.contiguous()
    num_tokens, top_k = positions.shape
    hidden_size = expert_outputs.shape[1]
    out = torch.empty(num_tokens, hidden_size, dtype=expert_outputs.dtype, device=expert_outputs.device)
    grid = (triton.cdiv(num_tokens, BLOCK_T), triton.cdiv(hidden_size, BLOCK_H))
    _combine_kernel[grid](expert_outputs, routing_weights, positions, out, num_tokens, hidden_size,
                          TOP_K=top_k, BLOCK_T=BLOCK_T, BLOCK_H=BLOCK_H, num_warps=4)
    return out
