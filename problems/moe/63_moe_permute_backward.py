"""MoE token-permute backward: each token's gradient is the sum of its 8 expert-sorted copies (Qwen3-30B-A3B)."""

import torch

# Qwen3-30B-A3B (hidden 2048, 128 experts, 8 per token) in training, 16384 tokens per micro-batch. The forward
# dispatch copied token t into rows positions[t, k] of the expert-sorted activations (a permutation of
# 0 .. T*8-1, the stable sort by expert id). Its backward sums the copies' gradients back:
#   grad_x[t] = sum_k grad_permuted[positions[t, k]]          summed in k order in float32 or wider, bf16 out
# grad_permuted takes 537 MB. Eager PyTorch gathers it, casts to float32 and reduces: an estimated 1.2-1.6 ms on
# an H200.
NUM_TOKENS = 16384
HIDDEN = 2048
NUM_EXPERTS = 128
TOP_K = 8

MKB_META = {
    "category": "Reduce",
    "tags": ["gather_scatter", "reduction", "routing", "backward"],
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    grad_permuted = torch.randn(NUM_TOKENS * TOP_K, HIDDEN, device=device, dtype=torch.bfloat16)
    popularity = torch.randn(NUM_EXPERTS, device=device) * 0.7
    topk_ids = (torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + popularity).topk(TOP_K, dim=-1).indices
    sorted_slots = torch.sort(topk_ids.reshape(-1), stable=True).indices
    positions = torch.empty_like(sorted_slots)
    positions[sorted_slots] = torch.arange(sorted_slots.numel(), device=device)
    return [grad_permuted, positions.view(NUM_TOKENS, TOP_K).to(torch.int32)]


def reference(grad_permuted, positions):
    rows = positions.to(torch.long)
    total = _wide(grad_permuted[rows[:, 0]])
    for k in range(1, rows.shape[1]):
        total = total + _wide(grad_permuted[rows[:, k]])
    return total.to(grad_permuted.dtype)
