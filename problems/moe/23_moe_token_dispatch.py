"""MoE token dispatch: permute routed token copies into expert-sorted order with per-expert offsets (Qwen1.5-MoE-A2.7B)."""

import torch

# Qwen1.5-MoE-A2.7B dispatch for a prefill batch of 16384 tokens: hidden size 2048, 60 routed experts, 4 experts
# per token. Every (token, k) routing slot, flattened as slot = token * TOP_K + k, becomes one row of the grouped
# expert GEMM input. Outputs:
#   permuted_hidden [T * TOP_K, HIDDEN]  row r is hidden[sorted_slots[r] // TOP_K];
#   sorted_slots    [T * TOP_K] int32    the slots ordered by expert id; within one expert by ascending slot
#                                        (a stable sort of the flattened expert ids: the order is fully defined);
#   expert_offsets  [NUM_EXPERTS + 1] int32  expert e owns rows expert_offsets[e] .. expert_offsets[e + 1] - 1.
# Routing is skewed (some experts are popular) and each token picks TOP_K distinct experts.
NUM_TOKENS = 16384
HIDDEN = 2048
NUM_EXPERTS = 60
TOP_K = 4

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "scan", "routing"],
    "outliers": {"inputs": [0]},
}


def make_inputs(device="cuda"):
    hidden = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    popularity = torch.randn(NUM_EXPERTS, device=device) * 0.7
    router_logits = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + popularity
    topk_ids = router_logits.topk(TOP_K, dim=-1).indices.to(torch.int32)
    return [hidden, topk_ids]


def reference(hidden, topk_ids):
    flat_ids = topk_ids.reshape(-1).to(torch.long)
    sorted_slots = torch.sort(flat_ids, stable=True).indices  # expert-major, slot order within an expert
    counts = torch.bincount(flat_ids, minlength=NUM_EXPERTS)
    expert_offsets = torch.zeros(NUM_EXPERTS + 1, dtype=torch.long, device=hidden.device)
    expert_offsets[1:] = torch.cumsum(counts, dim=0)
    permuted_hidden = hidden[sorted_slots // TOP_K]
    return permuted_hidden, sorted_slots.to(torch.int32), expert_offsets.to(torch.int32)
