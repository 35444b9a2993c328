"""MoE combine backward: gradients of the expert outputs and of the routing weights (DeepSeek-V3, top-8, hidden 7168)."""

import torch

# DeepSeek-V3 (hidden 7168, 256 routed experts, 8 per token) trained on a 4096-token micro-batch. The forward
# combine was out[t] = sum_k routing_weights[t, k] * expert_outputs[positions[t, k]], where expert_outputs holds
# the grouped GEMM's results in expert-sorted order (positions is a permutation of 0 .. T*8-1, as a stable sort
# by expert id gives). Its backward, given grad_out [T, 7168] bf16:
#   grad_expert_outputs[positions[t, k]] = routing_weights[t, k] * grad_out[t]                bf16
#   grad_routing_weights[t, k]           = dot(grad_out[t], expert_outputs[positions[t, k]])  float32
# expert_outputs and its gradient take 470 MB each. Eager PyTorch (gather, multiply, scatter, dot per slot)
# makes some twenty passes over 60-470 MB: an estimated 2-3 ms on an H200.
NUM_TOKENS = 4096
HIDDEN = 7168
NUM_EXPERTS = 256
TOP_K = 8

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "reduction", "routing", "backward"],
    "outliers": {"inputs": [0, 1]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    grad_out = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    expert_outputs = torch.randn(NUM_TOKENS * TOP_K, HIDDEN, device=device, dtype=torch.bfloat16)
    bias = torch.randn(NUM_EXPERTS, device=device)
    scores = torch.sigmoid(torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + bias)
    top_scores, topk_ids = scores.topk(TOP_K, dim=-1)
    routing_weights = 2.5 * top_scores / top_scores.sum(dim=-1, keepdim=True)  # routed_scaling_factor 2.5
    sorted_slots = torch.sort(topk_ids.reshape(-1), stable=True).indices
    positions = torch.empty_like(sorted_slots)
    positions[sorted_slots] = torch.arange(sorted_slots.numel(), device=device)
    return [grad_out, expert_outputs, routing_weights, positions.view(NUM_TOKENS, TOP_K).to(torch.int32)]


def reference(grad_out, expert_outputs, routing_weights, positions):
    rows = positions.to(torch.long)
    dy = _wide(grad_out)
    weights = _wide(routing_weights)
    grad_expert = torch.empty(expert_outputs.shape, dtype=expert_outputs.dtype, device=expert_outputs.device)
    grad_weights = torch.empty(rows.shape, dtype=weights.dtype, device=weights.device)
    for k in range(rows.shape[1]):
        grad_expert[rows[:, k]] = (weights[:, k : k + 1] * dy).to(expert_outputs.dtype)
        grad_weights[:, k] = (dy * _wide(expert_outputs[rows[:, k]])).sum(dim=-1)
    return grad_expert, grad_weights.to(torch.float32)
