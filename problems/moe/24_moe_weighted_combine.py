"""MoE combine: weighted gather-sum of expert-sorted expert outputs back into token order (Qwen3-30B-A3B, top-8)."""

import torch

# Qwen3-30B-A3B combine for a prefill batch of 8192 tokens: hidden size 2048, 128 experts, 8 experts per token
# (norm_topk_prob: the 8 routing weights of a token sum to 1). The grouped expert GEMM wrote its outputs in
# expert-sorted order; positions[t, k] is the row of expert_outputs that holds token t's k-th expert result
# (a permutation of 0 .. T*8-1, as a stable sort by expert id produces). The output is
#   out[t] = sum_k routing_weights[t, k] * expert_outputs[positions[t, k]]     (summed in k order, fp32 or wider)
# cast to the expert outputs' dtype (bf16).
NUM_TOKENS = 8192
HIDDEN = 2048
NUM_EXPERTS = 128
TOP_K = 8

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "reduction", "routing"],
    "outliers": {"inputs": [0]},  # routing weights are probabilities; only the expert outputs may carry outliers
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    expert_outputs = torch.randn(NUM_TOKENS * TOP_K, HIDDEN, device=device, dtype=torch.bfloat16)
    popularity = torch.randn(NUM_EXPERTS, device=device) * 0.7
    router_logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + popularity
    top_logits, topk_ids = router_logits.topk(TOP_K, dim=-1)
    routing_weights = torch.softmax(top_logits, dim=-1)  # softmax renormalised over the top-k, fp32
    sorted_slots = torch.sort(topk_ids.reshape(-1), stable=True).indices
    positions = torch.empty_like(sorted_slots)
    positions[sorted_slots] = torch.arange(sorted_slots.numel(), device=device)
    return [expert_outputs, routing_weights, positions.view(NUM_TOKENS, TOP_K).to(torch.int32)]


def reference(expert_outputs, routing_weights, positions):
    rows = positions.to(torch.long)
    weights = _wide(routing_weights)
    out = torch.zeros(rows.shape[0], expert_outputs.shape[1], dtype=weights.dtype, device=expert_outputs.device)
    for k in range(rows.shape[1]):
        out = out + weights[:, k : k + 1] * _wide(expert_outputs[rows[:, k]])
    return out.to(expert_outputs.dtype)
