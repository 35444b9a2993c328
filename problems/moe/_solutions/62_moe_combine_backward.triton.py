"""Triton solution for 62_moe_combine_backward: a program per token reads grad_out once and, for each of its 8 slots, scatters the weighted gradient and reduces the dot product with the expert output."""

import torch
import triton
import triton.language as tl


@triton.jit
def _combine_backward_kernel(dy_ptr, expert_ptr, weights_ptr, positions_ptr, grad_expert_ptr, grad_weights_ptr,
                             hidden, TOP_K: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < hidden
    dy = tl.load(dy_ptr + token * hidden + columns, mask=mask, other=0.0).to(tl.float32)
    for k in tl.static_range(TOP_K):
        slot = token * TOP_K + k
        row = tl.load(positions_ptr + slot).to(tl.int64)
        weight = tl.load(weights_ptr + slot)
        tl.store(grad_expert_ptr + row * hidden + columns, (weight * dy).to(grad_expert_ptr.dtype.element_ty),
                 mask=mask)
        expert = tl.load(expert_ptr + row * hidden + columns, mask=mask, other=0.0).to(tl.float32)
        tl.store(grad_weights_ptr + slot, tl.sum(dy * expert, axis=0))


def solve(grad_out, expert_outputs, routing_weights, positions):
    grad_out, expert_outputs = grad_out.contiguous(), expert_outputs.contiguous()
    routing_weights, positions = routing_weights.contiguous(), positions.contiguous()
    tokens, hidden = grad_out.shape
    top_k = positions.shape[1]
    grad_expert = torch.empty_like(expert_outputs)
    grad_weights = torch.empty(tokens, top_k, dtype=torch.float32, device=grad_out.device)
    _combine_backward_kernel[(tokens,)](grad_out, expert_outputs, routing_weights, positions, grad_expert,
                                        grad_weights, hidden, TOP_K=top_k, BLOCK=triton.next_power_of_2(hidden),
                                        num_warps=8)
    return grad_expert, grad_weights
